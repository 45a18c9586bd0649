"""Hypothesis strategies that break valid objects the ways users and stale caches do.

A mutation picks a node anywhere in an object and replaces it with a value of the wrong type, an
out-of-range or fractional number, a bad name, an illegal label key, an unknown role or pool; or
deletes a field, adds an unknown one, duplicates or empties a list. Objects stay JSON-shaped, so
every mutant can travel through a protobuf Struct as Crossplane would send it.
"""

import copy
from typing import Any, cast

from hypothesis import strategies as st

Path = tuple[str | int, ...]

NUMBERS = st.sampled_from([-1, 0, 1.5, 0.1, -0.5, 65, 10**6, 2**31, 2**53, 2**63, 1e300, -1e300])
NAMES = st.sampled_from(["", "UPPER", "bad_name", "a" * 300, "-lead", "trail-", "../x", "ü", "a b", "0" * 64])
LABEL_KEYS = st.sampled_from(["Bad Key!", "modelplane.ai/reserved", "a/b/c", "x" * 64, "/x", "example.com/", ""])
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(-3, 3), max_size=2),
    NUMBERS,
    NAMES,
)
ROLES = st.sampled_from(["Boss", "leader", "", "Standalone ", "Worker\n"])


def paths(obj: Any, prefix: Path = ()) -> list[Path]:
    """Every node's path (the root excluded), depth first."""
    out: list[Path] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((*prefix, k))
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.append((*prefix, i))
            out.extend(paths(v, (*prefix, i)))
    return out


def _parent(obj: Any, path: Path) -> Any:
    for part in path[:-1]:
        obj = obj[part]
    return obj


@st.composite
def mutation(draw: st.DrawFn, obj: Any) -> tuple[str, Any]:
    """(what was done, the mutated copy of `obj`)."""
    out = copy.deepcopy(obj)
    candidates = paths(out)
    path = draw(st.sampled_from(candidates))
    parent, key = _parent(out, path), path[-1]
    current: Any = parent[key]
    ops = ["junk", "delete", "extra"]
    if isinstance(key, str) and key in {"replicas", "copies", "count", "nodes", "index", "tensor", "pipeline"}:
        ops += ["number"] * 4
    if key in {"name", "namespace", "clusterName", "nodePoolName", "deviceClassName", "driver"}:
        ops += ["name"] * 3
    if key == "role":
        ops += ["role"] * 3
    if key == "labels" and isinstance(current, dict):
        ops += ["label"] * 3
    if isinstance(current, list) and current:
        ops += ["duplicate", "empty"]
    op = draw(st.sampled_from(ops))
    where = "/".join(str(p) for p in path)
    match op:
        case "junk":
            parent[key] = draw(JUNK)
        case "delete":
            del parent[key]  # a list item or a field
        case "extra":
            target = current if isinstance(current, dict) else parent if isinstance(parent, dict) else None
            if target is None:
                parent[key] = {"unexpected": 1}
            else:
                target[draw(st.sampled_from(["unexpected", "Extra", "x-y"]))] = draw(JUNK)
        case "number":
            parent[key] = draw(NUMBERS)
        case "name":
            parent[key] = draw(NAMES)
        case "role":
            parent[key] = draw(ROLES)
        case "label":
            cast("dict[str, Any]", current)[draw(LABEL_KEYS)] = draw(st.sampled_from(["v", "", "bad value!", "x" * 64]))
        case "duplicate":
            items = cast("list[Any]", current)
            items.append(copy.deepcopy(items[draw(st.integers(0, len(items) - 1))]))
        case "empty":
            current.clear()
    return f"{op} {where}", out


@st.composite
def mutations(draw: st.DrawFn, obj: Any, *, most: int = 3) -> tuple[list[str], Any]:
    """One to `most` mutations applied in turn."""
    done: list[str] = []
    for _ in range(draw(st.integers(1, most))):
        if not paths(obj):
            break
        what, obj = draw(mutation(obj))
        done.append(what)
    return done, obj
