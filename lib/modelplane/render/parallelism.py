"""The LLMInferenceService `parallelism` of an engine, and KServe's pod-count rule for it.

KServe sizes each LeaderWorkerSet group from parallelism alone (`GetSize`): data parallelism
(`data`/`dataLocal`, set together) gives `max(data // dataLocal, 1)` pods, else `pipeline`, else
one. That group must be exactly the engine's gang, `1 + worker.nodes` pods (one for a Standalone
engine), or KServe would start pods the scheduler never placed. Its webhook also needs a worker to
come with pipeline or data parallelism, and rejects the two together.

Defaults when the engine leaves a field out: a Leader/Worker engine without data parallelism gets
`pipeline = 1 + worker.nodes`; `tensor` is the user's `--tensor-parallel-size` when the serving
args carry one (the flag itself is dropped, the preset sets it from `tensor`), else the GPUs per
node of the member that holds them. GPUs per node = the summed counts of the member's resolved
requests whose device class names a GPU (a NIC or other device requested beside it is not a
tensor shard); when no class says "gpu", all requests count.
"""

from __future__ import annotations

import re
from dataclasses import replace

from modelplane.model import Parallelism, PlacedEngine, PlacedMember, Role
from modelplane.render.rendered import RenderError

_GPU = re.compile(r"(^|[^a-z])gpu([^a-z]|$)")


def gpus_per_node(member: PlacedMember) -> int:
    """GPUs one pod of the member claims (0 for a claimless member)."""
    gpu = [r.count for r in member.device_requests if _GPU.search(r.device_class_name.lower())]
    return sum(gpu) if gpu else sum(r.count for r in member.device_requests)


def group_size(parallelism: Parallelism) -> int:
    """Pods per engine copy as KServe derives them from parallelism."""
    if parallelism.data is not None or parallelism.data_local is not None:
        return max((parallelism.data or 0) // (parallelism.data_local or 1), 1)
    return parallelism.pipeline or 1


def expected_group_size(engine: PlacedEngine) -> int:
    """Pods per engine copy as the scheduler placed them."""
    return sum(m.pods_per_copy for m in engine.members)


def _gpu_member(engine: PlacedEngine) -> PlacedMember:
    """The member whose GPUs size `tensor`: the workers when they claim, else the first claiming member."""
    by_role = {m.role: m for m in engine.members}
    worker = by_role.get(Role.WORKER)
    if worker is not None and worker.device_requests:
        return worker
    return next((m for m in engine.members if m.device_requests), engine.members[0])


def _check(engine: PlacedEngine, p: Parallelism) -> None:
    where = f"engine {engine.name}: parallelism"
    data_set, local_set = p.data is not None, p.data_local is not None
    if data_set != local_set:
        msg = f"{where}: data and dataLocal must be set together"
        raise RenderError(msg)
    if data_set and p.pipeline is not None:
        msg = f"{where}: pipeline and data parallelism cannot both be set"
        raise RenderError(msg)
    if data_set and (p.data or 0) % (p.data_local or 1):
        msg = f"{where}: data ({p.data}) must be a multiple of dataLocal ({p.data_local})"
        raise RenderError(msg)
    want, got = expected_group_size(engine), group_size(p)
    if got != want:
        shape = "a Standalone engine runs 1 pod" if want == 1 else f"1 leader + {want - 1} worker.nodes"
        msg = f"{where} makes KServe start {got} pod(s) per copy, but {shape}: " + (
            f"set data to {want} x dataLocal" if data_set else f"set pipeline to {want} or leave it out"
        )
        raise RenderError(msg)


def resolve(engine: PlacedEngine, *, tensor_hint: int | None) -> Parallelism:
    """The engine's parallelism with defaults filled in; RenderError when it contradicts the gang."""
    p = engine.parallelism or Parallelism()
    multi_node = expected_group_size(engine) > 1
    if multi_node and p.pipeline is None and p.data is None and p.data_local is None:
        p = replace(p, pipeline=expected_group_size(engine))
    if p.tensor is None:
        tensor = tensor_hint or gpus_per_node(_gpu_member(engine))
        p = replace(p, tensor=tensor or None)
    _check(engine, p)
    return p


def manifest(p: Parallelism) -> dict[str, int | bool]:
    """The LLMIS `parallelism` object (unset fields omitted)."""
    fields = {
        "tensor": p.tensor,
        "pipeline": p.pipeline,
        "data": p.data,
        "dataLocal": p.data_local,
        "expert": p.expert,
    }
    return {k: v for k, v in fields.items() if v is not None}
