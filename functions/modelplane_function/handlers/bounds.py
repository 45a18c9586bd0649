"""List and map sizes checked on the Struct, before anything is converted or validated item by item.

The API server enforces the XRDs' maxItems and maxProperties, but `crossplane render` and any
client that skips admission do not, and parsing validates every item of a list before it looks at
the list's length: a list a million items long would cost seconds before being refused. These
paths and limits are the XRDs' own (a test checks them against apis/*/definition.yaml); `[]` steps
into every item of a list. The composite of a call is checked in full; other deployments'
ModelReplicas need no walk (their ledger read bounds each list before reading its items).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import struct_pb2
from modelplane import names
from modelplane.errors import SpecError

_POD = (
    ("template.metadata.labels", 32),
    ("template.metadata.annotations", 32),
    ("template.spec.containers", 1),
    ("template.spec.containers[].command", 64),
    ("template.spec.containers[].args", 256),
    ("template.spec.containers[].env", 128),
    ("template.spec.containers[].resources.limits", 16),
    ("template.spec.containers[].resources.requests", 16),
    ("template.spec.containers[].ports", 16),
    ("template.spec.imagePullSecrets", 8),
)
_ENGINES = "spec.template.spec.engines"
_MEMBERS = f"{_ENGINES}[].members"
DEPLOYMENT = (
    ("spec.template.metadata.labels", 32),
    ("spec.template.spec.clusterSelector.matchLabels", 32),
    ("spec.template.spec.clusterSelector.matchExpressions", 16),
    ("spec.template.spec.clusterSelector.matchExpressions[].values", 64),
    ("spec.template.spec.tolerations", 32),
    ("spec.template.spec.serving.baseRefs", 8),
    (_ENGINES, 8),
    (_MEMBERS, 2),
    (f"{_MEMBERS}[].nodeSelector.devices", 16),
    (f"{_MEMBERS}[].nodeSelector.devices[].selectors", 8),
    (f"{_MEMBERS}[].nodeSelector.constraints", 8),
    (f"{_MEMBERS}[].nodeSelector.constraints[].requests", 16),
    *((f"{_MEMBERS}[].{path}", n) for path, n in _POD),
)
REPLICA = (
    ("spec.serving.baseRefs", 8),
    ("spec.tolerations", 32),
    ("spec.engines", 8),
    ("spec.engines[].members", 2),
    ("spec.engines[].members[].deviceRequests", 16),
    ("spec.engines[].members[].deviceRequests[].selectors", 8),
    ("spec.engines[].members[].constraints", 8),
    ("spec.engines[].members[].constraints[].requests", 16),
    *((f"spec.engines[].members[].{path}", n) for path, n in _POD),
    ("spec.replacing.engines", 8),
    ("spec.replacing.engines[].members", 2),
    ("spec.replacing.engines[].members[].deviceRequests", 16),
    ("spec.replacing.engines[].members[].deviceRequests[].selectors", 8),
)
_POOLS = (("", 16), ("[].devices", 16), ("[].devices[].attributes", 32), ("[].devices[].capacity", 32))
CLUSTER = (
    ("spec.taints", 32),
    ("spec.allowedNamespaces", 256),
    ("spec.allowedNamespaceSelector.matchLabels", 32),
    ("spec.allowedNamespaceSelector.matchExpressions", 16),
    ("spec.allowedNamespaceSelector.matchExpressions[].values", 64),
    ("spec.kai.namespaces", 256),
    ("spec.kai.namespaces[].queues", 32),
    ("spec.kai.namespaces[].priorityClassNames", 32),
    ("spec.fabrics", 16),
    ("spec.fabrics[].nodePools", 16),
    ("spec.nodePools[].zones", 32),
    *((f"spec.nodePools{path}", n) for path, n in _POOLS),
    *((f"status.gpuPools{path}", n) for path, n in _POOLS),
)
DEMAND = (
    ("spec.clusters", 2048),
    ("spec.engines", 8),
    ("spec.engines[].options", 64),
    ("spec.engines[].options[].poolKinds", 256),
    ("spec.engines[].options[].groups", 64),
)
LIMITS: Mapping[str, tuple[tuple[str, int], ...]] = {
    names.KIND_DEMAND: DEMAND,
    names.KIND_DEPLOYMENT: DEPLOYMENT,
    names.KIND_REPLICA: REPLICA,
    names.KIND_CLUSTER: CLUSTER,
}


def _steps(path: str) -> list[str]:
    return [s for part in path.split(".") for s in (part.removesuffix("[]"), "[]")[: 2 if part.endswith("[]") else 1]]


# A trie of the paths per kind: step -> (limit at that step or None, children). One walk per object
# visits each bounded list once, and nothing the limits do not reach.
_Trie = dict[str, tuple[int | None, "_Trie"]]


def _trie(limits: tuple[tuple[str, int], ...]) -> _Trie:
    root: _Trie = {}
    for path, most in limits:
        node = root
        steps = _steps(path)
        for i, step in enumerate(steps):
            limit, children = node.get(step, (None, {}))
            node[step] = (most if i == len(steps) - 1 else limit, children)
            node = children
    return root


_TRIES = {kind: _trie(limits) for kind, limits in LIMITS.items()}
# Fleet clusters are read on every first call of a server, 1,000 of them in the largest fleet: only
# the lists that multiply the reader's work are walked (a few lookups per cluster, where the whole
# table costs ~0.4 ms); maps within a device are bounded by the parser.
FLEET_CLUSTER = "fleet " + names.KIND_CLUSTER
_TRIES[FLEET_CLUSTER] = _trie(tuple((p, n) for p, n in CLUSTER if p.endswith(("Pools", "devices"))))


def check(kind: str, struct: struct_pb2.Struct) -> None:
    """Raise SpecError naming the first list or map of `struct` longer than its XRD allows."""
    _walk(struct.fields, _TRIES[kind], "")


def _walk(fields: Any, trie: _Trie, at: str) -> None:
    for step, (most, children) in trie.items():
        v = fields.get(step)  # .get: bracket access would insert the key
        if v is not None:
            _visit(v, most, children, f"{at}.{step}" if at else step)


def _visit(v: struct_pb2.Value, most: int | None, children: _Trie, at: str) -> None:
    kind = v.WhichOneof("kind")
    if kind == "list_value":
        items = v.list_value.values
        if most is not None and len(items) > most:
            msg = f"{at}: at most {most} items are allowed, got {len(items)}"
            raise SpecError(msg)
        each = children.get("[]")
        if each is not None:
            for i, item in enumerate(items):
                _visit(item, each[0], each[1], f"{at}[{i}]")
    elif kind == "struct_value":
        fields = v.struct_value.fields
        if most is not None and len(fields) > most:
            msg = f"{at}: at most {most} items are allowed, got {len(fields)}"
            raise SpecError(msg)
        _walk(fields, children, at)
