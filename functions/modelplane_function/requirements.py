"""What a ModelDeployment reads besides itself, declared identically on every call.

Requirements depend only on the observed XR, so repeated calls converge (render and Crossplane stop
asking once two consecutive answers are equal).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelplane import api, names
from modelplane.errors import SpecError
from modelplane.model import Cluster, ModelReplica

from modelplane_function.convert import to_dict
from modelplane_function.ledger import read_ledger_replica
from modelplane_function.memo import Memo, converted, identity
from modelplane_function.pools import read_cluster

CLUSTERS = "clusters"
REPLICAS = "replicas"
NAMESPACE = "namespace"


def _match_labels(xr: Mapping[str, Any]) -> dict[str, str] | None:
    """clusterSelector.matchLabels as a server-side filter; matchExpressions are applied by the scheduler."""
    spec: Any = xr
    for key in ("spec", "template", "spec"):  # any level may be malformed: parsing reports it later
        spec = spec.get(key) if isinstance(spec, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
    selector = spec.get("clusterSelector") if isinstance(spec, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
    labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
    if not isinstance(labels, Mapping) or not labels:
        return None
    return {str(k): str(v) for k, v in sorted(labels.items())}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _namespace(xr: Mapping[str, Any]) -> str:
    meta = xr.get("metadata")
    return str(meta.get("namespace") or "") if isinstance(meta, Mapping) else ""  # pyright: ignore[reportUnknownMemberType]


def declared(xr: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the requirements `declare` adds for this XR."""
    return (CLUSTERS, REPLICAS, NAMESPACE) if _namespace(xr) else (CLUSTERS, REPLICAS)


def declare(rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any]) -> tuple[str, ...]:
    """Declare the requirements; return their names."""
    response.require_resources(rsp, CLUSTERS, names.API_VERSION, names.KIND_CLUSTER, match_labels=_match_labels(xr))
    # Every replica of every deployment: the ledger charges other deployments' replicas too.
    response.require_resources(rsp, REPLICAS, names.API_VERSION, names.KIND_REPLICA)
    if _namespace(xr):
        # The deployment's Namespace, for its labels (InferenceCluster allowedNamespaceSelector).
        response.require_resources(rsp, NAMESPACE, "v1", "Namespace", match_name=_namespace(xr))
    return declared(xr)


def unresolved(req: fnv1.RunFunctionRequest, declared: tuple[str, ...]) -> bool:
    return any(name not in req.required_resources for name in declared)


def items(req: fnv1.RunFunctionRequest, name: str) -> list[dict[str, Any]]:
    found = req.required_resources.get(name)  # .get: bracket access would insert the key
    return [] if found is None else [to_dict(item.resource) for item in found.items]


# Process-wide: every call of every deployment receives the same fleet, and parsing it is most of a
# call at fleet scale (see memo.py).
_CLUSTERS: Memo[Cluster] = Memo(names.KIND_CLUSTER, read_cluster)
_REPLICAS: Memo[ModelReplica] = Memo(names.KIND_REPLICA, converted(api.parse_replica))
# Other deployments' replicas only feed the ledger: their templates, model and status are never
# converted nor validated (ledger.py). A first call over 10,000 of them spent ~2 s on that.
_LEDGER: Memo[ModelReplica] = Memo(names.KIND_REPLICA, read_ledger_replica)


def structs(req: fnv1.RunFunctionRequest, name: str) -> list[struct_pb2.Struct]:
    """The answers to one requirement, unconverted."""
    found = req.required_resources.get(name)  # .get: bracket access would insert the key
    return [] if found is None else [item.resource for item in found.items]


def clusters(req: fnv1.RunFunctionRequest) -> list[Cluster]:
    """The required InferenceClusters, parsed (memoised by content)."""
    return _CLUSTERS.parse_all(structs(req, CLUSTERS))


def replicas(req: fnv1.RunFunctionRequest, *, skip: frozenset[tuple[str, str]]) -> dict[tuple[str, str], ModelReplica]:
    """The required ModelReplicas by (namespace, name), parsed (memoised), except those in `skip`.

    The last object of an identity wins, and skipped ones are never parsed, as if the list had been
    converted and deduplicated first. Replicas of other deployments are read for the ledger only.
    """
    latest = {identity(s): s for s in structs(req, REPLICAS)}
    xr = req.observed.composite.resource
    mine = (_string(xr, "metadata", "namespace"), _string(xr, "metadata", "name"))
    return {key: _parse_replica(s, mine) for key, s in latest.items() if key not in skip}


def _string(struct: struct_pb2.Struct, *path: str) -> str | None:
    """The string at `path` ("" when absent), or None when something on the way is not what the API server allows."""
    fields = struct.fields
    for i, key in enumerate(path):
        v = fields.get(key)  # .get: bracket access would insert the key
        if v is None:
            return ""
        kind = v.WhichOneof("kind")
        if i == len(path) - 1:
            return v.string_value if kind == "string_value" else None
        if kind != "struct_value":
            return None
        fields = v.struct_value.fields
    return None


def _parse_replica(struct: struct_pb2.Struct, deployment: tuple[str | None, str | None]) -> ModelReplica:
    """In full when the replica may be the deployment's own (when unsure, it may); for the ledger otherwise.

    Namespaces default as parse_deployment and parse_replica default them. A replica the ledger's
    read rejects is parsed in full, so its error names every problem as before.
    """
    namespace, name = deployment
    meta = struct.fields.get("metadata")  # .get: bracket access would insert the key
    if meta is None or meta.WhichOneof("kind") != "struct_value" or not name or namespace is None:
        return _REPLICAS.parse(struct)
    label = _string(meta.struct_value, "labels", names.LABEL_DEPLOYMENT)
    own_namespace = _string(meta.struct_value, "namespace")
    if not label or own_namespace is None:
        return _REPLICAS.parse(struct)
    if (own_namespace or "default", label) == (namespace or "default", name):
        return _REPLICAS.parse(struct)
    try:
        return _LEDGER.parse(struct)
    except SpecError:
        return _REPLICAS.parse(struct)
