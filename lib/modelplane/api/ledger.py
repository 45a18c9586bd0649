"""Other deployments' ModelReplicas, read for the capacity ledger only.

The scheduler charges another deployment's replica at `node_cost_by_pool()`, and the fleet view
shows it by engine and pool; neither reads its pod templates, model, serving, scheduling or
status, which are most of the object and most of the cost of `parse_replica`. `parse_ledger_replica`
reads only `LEDGER_FIELDS` and checks them with the rules and messages of `parse_replica`; the
fields it does not read are neither checked nor kept (templates empty, not ready, no model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, cast

from modelplane import model as m
from modelplane.api.deployment import DNS_LABEL, check_member_roles, metadata
from modelplane.api.replica import MACHINERY_PREFIXES, owner, replica_index
from modelplane.errors import SpecError
from modelplane.names import LABEL_CLUSTER, LABEL_REPLICA_INDEX

# What is read, as nested field names; None takes the whole value. A mapping applies to an object,
# or to each item of a list. ENGINE_FIELDS apply to each item of spec.engines.
Fields = Mapping[str, "Fields | None"]
ENGINE_FIELDS: Fields = {
    "name": None,
    "copies": None,
    "members": {"role": None, "worker": None, "nodePoolName": None, "deviceRequests": None},
}
# spec.replacing: what superseded LLMInferenceServices hold while a rename runs both (charged too);
# spec.scheduling.exclusiveNodes: its pods hold whole nodes of shared pools (charged so)
IDENTITY_FIELDS: Fields = {
    "metadata": {"name": None, "namespace": None, "labels": None},
    "spec": {"clusterName": None, "replacing": {"engines": ENGINE_FIELDS}, "scheduling": {"exclusiveNodes": None}},
}
LEDGER_FIELDS: Fields = {
    **IDENTITY_FIELDS,
    "spec": {
        "clusterName": None,
        "engines": ENGINE_FIELDS,
        "replacing": {"engines": ENGINE_FIELDS},
        "scheduling": {"exclusiveNodes": None},
    },
}

_DNS = re.compile(DNS_LABEL)
_ROLES = ("Standalone", "Leader", "Worker")
_MISSING: Any = object()


def _fail(path: str, problem: str) -> NoReturn:
    msg = f"{path}: {problem}"
    raise SpecError(msg)


def _object(value: object, path: str, model: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        _fail(path, f"Input should be a valid dictionary or instance of {model}")
    return value  # pyright: ignore[reportUnknownVariableType]


def _string(value: object, path: str, *, most: int | None = None, pattern: re.Pattern[str] | None = None) -> str:
    if value is _MISSING:
        _fail(path, "Field required")
    if not isinstance(value, str):
        _fail(path, "Input should be a valid string")
    if not value:
        _fail(path, "String should have at least 1 character")
    if most is not None and len(value) > most:
        _fail(path, f"String should have at most {most} characters")
    if pattern is not None and not pattern.match(value):
        _fail(path, f"String should match pattern '{pattern.pattern}'")
    return value


def _int(value: object, path: str, *, least: int, most: int) -> int:
    """An `Int`/`Count` of the wire models: integral numbers only, within [least, most]."""
    if isinstance(value, float):
        if not value.is_integer():
            _fail(path, f"must be a whole number, got {value}")
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        _fail(path, "Input should be a valid integer")
    if value < least:
        _fail(path, f"Input should be greater than or equal to {least}")
    if value > most:
        _fail(path, f"Input should be less than or equal to {most}")
    return value


def _items(value: object, path: str, *, least: int, most: int) -> Sequence[Any]:
    if value is _MISSING:
        _fail(path, "Field required")
    if not isinstance(value, list | tuple):
        _fail(path, "Input should be a valid tuple")
    items = cast("Sequence[Any]", value)
    n = len(items)
    if n < least:
        _fail(path, f"Tuple should have at least {least} item{'s' if least != 1 else ''}, not {n}")
    if n > most:
        _fail(path, f"Tuple should have at most {most} items, not {n}")
    return items


def _unique(what: str, names: list[str], path: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        _fail(path, f"{what} must be unique, repeated: {', '.join(repeated)}")


def _device_request(obj: object, path: str) -> m.ResolvedDeviceRequest:
    r = _object(obj, path, "ResolvedDeviceRequest")
    name = _string(r.get("name", _MISSING), f"{path}.name", most=63, pattern=_DNS)
    device_class = _string(r.get("deviceClassName", _MISSING), f"{path}.deviceClassName", most=253)
    count = r.get("count")
    count = 1 if count is None else _int(count, f"{path}.count", least=1, most=64)
    selectors = r.get("selectors")
    expressions: list[str] = []
    if selectors is not None:
        for i, s in enumerate(_items(selectors, f"{path}.selectors", least=0, most=8)):
            where = f"{path}.selectors[{i}]"
            cel = _object(s, where, "ResolvedSelector").get("cel", _MISSING)
            if cel is _MISSING:
                _fail(f"{where}.cel", "Field required")
            if isinstance(cel, str):  # Modelplane's replicas: `cel: <string>`
                expressions.append(_string(cel, f"{where}.cel"))
                continue
            cel = _object(cel, f"{where}.cel", "CelExpression")
            expressions.append(_string(cel.get("expression", _MISSING), f"{where}.cel.expression"))
    return m.ResolvedDeviceRequest(name=name, device_class_name=device_class, count=count, selectors=tuple(expressions))


def _member(obj: object, path: str) -> m.PlacedMember:
    x = _object(obj, path, "ReplicaMember")
    role = x.get("role")
    role = "Standalone" if role is None else role
    if not isinstance(role, str) or role not in _ROLES:
        _fail(f"{path}.role", "Input should be 'Standalone', 'Leader' or 'Worker'")
    worker = x.get("worker")
    nodes = 1
    if worker is not None:
        w = _object(worker, f"{path}.worker", "Worker")
        if w.get("nodes") is not None:
            nodes = _int(w["nodes"], f"{path}.worker.nodes", least=1, most=63)
    pool = _string(x.get("nodePoolName", _MISSING), f"{path}.nodePoolName", most=63)
    requests: tuple[m.ResolvedDeviceRequest, ...] = ()
    if x.get("deviceRequests") is not None:
        items = _items(x["deviceRequests"], f"{path}.deviceRequests", least=0, most=16)
        requests = tuple(_device_request(r, f"{path}.deviceRequests[{i}]") for i, r in enumerate(items))
        _unique("device request names", [r.name for r in requests], f"{path}.deviceRequests")
    if worker is not None and role != "Worker":
        _fail(path, f"worker may only be set on a Worker member, not {role}")
    return m.PlacedMember(
        role=m.Role(role),
        worker_nodes=nodes if role == "Worker" else 0,
        pool=pool,
        device_requests=requests,
    )


def _engine(obj: object, path: str) -> m.PlacedEngine:
    e = _object(obj, path, "ReplicaEngine")
    name = _string(e.get("name", _MISSING), f"{path}.name", most=63, pattern=_DNS)
    copies = e.get("copies")
    copies = 1 if copies is None else _int(copies, f"{path}.copies", least=1, most=64)
    items = _items(e.get("members", _MISSING), f"{path}.members", least=1, most=2)
    members = tuple(_member(x, f"{path}.members[{i}]") for i, x in enumerate(items))
    try:
        check_member_roles([x.role.value for x in members])
    except ValueError as err:
        _fail(path, str(err))
    return m.PlacedEngine(name=name, copies=copies, members=members)


def ledger_engines(value: object, path: str = "spec.engines") -> tuple[m.PlacedEngine, ...]:
    """spec.engines as the ledger reads them (ENGINE_FIELDS of each); SpecError names the bad field."""
    items = _items(value, path, least=1, most=8)
    engines = tuple(_engine(e, f"{path}[{i}]") for i, e in enumerate(items))
    _unique("engine names", [e.name for e in engines], path)
    return engines


def parse_ledger_replica(
    obj: Mapping[str, Any], *, engines: tuple[m.PlacedEngine, ...] | None = None
) -> m.ModelReplica:
    """The identity and engines of an observed ModelReplica XR, enough for the ledger; SpecError names a bad field.

    `engines`: spec.engines as `ledger_engines` read them already (a caller's memo); None reads them from `obj`.
    """
    meta = metadata(obj)
    raw_labels: Any = meta.get("labels") or {}
    if not isinstance(raw_labels, Mapping):
        _fail("metadata.labels", "must be an object")
    labels = cast("Mapping[str, str]", raw_labels)
    spec = _object(obj.get("spec"), "spec", "ReplicaSpec")
    cluster_name = _string(spec.get("clusterName", _MISSING), "spec.clusterName", most=253)
    if engines is None:
        engines = ledger_engines(spec.get("engines", _MISSING))
    replacing: tuple[m.PlacedEngine, ...] = ()
    if spec.get("replacing") is not None:
        held = _object(spec["replacing"], "spec.replacing", "Replacing")
        replacing = ledger_engines(held.get("engines", _MISSING), "spec.replacing.engines")
    return m.ModelReplica(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        deployment=owner(labels),
        cluster=labels.get(LABEL_CLUSTER) or cluster_name,
        index=replica_index(labels.get(LABEL_REPLICA_INDEX)),
        engines=engines,
        labels={k: v for k, v in sorted(labels.items()) if not k.startswith(MACHINERY_PREFIXES)},
        replacing=replacing,
        exclusive_nodes=_exclusive(spec.get("scheduling")),
    )


def _exclusive(scheduling: object) -> bool:
    """spec.scheduling.exclusiveNodes (absent: not exclusive), checked as parse_replica checks it."""
    if scheduling is None:
        return False
    value = _object(scheduling, "spec.scheduling", "ReplicaScheduling").get("exclusiveNodes")
    if value is None:
        return False
    if not isinstance(value, bool):
        _fail("spec.scheduling.exclusiveNodes", "Input should be a valid boolean")
    return value
