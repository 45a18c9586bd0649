"""KServe LLMInferenceService (serving.kserve.io/v1alpha1, served by KServe v0.16 and later) of a replica.

Unified mode renders one per engine; PrefillDecode renders one per replica, the Decode engine as
the main workload and the Prefill engine as `spec.prefill`. Per workload: `replicas` = engine
copies; the Standalone or Leader member's PodSpec is `template`, the Worker's is `worker` (its
presence makes KServe build a LeaderWorkerSet); `parallelism` as resolved by `parallelism`.

Pod metadata: `template`/`worker` are PodSpecs, so pod labels and annotations go in the workload's
`labels`/`annotations`, which KServe copies onto every pod of that workload (leader and workers
alike). Prefill pods get `spec.prefill.labels`/`annotations` only, so each workload carries all of
ours. Labels (see `labels`): the member templates' labels without KServe's reserved keys (the
Leader's value wins over the Worker's), then the replica's identity, the engine and KAI's
`kai.scheduler/queue` and `kai.scheduler/subgroup-name` = engine name. Annotations: the member
templates', then KAI's `pod-group-name` and `kai.scheduler/skip-podgrouper: "true"`. The skip is an
annotation because KAI's pod-grouper reads it from annotations only (KAI
pkg/podgrouper/pod_controller.go `shouldSkipPodGrouper`, v0.15+); as a label it is ignored and the
pod-grouper regroups every pod into a PodGroup of its own.

KServe 0.16 has no workload `labels`/`annotations` (they arrive in 0.17; 0.16 copies only Kueue and
CNI keys from the LLMIS metadata onto pods, KS v0.16.0 workload_single_node.go
`propagateDeploymentMetadata`): for a 0.16 cluster (`Convention.pod_metadata`) neither is rendered,
so the pods carry no KAI wiring and KAI's pod-grouper groups them itself.

`spec.model.name` defaults to the URI without its scheme (`hf://Qwen/Qwen3-8B` -> `Qwen/Qwen3-8B`):
KServe would otherwise serve the model under the generated object name.

KServe runs Go's text/template over the whole merged spec (KS config_merge.go `ReplaceVariables`,
since v0.16), so a user's `{{` (a chat template in an arg, say) would be parsed as a template
action and the reconcile would fail or substitute. Every `{{` in the spec is written as
``{{`{{`}}``, which the template renders back to `{{` (`go_template_literal`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from modelplane.model import ModelRef, Parallelism, PlacedEngine, PlacedMember, Role, Toleration
from modelplane.render import parallelism
from modelplane.render.args import tensor_parallel_size
from modelplane.render.labels import user_pod_labels
from modelplane.render.launch import DECODE_PORT, PORT, Convention, Launcher
from modelplane.render.pod import pod_spec, template_metadata, user_args, uses_preset_launcher
from modelplane.render.rendered import RenderError

KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_SUBGROUP_LABEL = "kai.scheduler/subgroup-name"
KAI_SKIP_PODGROUPER_ANNOTATION = "kai.scheduler/skip-podgrouper"
KAI_POD_GROUP_ANNOTATION = "pod-group-name"

ClaimName = Callable[[PlacedEngine, PlacedMember], str | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """One LLMIS workload (the top-level spec fields, or `spec.prefill`) and what it was built from."""

    spec: Mapping[str, Any]
    parallelism: Parallelism
    members: tuple[PlacedMember, ...]  # template member first


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


def _metadata(field: str, pods: tuple[PlacedMember, ...]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for member in reversed(pods):  # the Leader last: its values win
        merged.update(template_metadata(member, field))
    return merged


def workload(
    engine: PlacedEngine,
    *,
    claim_name: ClaimName,
    queue: str,
    pod_group: str,
    identity: Mapping[str, str],
    tolerations: tuple[Toleration, ...],
    convention: Convention,
    model_name: str,
    decode: bool = False,
    exclusive_of: tuple[str, str] | None = None,
    cache_claim: str | None = None,
) -> Workload:
    """The LLMIS workload of an engine (`decode`: the main workload of a PrefillDecode LLMIS;
    `cache_claim`: the ModelCache claim every pod serves from)."""
    main, worker = members(engine)
    pods = (main,) if worker is None else (main, worker)
    resolved = parallelism.resolve(
        engine,
        tensor_hint=tensor_parallel_size(user_args(main)),
        launched=tuple(m for m in pods if uses_preset_launcher(m)),
    )
    labels = {
        **user_pod_labels(_metadata("labels", pods)),
        **identity,
        KAI_QUEUE_LABEL: queue,
        KAI_SUBGROUP_LABEL: engine.name,
    }
    annotations = {
        **_metadata("annotations", pods),
        KAI_POD_GROUP_ANNOTATION: pod_group,
        KAI_SKIP_PODGROUPER_ANNOTATION: "true",
    }
    launcher = Launcher(
        convention=convention,
        multi_node=worker is not None,
        model_name=model_name,
        port=DECODE_PORT if decode else PORT,
        tensor=resolved.tensor,
    )
    spec: dict[str, Any] = {"replicas": engine.copies}
    if convention.pod_metadata:
        spec["labels"] = dict(sorted(labels.items()))
        spec["annotations"] = dict(sorted(annotations.items()))
    spec["template"] = pod_spec(
        main,
        claim_template=claim_name(engine, main),
        tolerations=tolerations,
        launcher=launcher,
        exclusive_of=exclusive_of,
        cache_claim=cache_claim,
    )
    par = parallelism.manifest(resolved)
    if par:
        spec["parallelism"] = par
    if worker is not None:
        spec["worker"] = pod_spec(
            worker,
            claim_template=claim_name(engine, worker),
            tolerations=tolerations,
            launcher=launcher,
            exclusive_of=exclusive_of,
            cache_claim=cache_claim,
        )
    return Workload(spec=spec, parallelism=resolved, members=pods)


def go_template_literal(value: Any) -> Any:
    """`value` with every `{{` in its strings escaped for KServe's template pass."""
    if isinstance(value, str):
        return value.replace("{{", "{{`{{`}}")
    if isinstance(value, Mapping):
        return {k: go_template_literal(v) for k, v in cast("Mapping[str, Any]", value).items()}
    if isinstance(value, list):
        return [go_template_literal(v) for v in cast("list[Any]", value)]
    return value


def llm_inference_service(
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    model: ModelRef,
    main: Workload,
    prefill: Workload | None,
    router: Mapping[str, Any] | None,
    base_refs: tuple[str, ...],
) -> dict[str, Any]:
    """The LLMIS manifest from its rendered workloads."""
    spec: dict[str, Any] = {"model": go_template_literal(model_spec(model)), **go_template_literal(main.spec)}
    if prefill is not None:
        spec["prefill"] = go_template_literal(prefill.spec)
    if router is not None:
        spec["router"] = go_template_literal(router)
    if base_refs:
        spec["baseRefs"] = [{"name": n} for n in base_refs]
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "LLMInferenceService",
        "metadata": metadata,
        "spec": spec,
    }
