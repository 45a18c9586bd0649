"""The LLMInferenceService `parallelism` of an engine: its defaults, and the rules KServe and vLLM impose.

KServe picks the preset that launches vLLM by shape (KS config_merge.go): no worker -> single node;
a worker with data parallelism -> `*-worker-data-parallel`; a worker with pipeline parallelism ->
`*-worker-pipeline-parallel`, a preset KServe does not ship (v0.16 to v0.20): without a config of
that name installed by the platform team, the LLMIS stays `PresetsCombined=False ConfigNotFound`
and nothing starts. Hence the defaults:

- a Leader/Worker engine defaults to data parallelism: every pod runs `dataLocal` ranks of `tensor`
  GPUs each, `data` = pods x dataLocal. `tensor` is the engine's, else the user's
  `--tensor-parallel-size`, else 1; `dataLocal` is then the pod's GPUs / tensor. `expert` (the
  presets' `--enable-expert-parallel`, which spreads a MoE model's experts over every rank) is
  set only when no tensor size was given: one GPU per rank across pods is KServe's dp-ep shape,
  which holds a large model only with its experts spread. A user who asked for tensor parallelism
  (a dense model over the GPUs of a rank) gets no `expert` unless they set it;
- pipeline parallelism only when the engine asks for it, `tensor` = the pod's GPUs (`notes` says
  what KServe needs for it);
- a single-node engine: `tensor` = the pod's GPUs / dataLocal (dataLocal 1 unless set).

Checks, each a RenderError: KServe's group size (`GetSize`: max(data // dataLocal, 1) with data
parallelism, else pipeline, else 1) must be the engine's gang, 1 + worker.nodes pods, or KServe
would start pods the scheduler never placed; its webhook rules (a worker needs data or pipeline,
not both; data comes with dataLocal); and tensor x dataLocal must equal the GPUs each pod claims,
because the presets start that many ranks per pod, on the leader too (a leader that claims no GPU
cannot run its ranks). Members with their own `command` run their own launcher and are not
checked. GPUs of a pod = the summed counts of its resolved requests whose device class names a
GPU (a NIC requested beside them is not a rank); when no class says "gpu", all requests count.
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
    """The member whose GPUs size the ranks: the workers when they claim, else the first claiming member."""
    by_role = {m.role: m for m in engine.members}
    worker = by_role.get(Role.WORKER)
    if worker is not None and worker.device_requests:
        return worker
    return next((m for m in engine.members if m.device_requests), engine.members[0])


def _defaults(engine: PlacedEngine, p: Parallelism, tensor_hint: int | None) -> Parallelism:
    gpus = gpus_per_node(_gpu_member(engine))
    pods = expected_group_size(engine)
    data_set = p.data is not None or p.data_local is not None
    if pods > 1 and p.pipeline is None and not data_set:
        tensor = p.tensor or tensor_hint or 1
        local = max(gpus // tensor, 1)
        expert = p.expert
        if expert is None and p.tensor is None and tensor_hint is None:
            expert = True  # the dp-ep shape: one GPU per rank only fits with the experts spread
        return replace(p, tensor=tensor, data_local=local, data=pods * local, expert=expert)
    if p.tensor is None:
        per_rank = gpus // (p.data_local or 1) if p.pipeline is None else gpus
        return replace(p, tensor=tensor_hint or per_rank or None)
    return p


def _check_kserve(engine: PlacedEngine, p: Parallelism) -> None:
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


def _check_gpus(engine: PlacedEngine, p: Parallelism, launched: tuple[PlacedMember, ...]) -> None:
    """tensor x dataLocal GPUs per pod, on every pod the preset launches."""
    if not any(m.device_requests for m in engine.members) or p.tensor is None:
        return
    ranks = p.tensor * (p.data_local or 1)
    for member in launched:
        claimed = gpus_per_node(member)
        if claimed == ranks:
            continue
        formula = f"tensor ({p.tensor}) x dataLocal ({p.data_local})" if p.data_local else f"tensor ({p.tensor})"
        if claimed == 0:
            msg = (
                f"engine {engine.name}: {member.role} pods claim no GPU, but KServe's preset runs {formula} = "
                f"{ranks} GPU(s) of vLLM ranks on every pod, the leader too: give the {member.role} the same "
                "nodeSelector devices as the Worker"
            )
        else:
            msg = (
                f"engine {engine.name}: parallelism {formula} = {ranks} GPU(s) per pod, but {member.role} pods "
                f"claim {claimed}: make them equal"
            )
        raise RenderError(msg)


def resolve(
    engine: PlacedEngine, *, tensor_hint: int | None, launched: tuple[PlacedMember, ...] | None = None
) -> Parallelism:
    """The engine's parallelism with defaults filled in; RenderError when KServe or vLLM would refuse it.

    `launched`: the members whose pods run the preset's vLLM launcher (default: every member).
    """
    p = _defaults(engine, engine.parallelism or Parallelism(), tensor_hint)
    _check_kserve(engine, p)
    _check_gpus(engine, p, engine.members if launched is None else launched)
    return p


def needs_pipeline_config(engine: PlacedEngine, p: Parallelism) -> bool:
    """True when KServe will look for a pipeline-parallel worker preset it does not ship."""
    return expected_group_size(engine) > 1 and p.pipeline is not None


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
