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
)

QWEN = ModelRef(uri="hf://Qwen/Qwen3-8B")


def gpus(count: int = 1, *, name: str = "gpu", device_class: str = "gpu.nvidia.com") -> ResolvedDeviceRequest:
    return ResolvedDeviceRequest(name=name, device_class_name=device_class, count=count)


def container_template(*, args: tuple[str, ...] = (), command: tuple[str, ...] | None = None) -> Mapping[str, Any]:
    container: dict[str, Any] = {"name": "engine", "image": "vllm/vllm-openai:v0.11.0"}
    if args:
        container["args"] = list(args)
    if command is not None:
        container["command"] = list(command)
    return {"spec": {"containers": [container]}}


def member(
    role: Role = Role.STANDALONE,
    *,
    worker_nodes: int = 0,
    pool: str = "h100",
    requests: tuple[ResolvedDeviceRequest, ...] = (),
    constraints: tuple[DeviceConstraint, ...] = (),
    args: tuple[str, ...] = (),
) -> PlacedMember:
    return PlacedMember(
        role=role,
        worker_nodes=worker_nodes,
        pool=pool,
        device_requests=requests,
        constraints=constraints,
        template=container_template(args=args),
    )


def standalone(*, gpu_count: int = 1, args: tuple[str, ...] = ()) -> tuple[PlacedMember, ...]:
    return (member(requests=(gpus(gpu_count),), args=args),)


def leader_worker(
    *, nodes: int, gpu_count: int = 8, leader_claims: bool = False, args: tuple[str, ...] = ()
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
    queue: str = "default",
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
    )
