"""Keyword-only builders of placed replicas for the renderer unit tests."""

from collections.abc import Mapping
from typing import Any

from modelplane.model import (
    DeviceConstraint,
    ModelRef,
    ModelReplica,
    Parallelism,
    Phase,
    PlacedEngine,
    PlacedMember,
    ResolvedDeviceRequest,
    Role,
    ServingMode,
    Toleration,
)
from modelplane.names import KAI_DEFAULT_QUEUE

QWEN = ModelRef(uri="hf://Qwen/Qwen3-8B")


def gpus(count: int = 1, *, name: str = "gpu", device_class: str = "gpu.nvidia.com") -> ResolvedDeviceRequest:
    return ResolvedDeviceRequest(name=name, device_class_name=device_class, count=count)


IMAGE = "vllm/vllm-openai:v0.11.0"


def container_template(
    *,
    args: tuple[str, ...] = (),
    command: tuple[str, ...] | None = None,
    image: str | None = IMAGE,
    env: tuple[Mapping[str, Any], ...] = (),
    security_context: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> Mapping[str, Any]:
    container: dict[str, Any] = {"name": "engine"}
    if image is not None:
        container["image"] = image
    if args:
        container["args"] = list(args)
    if command is not None:
        container["command"] = list(command)
    if env:
        container["env"] = [dict(e) for e in env]
    if security_context is not None:
        container["securityContext"] = dict(security_context)
    template: dict[str, Any] = {"spec": {"containers": [container]}}
    metadata = {k: dict(v) for k, v in (("labels", labels), ("annotations", annotations)) if v is not None}
    if metadata:
        template["metadata"] = metadata
    return template


def member(
    role: Role = Role.STANDALONE,
    *,
    worker_nodes: int = 0,
    pool: str = "h100",
    requests: tuple[ResolvedDeviceRequest, ...] = (),
    constraints: tuple[DeviceConstraint, ...] = (),
    args: tuple[str, ...] = (),
    template: Mapping[str, Any] | None = None,
) -> PlacedMember:
    return PlacedMember(
        role=role,
        worker_nodes=worker_nodes,
        pool=pool,
        device_requests=requests,
        constraints=constraints,
        template=container_template(args=args) if template is None else template,
    )


def standalone(*, gpu_count: int = 1, args: tuple[str, ...] = ()) -> tuple[PlacedMember, ...]:
    return (member(requests=(gpus(gpu_count),), args=args),)


def leader_worker(
    *, nodes: int, gpu_count: int = 8, leader_claims: bool = True, args: tuple[str, ...] = ()
) -> tuple[PlacedMember, ...]:
    leader_requests = (gpus(gpu_count),) if leader_claims else ()
    return (
        member(Role.LEADER, requests=leader_requests, args=args),
        member(Role.WORKER, worker_nodes=nodes, requests=(gpus(gpu_count),)),
    )


def engine(
    name: str = "main",
    *,
    copies: int = 1,
    phase: Phase | None = None,
    parallelism: Parallelism | None = None,
    members: tuple[PlacedMember, ...] | None = None,
) -> PlacedEngine:
    return PlacedEngine(
        name=name,
        copies=copies,
        phase=phase,
        parallelism=parallelism,
        members=standalone() if members is None else members,
    )


def replica(
    *,
    namespace: str = "team-a",
    deployment: str = "qwen",
    cluster: str = "gpu-east",
    index: int = 0,
    engines: tuple[PlacedEngine, ...] | None = None,
    serving_mode: ServingMode = ServingMode.UNIFIED,
    model: ModelRef | None = QWEN,
    provider_config_name: str = "gpu-east",
    queue: str = KAI_DEFAULT_QUEUE,
    labels: Mapping[str, str] | None = None,
    tolerations: tuple[Toleration, ...] = (),
    router: Mapping[str, Any] | None = None,
    base_refs: tuple[str, ...] = (),
    kserve_version: str | None = None,
) -> ModelReplica:
    return ModelReplica(
        namespace=namespace,
        name=f"{deployment}-{cluster}-{index}",
        deployment=deployment,
        cluster=cluster,
        index=index,
        engines=(engine(),) if engines is None else engines,
        provider_config_name=provider_config_name,
        model=model,
        serving_mode=serving_mode,
        queue=queue,
        labels=labels or {},
        tolerations=tolerations,
        router=router,
        base_refs=base_refs,
        kserve_version=kserve_version,
    )
