"""Keyword-only builders for scheduler tests, and a readable outline of a ScheduleResult."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from modelplane.model import (
    Attribute,
    AttributeType,
    ClaimKind,
    Cluster,
    Deployment,
    Device,
    DeviceRequest,
    Engine,
    KaiAllowance,
    LabelSelector,
    LabelSelectorRequirement,
    Member,
    ModelRef,
    ModelReplica,
    NodePool,
    Phase,
    PlacedEngine,
    PlacedMember,
    ResolvedDeviceRequest,
    Role,
    ServingMode,
    Stack,
    Taint,
    TaintEffect,
    Toleration,
)
from modelplane.names import KAI_DEFAULT_PRIORITY_CLASS, KAI_DEFAULT_QUEUE, replica_name
from modelplane.scheduler.result import ScheduleResult

GPU_DRIVER = "gpu.nvidia.com"
NIC_DRIVER = "ib.mellanox.com"
IS_GPU = f'device.driver == "{GPU_DRIVER}"'
IS_NIC = f'device.driver == "{NIC_DRIVER}"'


def is_model(model: str) -> str:
    return f'device.attributes["{GPU_DRIVER}"].model == "{model}"'


def gpu(*, count: int = 8, model: str = "H100", claim: ClaimKind = ClaimKind.DRA) -> Device:
    return Device(
        name="gpu",
        driver=GPU_DRIVER,
        claim=claim,
        device_class_name=GPU_DRIVER if claim is ClaimKind.DRA else None,
        count=count,
        attributes=MappingProxyType({"model": Attribute(type=AttributeType.STRING, value=model)}),
    )


def nic(*, count: int = 1) -> Device:
    """An InfiniBand NIC with no DRA driver: narrows placement, never claimed."""
    return Device(name="ib", driver=NIC_DRIVER, claim=ClaimKind.SYNTHETIC, count=count)


def pool(
    name: str, *, nodes: int = 4, gpus: int = 8, model: str = "H100", devices: Sequence[Device] | None = None
) -> NodePool:
    return NodePool(
        name=name, nodes=nodes, devices=tuple(devices) if devices is not None else (gpu(count=gpus, model=model),)
    )


def cluster(
    name: str,
    *,
    pools: Sequence[NodePool] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    ready: bool = True,
    allowed_namespaces: Sequence[str] | None = None,
    allowed_namespace_selector: LabelSelector | None = None,
    default_queue: str = KAI_DEFAULT_QUEUE,
    queue_per_namespace: bool = False,
    kai_namespaces: Mapping[str, KaiAllowance] | None = None,
    topology: str | None = None,
    stack: Stack = Stack.STANDARD,
) -> Cluster:
    return Cluster(
        name=name,
        labels=MappingProxyType(dict(labels or {})),
        taints=tuple(taints),
        ready=ready,
        allowed_namespaces=tuple(allowed_namespaces) if allowed_namespaces is not None else None,
        allowed_namespace_selector=allowed_namespace_selector,
        provider_config_name=f"pc-{name}",
        workload_namespace=f"ws-{name}",
        default_queue=default_queue,
        queue_per_namespace=queue_per_namespace,
        kai_namespaces=MappingProxyType(dict(kai_namespaces or {})),
        topology=topology,
        pools=tuple(pools) if pools is not None else (pool("h100"),),
        stack=stack,
    )


def taint(key: str, *, value: str = "", effect: TaintEffect = TaintEffect.NO_SCHEDULE) -> Taint:
    return Taint(key=key, value=value, effect=effect)


def toleration(
    key: str = "", *, operator: str = "Equal", value: str = "", effect: TaintEffect | None = None
) -> Toleration:
    return Toleration(key=key, operator=operator, value=value, effect=effect)


def selector(
    *, labels: Mapping[str, str] | None = None, expressions: Sequence[LabelSelectorRequirement] = ()
) -> LabelSelector:
    return LabelSelector(match_labels=MappingProxyType(dict(labels or {})), match_expressions=tuple(expressions))


def requirement(key: str, operator: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator=operator, values=values)


def request(name: str = "gpu", *, count: int = 8, selectors: Sequence[str] = (IS_GPU,)) -> DeviceRequest:
    return DeviceRequest(name=name, count=count, selectors=tuple(selectors))


def member(
    *, role: Role = Role.STANDALONE, worker_nodes: int = 0, requests: Sequence[DeviceRequest] | None = None
) -> Member:
    """A member; by default it claims 8 GPUs per node. requests=() makes it claimless."""
    return Member(
        role=role,
        worker_nodes=worker_nodes,
        device_requests=tuple(requests) if requests is not None else (request(),),
        template=MappingProxyType({"containers": ({"name": "engine", "image": "vllm"},)}),
    )


def engine(
    name: str = "main", *, copies: int = 1, phase: Phase | None = None, members: Sequence[Member] | None = None
) -> Engine:
    return Engine(name=name, copies=copies, phase=phase, members=tuple(members) if members is not None else (member(),))


def gpu_engines(count: int, *, model: str | None = None) -> tuple[Engine, ...]:
    """One standalone engine claiming `count` GPUs per pod, of `model` when given (else any GPU)."""
    selectors = (IS_GPU,) if model is None else (IS_GPU, is_model(model))
    return (engine(members=[member(requests=[request(count=count, selectors=selectors)])]),)


def leader_worker(
    name: str = "main", *, workers: int, copies: int = 1, leader_claims: bool = True, phase: Phase | None = None
) -> Engine:
    """A Leader + Worker engine: one gang of 1 + `workers` pods per copy."""
    return engine(
        name,
        copies=copies,
        phase=phase,
        members=(
            member(role=Role.LEADER, requests=None if leader_claims else ()),
            member(role=Role.WORKER, worker_nodes=workers),
        ),
    )


def deployment(
    name: str = "llm",
    *,
    namespace: str = "team-a",
    replicas: int = 1,
    engines: Sequence[Engine] | None = None,
    cluster_selector: LabelSelector | None = None,
    tolerations: Sequence[Toleration] = (),
    serving_mode: ServingMode = ServingMode.UNIFIED,
    queue: str | None = None,
    priority_class_name: str | None = None,
    template_labels: Mapping[str, str] | None = None,
    namespace_labels: Mapping[str, str] | None = None,
    exclusive_nodes: bool = False,
) -> Deployment:
    return Deployment(
        namespace=namespace,
        name=name,
        replicas=replicas,
        engines=tuple(engines) if engines is not None else (engine(),),
        model=ModelRef(uri="hf://Qwen/Qwen3-8B", name="qwen3"),
        cluster_selector=cluster_selector,
        tolerations=tuple(tolerations),
        serving_mode=serving_mode,
        queue=queue,
        priority_class_name=priority_class_name,
        template_labels=MappingProxyType(dict(template_labels or {})),
        namespace_labels=MappingProxyType(dict(namespace_labels or {})),
        exclusive_nodes=exclusive_nodes,
    )


def observed(
    dep: Deployment,
    *,
    cluster: str,
    index: int,
    pools: str | Mapping[str, str],
    ready: bool = True,
    name: str | None = None,
) -> ModelReplica:
    """An observed replica of `dep` as its spec stands, engines on `pools` (one pool, or per engine name)."""

    def pool_of(engine_name: str) -> str:
        return pools if isinstance(pools, str) else pools[engine_name]

    engines = tuple(
        PlacedEngine(
            name=e.name,
            copies=e.copies,
            phase=e.phase,
            parallelism=e.parallelism,
            members=tuple(
                PlacedMember(
                    role=m.role,
                    worker_nodes=m.worker_nodes,
                    pool=pool_of(e.name),
                    device_requests=tuple(
                        ResolvedDeviceRequest(
                            name=r.name, device_class_name=GPU_DRIVER, count=r.count, selectors=r.selectors
                        )
                        for r in m.device_requests
                    ),
                    constraints=m.constraints,
                    template=m.template,
                )
                for m in e.members
            ),
        )
        for e in dep.engines
    )
    return ModelReplica(
        namespace=dep.namespace,
        name=name or replica_name(dep.name, cluster, index),
        deployment=dep.name,
        cluster=cluster,
        index=index,
        engines=engines,
        provider_config_name=f"pc-{cluster}",
        workload_namespace=f"ws-{cluster}",
        model=dep.model,
        serving_mode=dep.serving_mode,
        queue=dep.queue or KAI_DEFAULT_QUEUE,
        priority_class_name=dep.priority_class_name or KAI_DEFAULT_PRIORITY_CLASS,
        labels=dep.template_labels,
        ready=ready,
        exclusive_nodes=dep.exclusive_nodes,
    )


@dataclass(frozen=True, kw_only=True)
class Outline:
    """A ScheduleResult in one screenful: placements, created, removed, the condition message and
    (when a case asks for them) per-cluster details."""

    replicas: tuple[str, ...] = ()  # "cluster/index engine@pool ..."
    created: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()  # "name: reason"
    message: str = ""
    details: Mapping[str, str] = field(default_factory=dict)


def placement(replica: ModelReplica) -> str:
    engines = " ".join(f"{e.name}@{e.members[0].pool}" for e in replica.engines)
    return f"{replica.cluster}/{replica.index} {engines}"


def outline(result: ScheduleResult, *, details: bool = False) -> Outline:
    return Outline(
        replicas=tuple(placement(r) for r in result.replicas),
        # replica names carry a hash; the outline names replicas by their identity, cluster/index
        created=tuple(sorted(f"{r.cluster}/{r.index}" for r in result.replicas if r.name in result.created)),
        removed=tuple(f"{r.cluster}/{r.index}: {r.reason}" for r in result.removed),
        message=result.diagnosis.message(),
        details={c: s.detail for c, s in result.diagnosis.statuses.items() if not s.fits} if details else {},
    )
