"""What a ModelDeployment reads besides itself, declared identically on every call.

Requirements depend only on the observed XR, so repeated calls converge (render and Crossplane stop
asking once two consecutive answers are equal).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelplane import api, names
from modelplane.api.replica import ready_at
from modelplane.devices import DeviceMatcher
from modelplane.errors import SpecError
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.quota import FleetQuota
from modelplane.scheduler.policy import FleetPolicy
from modelplane.stated import StatedDemand

from modelplane_function.handlers import bounds
from modelplane_function.handlers.convert import project, to_dict
from modelplane_function.handlers.ledger import read_ledger_replica
from modelplane_function.handlers.memo import Memo, converted, identity
from modelplane_function.handlers.pools import read_cluster
from modelplane_function.handlers.stamps import stamped

CLUSTERS = "clusters"
REPLICAS = "replicas"
NAMESPACE = "namespace"
DEMANDS = "demands"
QUOTAS = "quotas"
PRIORITY_CLASSES = "priorityclasses"
MODEL_CACHE = "model-cache"
# A statement the owner's reconcile writes stays far below this (scheduler/state.py bounds it); a
# larger object is not one it wrote and is left out before it costs a parse.
MAX_DEMAND_BYTES = 256 * 2**10
T = TypeVar("T")


def _namespace(xr: Mapping[str, Any]) -> str:
    meta = xr.get("metadata")
    return str(meta.get("namespace") or "") if isinstance(meta, Mapping) else ""  # pyright: ignore[reportUnknownMemberType]


def _model_cache(xr: Mapping[str, Any]) -> str | None:
    """spec.template.spec.modelCacheRef.name when it is a name; the parser reports any other shape."""
    ref: Any = xr
    for key in ("spec", "template", "spec", "modelCacheRef", "name"):
        ref = ref.get(key) if isinstance(ref, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
    return ref if isinstance(ref, str) and ref else None


def declared(xr: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the requirements `declare` adds for this XR."""
    if not _namespace(xr):
        return (CLUSTERS, REPLICAS)
    return (CLUSTERS, REPLICAS, NAMESPACE, MODEL_CACHE) if _model_cache(xr) else (CLUSTERS, REPLICAS, NAMESPACE)


def declare(rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any]) -> tuple[str, ...]:
    """Declare the requirements; return their names."""
    # Every cluster, not only those the clusterSelector's matchLabels pick: other deployments' demand,
    # which this one reserves room for and moves for, may use the rest (the scheduler applies the selector).
    response.require_resources(rsp, CLUSTERS, names.API_VERSION, names.KIND_CLUSTER)
    # Every replica of every deployment: the ledger charges other deployments' replicas too.
    response.require_resources(rsp, REPLICAS, names.API_VERSION, names.KIND_REPLICA)
    # Every deployment's stated demand (modelplane.stated), for held room and moves: never the other
    # deployments themselves, whose specs are their tenants' business and may be large or broken. Not
    # in `declared`: without an answer the deployment schedules as before, it does not wait.
    response.require_resources(rsp, DEMANDS, names.API_VERSION, names.KIND_DEMAND)
    # The platform's quotas and priority values (modelplane.quota); without answers every deployment
    # ranks by size alone, as with none. Not in `declared` either.
    response.require_resources(rsp, QUOTAS, names.API_VERSION, names.KIND_QUOTA)
    response.require_resources(rsp, PRIORITY_CLASSES, "scheduling.k8s.io/v1", "PriorityClass")
    if _namespace(xr):
        # The deployment's Namespace, for its labels (InferenceCluster allowedNamespaceSelector).
        response.require_resources(rsp, NAMESPACE, "v1", "Namespace", match_name=_namespace(xr))
        cache = _model_cache(xr)
        if cache:
            # Modelplane's ModelCache, in the deployment's namespace as modelCacheRef means: placement
            # waits for it (scheduler/filters.py), so it is in `declared`.
            kind = names.KIND_MODEL_CACHE
            response.require_resources(
                rsp, MODEL_CACHE, names.API_VERSION, kind, match_name=cache, namespace=_namespace(xr)
            )
    return declared(xr)


def unresolved(req: fnv1.RunFunctionRequest, declared: tuple[str, ...]) -> bool:
    return any(name not in req.required_resources for name in declared)


def items(req: fnv1.RunFunctionRequest, name: str) -> list[dict[str, Any]]:
    found = req.required_resources.get(name)  # .get: bracket access would insert the key
    return [] if found is None else [to_dict(item.resource) for item in found.items]


def namespace_labels(req: fnv1.RunFunctionRequest, namespace: str) -> Mapping[str, str] | None:
    """Labels of `namespace` from the answered Namespaces; None when none of them has that name.

    The name is checked: labels of any other Namespace would decide tenant admission wrongly.
    """
    for obj in items(req, NAMESPACE):
        meta = obj.get("metadata")
        if isinstance(meta, Mapping) and meta.get("name") == namespace:  # pyright: ignore[reportUnknownMemberType]
            labels = meta.get("labels")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return None


