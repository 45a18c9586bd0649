"""Domain values the scheduler and the renderers work on.

These are plain frozen dataclasses: the API models in `modelplane.api` parse the wire shapes
(XRs as dicts) and convert them into these values at the edge, so the core never sees a
generated or pydantic class. Collections are tuples (ordered, immutable) or Mappings that
nothing mutates. Numbers are ints; quantities stay strings (Kubernetes Quantity syntax).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from modelplane.names import KAI_DEFAULT_PRIORITY_CLASS, KAI_DEFAULT_QUEUE


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


class Role(StrEnum):
    STANDALONE = "Standalone"
    LEADER = "Leader"
    WORKER = "Worker"


class Phase(StrEnum):
    PREFILL = "Prefill"
    DECODE = "Decode"


class ServingMode(StrEnum):
    UNIFIED = "Unified"
    PREFILL_DECODE = "PrefillDecode"


class SpreadPolicy(StrEnum):
    PREFERRED = "Preferred"  # spread is weighed against the devices a placement would idle or take from others
    STRICT = "Strict"  # fewest replicas per cluster first, whatever it costs


class PoolPacking(StrEnum):
    NODES = "Nodes"  # every claiming pod holds a whole node
    DEVICES = "Devices"  # pods of several replicas share a node where its devices fit


class Stack(StrEnum):
    """The serving stack a cluster runs (Modelplane's InferenceCluster.spec.stack)."""

    STANDARD = "Standard"  # KServe: multi-node engines as LeaderWorkerSets
    DYNAMO = "Dynamo"  # Grove with KAI: multi-node engines as PodCliqueSets


class TaintEffect(StrEnum):
    NO_SCHEDULE = "NoSchedule"
    NO_EXECUTE = "NoExecute"


class ClaimKind(StrEnum):
    DRA = "DRA"
    SYNTHETIC = "Synthetic"


class AttributeType(StrEnum):
    STRING = "string"
    INT = "int"
    BOOL = "bool"
    VERSION = "version"


# KServe minor versions whose presets replicas can be rendered for, oldest first; a cluster that
# declares none gets the newest (render/launch.py says how each launches vLLM).
KSERVE_VERSIONS = ("0.16", "0.17", "0.18", "0.19", "0.20")
KSERVE_NEWEST = KSERVE_VERSIONS[-1]


def kserve_rendered_as(version: str | None) -> str | None:
    """The known KServe version a cluster's `version` is rendered for (None: not a version we can render for).

    Absent means the newest; a later 0.x minor than we know (a cluster upgraded before this function)
    is rendered as the newest known, whose presets it most likely keeps (the caller says so).
    """
    if version is None or version in KSERVE_VERSIONS:
        return version or KSERVE_NEWEST
    minor = version.removeprefix("0.")
    if minor.isascii() and minor.isdigit() and minor[0] != "0" and int(minor) > int(KSERVE_NEWEST[2:]):
        return KSERVE_NEWEST
    return None


def kserve_assumed(version: str | None) -> str | None:
    """The sentence saying a later KServe than we know is rendered as the newest known (None: it is not one)."""
    rendered_as = kserve_rendered_as(version)
    if version is None or rendered_as is None or rendered_as == version:
        return None
    return (
        f"KServe {version} is newer than the versions replicas are rendered for ({KSERVE_VERSIONS[0]} to "
        f"{KSERVE_NEWEST}): they are rendered as for KServe {rendered_as}, assuming its presets launch vLLM as "
        f"{rendered_as}'s do."
    )


# --- selectors, taints ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelectorRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelector:
    """A Kubernetes LabelSelector; the empty selector matches everything."""

    match_labels: Mapping[str, str] = field(default_factory=_empty)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Taint:
    key: str
    value: str = ""
    effect: TaintEffect


@dataclass(frozen=True, slots=True, kw_only=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: TaintEffect | None = None  # None tolerates every effect


# --- the deployment ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RolloutStrategy:
    """How a template change reaches running replicas (spec.rollout), with Deployment's meaning.

    maxUnavailable and maxSurge are an int or a percent string ("25%") of spec.replicas; the
    defaults take at most one replica down at a time and surge one where the fleet has room.
    """

    max_unavailable: int | str = 1
    max_surge: int | str = 1
    progress_deadline_seconds: int = 600
    paused: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceRequest:
    """One named device request of a member: `count` devices per node matching every selector."""

    name: str
    count: int = 1
    selectors: tuple[str, ...] = ()  # DRA CEL expressions, ANDed


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceConstraint:
    requests: tuple[str, ...] = ()
    match_attribute: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    role: Role
    worker_nodes: int = 0  # Worker only: worker pods per copy, one per node
    device_requests: tuple[DeviceRequest, ...] = ()  # empty = no nodeSelector (claims nothing)
    constraints: tuple[DeviceConstraint, ...] = ()
    template: Mapping[str, Any] = field(default_factory=_empty)  # curated pod template, raw

    @property
    def pods_per_copy(self) -> int:
        return self.worker_nodes if self.role is Role.WORKER else 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Parallelism:
    tensor: int | None = None
    pipeline: int | None = None
    data: int | None = None
    data_local: int | None = None
    expert: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Engine:
    name: str
    copies: int = 1
    phase: Phase | None = None
    parallelism: Parallelism | None = None
    members: tuple[Member, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRef:
    uri: str
    name: str | None = None
    # a Secret in the workload namespace KServe's storage initializer reads credentials from
    storage_secret_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCache:
    """A Modelplane ModelCache as placement reads it: which clusters it stages onto, and where it has.

    Its composition (Modelplane's) stages the model onto a ReadWriteMany PersistentVolumeClaim on
    every InferenceCluster its clusterSelector matches and reports each one's phase in
    `status.clusters`; only `Ready` means the weights are all there.
    """

    namespace: str
    name: str
    cluster_selector: LabelSelector | None = None  # None = every cluster
    phases: Mapping[str, str] = field(default_factory=_empty)  # cluster -> the phase its status reports


CACHE_READY = "Ready"


@dataclass(frozen=True, slots=True, kw_only=True)
class Deployment:
    namespace: str
    name: str
    replicas: int
    engines: tuple[Engine, ...]
    model: ModelRef | None = None
    cluster_selector: LabelSelector | None = None  # None = every cluster
    tolerations: tuple[Toleration, ...] = ()
    serving_mode: ServingMode = ServingMode.UNIFIED
    router: Mapping[str, Any] | None = None  # the LLMIS `router` as written; None = the default
    base_refs: tuple[str, ...] = ()  # LLMInferenceServiceConfig names every LLMIS inherits from
    queue: str | None = None
    priority_class_name: str | None = None
    spread: SpreadPolicy = SpreadPolicy.PREFERRED
    movable: bool = True  # its Ready replicas may move to make room for others' demand (scheduler/displace.py)
    # its pods hold whole nodes of `packing: Devices` pools: no other deployment's pods beside them
    exclusive_nodes: bool = False
    template_labels: Mapping[str, str] = field(default_factory=_empty)
    rollout: RolloutStrategy = field(default_factory=RolloutStrategy)
    # labels of the deployment's Namespace, for tenant admission; None when the Namespace was not
    # found, so a cluster admitting by namespace labels can neither be proven to admit nor to refuse
    namespace_labels: Mapping[str, str] | None = field(default_factory=_empty)
    model_cache: str | None = None  # spec.template.spec.modelCacheRef.name: serve from that ModelCache
    # The ModelCache it names as read, or why it could not be (missing, unreadable); both None
    # until read. Placement waits for it (scheduler/filters.py); running replicas never do.
    cache: ModelCache | None = None
    cache_problem: str | None = None


# --- the fleet --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Attribute:
    """A typed DRA device attribute (string, int, bool or semantic version)."""

    type: AttributeType
    value: str | int | bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Device:
    """A kind of device present on every node of a pool (`count` of them per node)."""

    name: str
    driver: str
    claim: ClaimKind = ClaimKind.DRA
    device_class_name: str | None = None  # required when claim is DRA
    count: int = 1
    attributes: Mapping[str, Attribute] = field(default_factory=_empty)
    capacity: Mapping[str, str] = field(default_factory=_empty)  # name -> Quantity string


@dataclass(frozen=True, slots=True, kw_only=True)
class NodePool:
    name: str
    nodes: int
    devices: tuple[Device, ...] = ()
    packing: PoolPacking = PoolPacking.NODES


@dataclass(frozen=True, slots=True, kw_only=True)
class Fabric:
    """Pools of a cluster whose nodes share one interconnect fabric: an engine's members may span them."""

    name: str
    pools: tuple[str, ...]  # sorted, at least two
    # a level (node label key) of the cluster's KAI Topology whose domain is this fabric: a spanning
    # engine's pods are kept within one domain of it
    topology_level: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class KaiAllowance:
    """KAI queues and priority classes a namespace may use on a cluster beside its defaults (sorted)."""

    queues: tuple[str, ...] = ()
    priority_class_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Cluster:
    name: str
    labels: Mapping[str, str] = field(default_factory=_empty)
    taints: tuple[Taint, ...] = ()
    ready: bool = True
    allowed_namespaces: tuple[str, ...] | None = None  # None = not restricted by name list
    allowed_namespace_selector: LabelSelector | None = None
    provider_config_name: str = ""
    workload_namespace: str = "modelplane-workloads"
    default_queue: str = KAI_DEFAULT_QUEUE
    default_priority_class_name: str = KAI_DEFAULT_PRIORITY_CLASS
    # a namespace's default queue is the one named after it (else default_queue)
    queue_per_namespace: bool = False
    kai_namespaces: Mapping[str, KaiAllowance] = field(default_factory=_empty)  # namespace -> what it may use
    topology: str | None = None  # a KAI Topology object
    # node label keys of that topology: all of a replica's pods within one domain of this level
    topology_required_level: str | None = None
    topology_preferred_level: str | None = None
    pools: tuple[NodePool, ...] = ()
    kserve_version: str | None = None  # one of KSERVE_VERSIONS; None = the newest
    stack: Stack = Stack.STANDARD
    fabrics: tuple[Fabric, ...] = ()  # sorted by name; a pool is in at most one

    def fabric_of(self, pools: tuple[str, ...] | frozenset[str]) -> Fabric | None:
        """The fabric every one of `pools` is in, if any."""
        return next((f for f in self.fabrics if set(pools) <= set(f.pools)), None)


# --- placements and replicas ------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class DeviceGroup:
    """Pods that must land on distinct nodes (one gang copy, or one Standalone pod), `devices` each at most.

    `whole`: each pod holds a whole node of a shared pool (an exclusive deployment's: its pods keep
    every other deployment's pods off their nodes, and stay off nodes where others' pods run).
    """

    pods: int
    devices: int
    whole: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolCharge:
    """What a replica (or an engine) holds on one pool: whole nodes, and the same pods as device groups.

    A `packing: Nodes` pool is charged the nodes, a `packing: Devices` pool the groups.
    """

    nodes: int = 0
    groups: tuple[DeviceGroup, ...] = ()

    def __add__(self, other: PoolCharge) -> PoolCharge:
        return PoolCharge(nodes=self.nodes + other.nodes, groups=tuple(sorted((*self.groups, *other.groups))))

    def beyond(self, other: PoolCharge | None) -> PoolCharge:
        """What this charge holds that `other` does not: the extra nodes, the groups `other` lacks."""
        if other is None:
            return self
        rest = list(other.groups)
        extra: list[DeviceGroup] = []
        for g in self.groups:
            if g in rest:
                rest.remove(g)
            else:
                extra.append(g)
        return PoolCharge(nodes=max(self.nodes - other.nodes, 0), groups=tuple(extra))


def engine_charge(copies: int, members: tuple[tuple[int, int], ...], *, whole: bool = False) -> PoolCharge:
    """An engine's charge from its claiming members as (pods per copy, devices per pod).

    A copy of a gang (several claiming pods, one per node) is one group; each Standalone pod is one.
    `whole`: the pods hold whole nodes where nodes are shared (an exclusive deployment's).
    """
    claiming = [(pods, devices) for pods, devices in members if pods > 0]
    nodes = sum(pods for pods, _ in claiming) * copies
    if not claiming:
        return PoolCharge()
    pods = sum(p for p, _ in claiming)
    largest = max(d for _, d in claiming)
    return PoolCharge(nodes=nodes, groups=(DeviceGroup(pods=pods, devices=largest, whole=whole),) * copies)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedDeviceRequest:
    """A member's device request resolved against a pool's DRA device: what the claim asks for."""

    name: str
    device_class_name: str
    count: int
    selectors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacedMember:
    role: Role
    worker_nodes: int = 0
    pool: str
    device_requests: tuple[ResolvedDeviceRequest, ...] = ()  # empty = claimless (zero node cost)
    constraints: tuple[DeviceConstraint, ...] = ()
    template: Mapping[str, Any] = field(default_factory=_empty)

    @property
    def pods_per_copy(self) -> int:
        return self.worker_nodes if self.role is Role.WORKER else 1


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacedEngine:
    name: str
    copies: int = 1
    phase: Phase | None = None
    parallelism: Parallelism | None = None
    members: tuple[PlacedMember, ...]
    # members on several pools of one fabric: the KAI topology level keeping its pods in one fabric domain
    fabric_level: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelReplica:
    """One replica: the decision record (ModelReplica XR spec + identity labels).

    Used both ways: observed ModelReplicas feed the ledger and the retain phase; the scheduler's
    placements become ModelReplicas the function composes and the renderers turn into manifests.
    """

    namespace: str
    name: str
    deployment: str
    cluster: str
    index: int
    engines: tuple[PlacedEngine, ...]
    provider_config_name: str = ""
    workload_namespace: str = "modelplane-workloads"
    model: ModelRef | None = None
    model_cache: str | None = None  # the ModelCache (in its namespace) whose volume serves the model
    serving_mode: ServingMode = ServingMode.UNIFIED
    router: Mapping[str, Any] | None = None
    base_refs: tuple[str, ...] = ()
    tolerations: tuple[Toleration, ...] = ()  # the deployment's, carried onto every pod
    queue: str = KAI_DEFAULT_QUEUE
    priority_class_name: str = KAI_DEFAULT_PRIORITY_CLASS
    topology: str | None = None
    topology_required_level: str | None = None
    topology_preferred_level: str | None = None
    labels: Mapping[str, str] = field(default_factory=_empty)  # the deployment's template labels
    ready: bool = False  # observed Ready condition (observed replicas only)
    # Observed replicas only: metadata.creationTimestamp as a sortable UTC string (None when the API
    # server has not stored the object yet), and whether it is being deleted.
    created: str | None = None
    deleting: bool = False
    kserve_version: str | None = None  # its cluster's, copied at placement; None = the newest
    # the deployment template revision it renders (modelplane.rollout.revision); None = unknown
    revision: str | None = None
    # The engines of the LLMInferenceServices a rename supersedes, kept serving beside the new ones
    # until those are Ready: charged with the replica's own, since both run meanwhile.
    replacing: tuple[PlacedEngine, ...] = ()
    serving_previous: bool = False  # observed: Ready through the superseded objects, the new ones not yet
    exclusive_nodes: bool = False  # the deployment's: its pods hold whole nodes of shared pools

    def charges_by_pool(self) -> Mapping[str, PoolCharge]:
        """What this replica holds per pool, as whole nodes and as device groups (capacity.py)."""
        charges: dict[str, PoolCharge] = {}
        for engine in (*self.engines, *self.replacing):
            per_pool: dict[str, list[tuple[int, int]]] = {}
            for member in engine.members:
                if member.device_requests:
                    devices = sum(r.count for r in member.device_requests)
                    per_pool.setdefault(member.pool, []).append((member.pods_per_copy, devices))
            for pool, members in per_pool.items():
                charge = engine_charge(engine.copies, tuple(members), whole=self.exclusive_nodes)
                charges[pool] = charges[pool] + charge if pool in charges else charge
        return MappingProxyType(charges)

    def node_cost_by_pool(self) -> Mapping[str, int]:
        """Nodes this replica holds per pool: pods x copies of every member that claims a DRA device."""
        cost: dict[str, int] = {}
        for engine in (*self.engines, *self.replacing):
            for member in engine.members:
                if member.device_requests:
                    cost[member.pool] = cost.get(member.pool, 0) + member.pods_per_copy * engine.copies
        return MappingProxyType(cost)
