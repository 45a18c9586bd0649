"""KServe LLMInferenceService (serving.kserve.io/v1alpha1) of one replica.

Unified mode renders one per engine; PrefillDecode renders one per replica, the Decode engine as
the main workload and the Prefill engine as `spec.prefill`. Per workload: `replicas` = engine
copies; the Standalone or Leader member's PodSpec is `template`, the Worker's is `worker` (its
presence makes KServe build a LeaderWorkerSet); `parallelism` as resolved by `parallelism`.

Pod metadata: `template`/`worker` are PodSpecs, so pod labels and annotations go in the workload's
`labels`/`annotations`, which KServe copies onto every pod of that workload (leader and workers
alike). They carry the member templates' labels/annotations (the Leader's value wins over the
Worker's on a key clash), the replica's identity labels and the KAI binding: label
`kai.scheduler/queue`, `kai.scheduler/subgroup-name` = engine name, `kai.scheduler/skip-podgrouper`
"true", annotation `pod-group-name`. Our keys win over the user's. In PrefillDecode mode KServe
uses `spec.labels` as the base of the prefill pods' labels with `spec.prefill.labels` on top, so
the prefill workload sets every key of ours itself (a decode template's own labels do reach the
prefill pods).

`spec.model.name` defaults to the URI without its scheme (`hf://Qwen/Qwen3-8B` -> `Qwen/Qwen3-8B`):
KServe would otherwise serve the model under the generated object name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from modelplane.model import ModelRef, PlacedEngine, PlacedMember, Role
from modelplane.render import parallelism
from modelplane.render.args import tensor_parallel_size
from modelplane.render.pod import pod_spec, template_metadata, user_args
from modelplane.render.rendered import RenderError

KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_SUBGROUP_LABEL = "kai.scheduler/subgroup-name"
KAI_SKIP_PODGROUPER_LABEL = "kai.scheduler/skip-podgrouper"
KAI_POD_GROUP_ANNOTATION = "pod-group-name"

ClaimName = Callable[[PlacedEngine, PlacedMember], str | None]


def model_spec(model: ModelRef) -> dict[str, str]:
    """`spec.model`: the URI and the name clients request."""
    return {"uri": model.uri, "name": model.name or model.uri.partition("://")[2] or model.uri}


def members(engine: PlacedEngine) -> tuple[PlacedMember, PlacedMember | None]:
    """(the member whose PodSpec is `template`, the Worker or None); RenderError on another shape."""
    roles = sorted(m.role for m in engine.members)
    by_role = {m.role: m for m in engine.members}
    if roles == [Role.STANDALONE]:
        return by_role[Role.STANDALONE], None
    if roles == sorted([Role.LEADER, Role.WORKER]) and by_role[Role.WORKER].worker_nodes >= 1:
        return by_role[Role.LEADER], by_role[Role.WORKER]
    msg = (
        f"engine {engine.name}: members must be one Standalone, or one Leader and one Worker with "
        f"worker.nodes >= 1 (got {', '.join(roles) or 'none'})"
    )
    raise RenderError(msg)


def _metadata(field: str, pods: tuple[PlacedMember, ...], ours: Mapping[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for member in reversed(pods):  # the Leader last: its values win
        merged.update(template_metadata(member, field))
    merged.update(ours)
    return dict(sorted(merged.items()))


def workload(
    engine: PlacedEngine,
    *,
    claim_name: ClaimName,
    queue: str,
    pod_group: str,
    identity: Mapping[str, str],
) -> dict[str, Any]:
    """One LLMIS workload (the top-level spec fields, or `spec.prefill`) for an engine."""
    main, worker = members(engine)
    pods = (main,) if worker is None else (main, worker)
    resolved = parallelism.resolve(engine, tensor_hint=tensor_parallel_size(user_args(main)))
    labels = {
        **identity,
        KAI_QUEUE_LABEL: queue,
        KAI_SUBGROUP_LABEL: engine.name,
        KAI_SKIP_PODGROUPER_LABEL: "true",
    }
    spec: dict[str, Any] = {
        "replicas": engine.copies,
        "labels": _metadata("labels", pods, labels),
        "annotations": _metadata("annotations", pods, {KAI_POD_GROUP_ANNOTATION: pod_group}),
        "template": pod_spec(main, claim_template=claim_name(engine, main)),
    }
    par = parallelism.manifest(resolved)
    if par:
        spec["parallelism"] = par
    if worker is not None:
        spec["worker"] = pod_spec(worker, claim_template=claim_name(engine, worker))
    return spec


def llm_inference_service(
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    model: ModelRef,
    main: Mapping[str, Any],
    prefill: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The LLMIS manifest from its rendered workloads."""
    spec: dict[str, Any] = {"model": model_spec(model), **main}
    if prefill is not None:
        spec["prefill"] = dict(prefill)
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": spec,
    }