def model_cache(req: fnv1.RunFunctionRequest, deployment: Deployment) -> Deployment:
    """The deployment with the ModelCache it names as answered, or with why it cannot be read."""
    return api.with_model_cache(deployment, items(req, MODEL_CACHE))


def _bounded(kind: str, read: Callable[[struct_pb2.Struct], T]) -> Callable[[struct_pb2.Struct], T]:
    """`read` after the XRD's list bounds hold: an oversized list is refused before item-by-item work."""

    def checked(struct: struct_pb2.Struct) -> T:
        bounds.check(kind, struct)
        return read(struct)

    return checked


def _stamped(
    read: Callable[[struct_pb2.Struct], ModelReplica],
) -> Callable[[struct_pb2.Struct], ModelReplica | None]:
    """`read` with the API server's stamps; None for a replica that holds nothing (see _refused)."""

    def with_stamps(struct: struct_pb2.Struct) -> ModelReplica | None:
        if _refused(struct):
            return None
        replica = stamped(read(struct), project(struct, _STAMPS).get("metadata") or {})
        # Whether another deployment's replica serves decides which replicas may move (displace.py).
        return replace(replica, ready=True) if not replica.ready and _ready(struct) else replica

    return with_stamps


_STAMPS = {"metadata": {"creationTimestamp": None, "deletionTimestamp": None}}

# Process-wide: every call of every deployment receives the same fleet, and parsing it is most of a
# call at fleet scale (see memo.py).
_CLUSTERS: Memo[Cluster] = Memo(names.KIND_CLUSTER, _bounded(bounds.FLEET_CLUSTER, read_cluster))
_REPLICAS: Memo[ModelReplica | None] = Memo(
    names.KIND_REPLICA, _bounded(names.KIND_REPLICA, _stamped(converted(api.parse_replica)))
)
_DEMANDS: Memo[StatedDemand] = Memo(names.KIND_DEMAND, _bounded(names.KIND_DEMAND, converted(api.parse_demand)))
# Other deployments' replicas only feed the ledger: their templates, model and status are never
# converted nor validated (ledger.py). A first call over 10,000 of them spent ~2 s on that.
_LEDGER: Memo[ModelReplica | None] = Memo(names.KIND_REPLICA, _stamped(read_ledger_replica))


def demands(req: fnv1.RunFunctionRequest, own: Deployment) -> tuple[StatedDemand, ...] | None:
    """Every other deployment's readable statement; None when the fleet's were not answered.

    One that cannot be read is left out (contained: it only states demand), and so is one being
    deleted (its replicas are going too), one larger than any the function writes, and the
    deployment's own (its reconcile works its statement out afresh).
    """
    if DEMANDS not in req.required_resources:
        return None
    out: dict[tuple[str, str], StatedDemand] = {}
    for struct in structs(req, DEMANDS):
        if struct.ByteSize() > MAX_DEMAND_BYTES or _string(struct, "metadata", "deletionTimestamp"):
            continue
        try:
            d = _DEMANDS.parse(struct)
        except MemoryError:
            raise  # the machine, not the object: left out, its demand would silently change the schedule
        except Exception:  # noqa: BLE001 - contained per object: it only states demand
            continue
        if d.key != (own.namespace, own.name) and names.label_value_problem(d.name) is None:
            out.setdefault(d.key, d)
    return tuple(out[k] for k in sorted(out))


def policy(req: fnv1.RunFunctionRequest, own: Deployment, matcher: DeviceMatcher) -> FleetPolicy:
    """The fleet's quotas and priorities as the platform set them.

    A FleetQuota that cannot be read is left out (its own reconcile reports it: QuotaAccepted);
    the deployment's own namespace is matched by its labels, every other by the names the quota
    lists or published (status.namespaces).
    """
    quotas: list[FleetQuota] = []
    for obj in items(req, QUOTAS):
        try:
            quotas.append(api.parse_quota(obj))
        except SpecError:
            continue
    labels = {own.namespace: own.namespace_labels} if own.namespace_labels is not None else {}
    return FleetPolicy(
        quotas=quotas,
        priorities=api.priority_classes(items(req, PRIORITY_CLASSES)),
        namespace_labels=labels,
        matcher=matcher,
    )


def structs(req: fnv1.RunFunctionRequest, name: str) -> list[struct_pb2.Struct]:
    """The answers to one requirement, unconverted."""
    found = req.required_resources.get(name)  # .get: bracket access would insert the key
    return [] if found is None else [item.resource for item in found.items]


