"""Renderers: one ModelReplica -> the manifests its cluster needs, each wrapped in an Object.

`render_replica` is pure and deterministic (engines, members and requests are sorted; the result
is ordered by key). It returns, per replica:

- `llmis-<engine>`: a KServe LLMInferenceService per engine in Unified mode, or one for the
  replica in PrefillDecode mode (keyed by its Decode engine); these are the readiness sources;
- `claim-<engine>-<role>`: a DRA ResourceClaimTemplate per member that resolved device requests;
- `podgroup`: the KAI PodGroup gang-scheduling the whole replica.

Names on the workload cluster come from `names.workload_name` over (deployment namespace,
deployment, index, cluster, engine, role): always hash-suffixed, so they never collide between
deployments, namespaces or clusters sharing a workload namespace. LLMInferenceService names are
capped at 36 characters because KServe derives longer names from them (`<name>-kserve-mn-prefill`,
`<name>-kserve-router-scheduler`, pod hostnames) that must stay within 63. Object names use the
same scheme over the key.

A spec that cannot be rendered (no model, a member shape other than Standalone or Leader+Worker,
parallelism contradicting the gang, PrefillDecode without exactly one engine per phase) raises
RenderError (reason CannotRender); nothing is half rendered.
"""

from __future__ import annotations

from modelplane import names
from modelplane.model import ModelReplica, Phase, PlacedEngine, PlacedMember, ServingMode
from modelplane.render.claims import resource_claim_template
from modelplane.render.llmis import llm_inference_service, members, workload
from modelplane.render.podgroup import pod_group
from modelplane.render.rendered import RenderedObject, RenderError
from modelplane.render.wrap import wrap

__all__ = ["LLMIS_NAME_MAX", "RenderError", "RenderedObject", "render_replica"]

LLMIS_NAME_MAX = 36
NO_MODEL = "no model: set spec.template.spec.model or --model in the engine args"


def _name(replica: ModelReplica, *parts: str, max_length: int = names.MAX_NAME) -> str:
    return names.workload_name(
        replica.namespace, replica.deployment, replica.index, replica.cluster, *parts, max_length=max_length
    )


def _identity(replica: ModelReplica) -> dict[str, str]:
    """Labels every workload manifest carries: the deployment's template labels, then ours."""
    return {
        **replica.labels,
        names.LABEL_DEPLOYMENT: replica.deployment,
        names.LABEL_DEPLOYMENT_NAMESPACE: replica.namespace,
        names.LABEL_CLUSTER: replica.cluster,
        names.LABEL_REPLICA_INDEX: str(replica.index),
        names.LABEL_REPLICA: replica.name,
    }


def _workloads(replica: ModelReplica, engines: list[PlacedEngine]) -> list[tuple[PlacedEngine, PlacedEngine | None]]:
    """(main engine, prefill engine or None) per LLMInferenceService."""
    if replica.serving_mode is ServingMode.UNIFIED:
        return [(e, None) for e in engines]
    by_phase = {p: [e for e in engines if e.phase is p] for p in Phase}
    if len(engines) != 2 or any(len(found) != 1 for found in by_phase.values()):  # noqa: PLR2004
        msg = "PrefillDecode mode needs exactly two engines, one with phase Prefill and one with phase Decode"
        raise RenderError(msg)
    return [(by_phase[Phase.DECODE][0], by_phase[Phase.PREFILL][0])]


def render_replica(replica: ModelReplica) -> tuple[RenderedObject, ...]:
    """Every manifest the replica needs on its cluster, wrapped and ordered by key."""
    if replica.model is None:
        raise RenderError(NO_MODEL)
    if not replica.provider_config_name:
        msg = "no providerConfigRef: the replica does not say how to reach its cluster"
        raise RenderError(msg)
    engines = sorted(replica.engines, key=lambda e: e.name)
    if not engines:
        msg = "no engines to render"
        raise RenderError(msg)
    for engine in engines:
        members(engine)  # check every member shape before rendering anything
    identity = _identity(replica)
    pod_group_name = _name(replica, "podgroup")
    rendered: list[RenderedObject] = []

    def add(key: str, manifest: dict[str, object], *, readiness_source: bool = False) -> None:
        rendered.append(
            wrap(
                manifest,
                key=key,
                name=_name(replica, key),
                namespace=replica.namespace,
                labels=identity,
                provider_config=replica.provider_config_name,
                readiness_source=readiness_source,
            )
        )

    def claim_name(engine: PlacedEngine, member: PlacedMember) -> str | None:
        return _name(replica, engine.name, member.role.lower()) if member.device_requests else None

    for engine in engines:
        for member in sorted(engine.members, key=lambda m: m.role):
            name = claim_name(engine, member)
            if name is not None:
                labels = {**identity, names.LABEL_ENGINE: engine.name}
                manifest = resource_claim_template(
                    member, name=name, namespace=replica.workload_namespace, labels=labels
                )
                add(f"claim-{engine.name}-{member.role.lower()}", manifest)

    def spec_of(engine: PlacedEngine) -> dict[str, object]:
        return workload(
            engine,
            claim_name=claim_name,
            queue=replica.queue,
            pod_group=pod_group_name,
            identity={**identity, names.LABEL_ENGINE: engine.name},
        )

    for main, prefill in _workloads(replica, engines):
        labels = identity if prefill is not None else {**identity, names.LABEL_ENGINE: main.name}
        manifest = llm_inference_service(
            name=_name(replica, main.name, max_length=LLMIS_NAME_MAX),
            namespace=replica.workload_namespace,
            labels=labels,
            model=replica.model,
            main=spec_of(main),
            prefill=spec_of(prefill) if prefill is not None else None,
        )
        add(f"llmis-{main.name}", manifest, readiness_source=True)

    add("podgroup", pod_group(replica, name=pod_group_name, labels=identity))
    return tuple(sorted(rendered, key=lambda r: r.key))