def _problem(kind: str, struct: struct_pb2.Struct, error: Exception) -> str:
    """What is wrong with one fleet object, naming it (the memo names it already for a SpecError)."""
    if isinstance(error, SpecError) and str(error).startswith(f"{kind} "):
        return str(error)
    where = "/".join(p for p in identity(struct) if p)
    return f"{kind} {where}: {type(error).__name__}: {error}"


def clusters(req: fnv1.RunFunctionRequest, name: str = CLUSTERS) -> tuple[list[Cluster], dict[str, str]]:
    """The required InferenceClusters, parsed (memoised by content), and why each unreadable one is.

    One cluster that cannot be read must not stop scheduling everywhere else, whatever its parser
    raises: it is returned by name with the problem, and the scheduler treats it as unusable.
    """
    parsed: list[Cluster] = []
    problems: dict[str, str] = {}
    for struct in structs(req, name):
        try:
            cluster = _CLUSTERS.parse(struct)
        except MemoryError:
            raise  # the machine, not the object
        except Exception as e:  # noqa: BLE001 - contained per object; named in the diagnosis
            if identity(struct)[1]:
                problems.setdefault(identity(struct)[1], _problem(names.KIND_CLUSTER, struct, e))
            continue
        problem = names.label_value_problem(cluster.name)
        if problem is not None:
            problems.setdefault(cluster.name, f"{names.KIND_CLUSTER} {cluster.name}: metadata.name: {problem}")
            continue
        parsed.append(cluster)
    return parsed, dict(sorted(problems.items()))


def replicas(
    req: fnv1.RunFunctionRequest, *, skip: frozenset[tuple[str, str]]
) -> tuple[dict[tuple[str, str], ModelReplica], dict[str, str]]:
    """The required ModelReplicas by (namespace, name), parsed (memoised), except those in `skip`;
    and, per cluster, the first ModelReplica on it that cannot be read, with why.

    `skip` holds the replicas the deployment composes (read in full from observed state): every
    other one is someone else's and is read for the ledger only. The last object of an identity
    wins, and skipped ones are never parsed, as if the list had been converted and deduplicated
    first. A replica its ModelReplica handler refused for tenancy holds nothing and is left out.
    """
    latest = {identity(s): s for s in structs(req, REPLICAS)}
    parsed: dict[tuple[str, str], ModelReplica] = {}
    problems: dict[str, str] = {}
    for key in sorted(latest):
        struct = latest[key]
        if key in skip:
            continue
        try:
            replica = _parse_replica(struct)
        except MemoryError:
            raise  # the machine, not the object
        except Exception as e:  # noqa: BLE001 - contained per object: only its cluster is affected
            cluster = _cluster_of(struct)
            if cluster:
                problems.setdefault(cluster, _problem(names.KIND_REPLICA, struct, e))
            continue
        if replica is not None:
            parsed[key] = replica
    return parsed, problems


def _cluster_of(struct: struct_pb2.Struct) -> str:
    """The cluster an unreadable replica names, as the parsers would read it: label, else spec.clusterName."""
    return _string(struct, "metadata", "labels", names.LABEL_CLUSTER) or _string(struct, "spec", "clusterName") or ""


def _ready(struct: struct_pb2.Struct) -> bool:
    """Whether the replica is Ready for the revision its label names (api.replica.ready_at)."""
    revision = _string(struct, "metadata", "labels", names.LABEL_REVISION) or None
    rendered = _string(struct, "status", "renderedRevision") or None
    return ready_at(revision, ready=_has_condition(struct, ("Ready", "True")), rendered=rendered)


def _has_condition(struct: struct_pb2.Struct, wanted: tuple[str, ...]) -> bool:
    """Whether status.conditions holds one whose (type, status[, reason]) are `wanted`."""
    status = struct.fields.get("status")  # .get: bracket access would insert the key
    conditions = status.struct_value.fields.get("conditions") if status is not None else None
    if conditions is None or conditions.WhichOneof("kind") != "list_value":
        return False
    fields = ("type", "status", "reason")[: len(wanted)]
    return any(
        c.WhichOneof("kind") == "struct_value" and tuple(_string(c.struct_value, f) for f in fields) == wanted
        for c in conditions.list_value.values
    )


def _refused(struct: struct_pb2.Struct) -> bool:
    """Whether the replica's own handler reports that its cluster does not admit its namespace."""
    return _has_condition(struct, (names.CONDITION_REPLICA_RENDERED, "False", names.REASON_NAMESPACE_NOT_ADMITTED))


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


def _parse_replica(struct: struct_pb2.Struct) -> ModelReplica | None:
    """Another deployment's replica (every one the deployment does not compose), for the ledger.

    A replica the ledger's read rejects is parsed in full, so its error names every problem. None:
    the replica holds nothing (its handler found its cluster does not admit its namespace).
    """
    try:
        return _LEDGER.parse(struct)
    except SpecError:
        return _REPLICAS.parse(struct)
