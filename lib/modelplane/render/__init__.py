"""Renderers: one ModelReplica -> the manifests its cluster needs, each wrapped in an Object.

`render_replica` is pure and deterministic (engines, members and requests are sorted; the result
is ordered by key). It returns, per replica:

- `llmis-<engine>-<digest>`: a KServe LLMInferenceService per engine in Unified mode, or one for
  the replica in PrefillDecode mode (keyed by its Decode engine); these are the readiness sources;
- `claim-<engine>-<role>-<digest>`: a DRA ResourceClaimTemplate per member that resolved device
  requests;
- `podgroup`: the KAI PodGroup gang-scheduling the whole replica (not for KServe 0.16, whose pods
  cannot be labelled to join it: see `llmis`).

The replica's `kserve_version` (its cluster's) picks how args reach vLLM (`launch`); a later 0.x
minor than this renderer knows is rendered as the newest it knows, which `render_notes` says; any
other version is a RenderError.

Names on the workload cluster come from `names.workload_name` over (deployment namespace,
deployment, index, cluster, engine, role, ...): always hash-suffixed, so they never collide between
deployments, namespaces or clusters sharing a workload namespace.

Updates never hit an immutable field. A ResourceClaimTemplate's spec is immutable, so its name and
key carry a digest of its content: a changed device request is a new template; the ModelReplica
handler keeps composing the old one while the workload may still use it, and Crossplane deletes it
after. An LLMIS's total parallelism size is immutable
(KServe's webhook) and its pod labels end up in a Deployment's immutable selector (see `labels`),
so its name and key carry a digest of both: a change of group size or pod labels replaces the
LLMIS (its pods restart) instead of leaving the Object out of sync.

A replica's template revision (modelplane.ai/revision) is part of that digest too, so moving a
replica to a new revision replaces its LLMIS rather than updating it in place. In place, KServe's
single-node Deployment keeps its default RollingUpdate (25% surge: one more pod before the old one
goes) and its LeaderWorkerSet takes a group down first (maxUnavailable 1, maxSurge 0;
KS workload_multi_node.go sets no rollout configuration): on a pool where the ledger reserved
exactly the replica's nodes, the surge pod never schedules, the update never completes and the old
pod serves on while the LLMIS stays Ready. Replaced, the old pods go, the new ones take the same
nodes, and the replica reads not Ready until the new LLMIS is, which is what the rollout counts.
Replicas without a revision (from before revisions) keep their names and update in place.

LLMIS names are at most LLMIS_NAME_MAX characters. KServe derives the prefill LeaderWorkerSet
`<name>-kserve-mn-prefill` from it (KS workload_multi_node.go); LWS names its leader StatefulSet
after the LWS and each group's worker StatefulSet `<lws>-<group index>` (lws pod_controller.go),
and a StatefulSet name may have at most 52 characters because its pods carry
`controller-revision-hash: <name>-<10-character hash>`, a label value of at most 63. With group
indices up to 63 (64 copies) that leaves 52 - 18 - 3 = 31. Every other KServe child name is
`kmeta.ChildName(<name>, <suffix>)`, valid at any length.

A spec that cannot be rendered (no model, a ModelCache whose claim its pods cannot mount, an
unknown KServe version, a member shape other than Standalone or Leader+Worker, parallelism KServe
or vLLM would refuse, PrefillDecode without exactly one engine per phase or without a router
scheduler) raises RenderError (reason CannotRender); nothing is half rendered.
`render_notes` says what a rendered replica still needs from the cluster.
"""

from __future__ import annotations

from typing import Any

from modelplane import cache, names
from modelplane.cache import served_from_cache
from modelplane.model import ModelRef, ModelReplica, Phase, PlacedEngine, PlacedMember, ServingMode, kserve_assumed
from modelplane.render import parallelism
from modelplane.render.args import tensor_parallel_size
from modelplane.render.claims import resource_claim_template
from modelplane.render.labels import digest, llmis_metadata_labels
from modelplane.render.launch import convention
from modelplane.render.llmis import Workload, llm_inference_service, members, model_spec, workload
from modelplane.render.pod import user_args
from modelplane.render.podgroup import pod_group
from modelplane.render.rendered import RenderedObject, RenderError
from modelplane.render.router import router
from modelplane.render.storage import storage_secret, storage_secret_annotations
from modelplane.render.wrap import wrap

__all__ = ["LLMIS_NAME_MAX", "RenderError", "RenderedObject", "render_notes", "render_replica"]

MAX_COPIES = 64  # the XRDs' bound on an engine's copies: LWS group indices 0..63
STATEFULSET_NAME_MAX = 52
LONGEST_KSERVE_LWS_SUFFIX = "-kserve-mn-prefill"
LLMIS_NAME_MAX = STATEFULSET_NAME_MAX - len(LONGEST_KSERVE_LWS_SUFFIX) - len(f"-{MAX_COPIES - 1}")
NO_MODEL = "no model: set spec.template.spec.model or --model in the engine args"


def _name(replica: ModelReplica, *parts: str, max_length: int = names.MAX_NAME) -> str:
    return names.workload_name(
        replica.namespace, replica.deployment, replica.index, replica.cluster, *parts, max_length=max_length
    )


def _identity(replica: ModelReplica) -> dict[str, str]:
    """Our labels: stable for the life of every object a replica renders."""
    return {
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


def _checked(replica: ModelReplica) -> tuple[ModelRef, list[PlacedEngine]]:
    """The model and the engines in name order, once every shape is known to render."""
    model = replica.model
    if (
        replica.model_cache is not None
    ):  # as the deployment resolved it, or named after the cache (Modelplane's replicas)
        model = served_from_cache(model, namespace=replica.namespace, cache=replica.model_cache, served_name=None)
    if model is None:
        raise RenderError(NO_MODEL)
    if replica.model_cache is not None and replica.workload_namespace != cache.VOLUME_NAMESPACE:
        # placement never puts a replica here (scheduler/filters.py); one kept from before would not start
        msg = (
            f"ModelCache {replica.model_cache}'s claim is in namespace {cache.VOLUME_NAMESPACE} and a pod mounts only "
            f"a claim of its own namespace; set the cluster's workloadNamespace to {cache.VOLUME_NAMESPACE}"
        )
        raise RenderError(msg)
    if not replica.provider_config_name:
        msg = "no providerConfigRef: the replica does not say how to reach its cluster"
        raise RenderError(msg)
    engines = sorted(replica.engines, key=lambda e: e.name)
    if not engines:
        msg = "no engines to render"
        raise RenderError(msg)
    for engine in engines:
        members(engine)  # check every member shape before rendering anything
    return model, engines


def _shape(w: Workload) -> dict[str, Any]:
    """What of a workload KServe cannot update in place: its pod labels (none on 0.16) and its group size."""
    return {"labels": w.spec.get("labels"), "size": parallelism.group_size(w.parallelism)}


def render_replica(replica: ModelReplica) -> tuple[RenderedObject, ...]:
    """Every manifest the replica needs on its cluster, wrapped and ordered by key."""
    model, engines = _checked(replica)
    kserve = convention(replica.kserve_version)
    identity = _identity(replica)
    object_labels = {**replica.labels, **identity}
    pod_group_name = _name(replica, "podgroup")
    cache_claim = None if replica.model_cache is None else cache.claim_name(replica.namespace, replica.model_cache)
    rendered: list[RenderedObject] = []
    claim_names: dict[tuple[str, str], str] = {}

    def add(key: str, manifest: dict[str, Any], *, readiness_source: bool = False) -> None:
        rendered.append(
            wrap(
                manifest,
                key=key,
                name=_name(replica, key),
                namespace=replica.namespace,
                labels=object_labels,
                provider_config=replica.provider_config_name,
                readiness_source=readiness_source,
            )
        )

    for engine in engines:
        for member in sorted(engine.members, key=lambda m: m.role):
            if not member.device_requests:
                continue
            role = member.role.lower()
            content = resource_claim_template(member, name="", namespace="", labels={})["spec"]
            key = f"claim-{engine.name}-{role}-{digest(content)}"
            name = _name(replica, engine.name, role, digest(content))
            claim_names[engine.name, member.role] = name
            labels = {**object_labels, names.LABEL_ENGINE: engine.name}
            add(key, resource_claim_template(member, name=name, namespace=replica.workload_namespace, labels=labels))

    def claim_name(engine: PlacedEngine, member: PlacedMember) -> str | None:
        return claim_names.get((engine.name, member.role))

    def workload_of(engine: PlacedEngine, *, decode: bool = False) -> Workload:
        return workload(
            engine,
            claim_name=claim_name,
            queue=replica.queue,
            pod_group=pod_group_name,
            identity={**identity, names.LABEL_ENGINE: engine.name},
            tolerations=replica.tolerations,
            convention=kserve,
            model_name=model_spec(model)["name"],
            decode=decode,
            exclusive_of=(replica.namespace, replica.deployment) if replica.exclusive_nodes else None,
            cache_claim=cache_claim,
        )

    llmis_router = router(replica.serving_mode, replica.router)
    for main_engine, prefill_engine in _workloads(replica, engines):
        prefill = workload_of(prefill_engine) if prefill_engine is not None else None
        main = workload_of(main_engine, decode=prefill is not None)
        what: dict[str, Any] = {"main": _shape(main), "prefill": _shape(prefill) if prefill else None}
        if replica.revision is not None:  # a new template revision is a new workload: see the module docstring
            what["revision"] = replica.revision
        shape = digest(what)
        labels = object_labels if prefill is not None else {**object_labels, names.LABEL_ENGINE: main_engine.name}
        secret = storage_secret(model, (*main.members, *(prefill.members if prefill else ())))
        manifest = llm_inference_service(
            name=_name(replica, main_engine.name, shape, max_length=LLMIS_NAME_MAX),
            namespace=replica.workload_namespace,
            labels=llmis_metadata_labels(labels),
            annotations=storage_secret_annotations(secret),
            model=model,
            main=main,
            prefill=prefill,
            router=llmis_router,
            base_refs=replica.base_refs,
        )
        add(f"llmis-{main_engine.name}-{shape}", manifest, readiness_source=True)

    if kserve.pod_metadata:
        add("podgroup", pod_group(replica, name=pod_group_name, labels=object_labels))
    return tuple(sorted(rendered, key=lambda r: r.key))


def _pipeline_preset(replica: ModelReplica, engine: PlacedEngine) -> str:
    if replica.serving_mode is ServingMode.UNIFIED:
        return "kserve-config-llm-worker-pipeline-parallel"
    return f"kserve-config-llm-{'prefill' if engine.phase is Phase.PREFILL else 'decode'}-worker-pipeline-parallel"


def render_notes(replica: ModelReplica) -> tuple[str, ...]:
    """What a renderable replica still needs from its cluster, one sentence each (empty when nothing)."""
    notes: list[str] = []
    assumed = kserve_assumed(replica.kserve_version)
    if assumed is not None:
        notes.append(assumed)
    if not convention(replica.kserve_version).pod_metadata:
        notes.append(
            f"KServe {replica.kserve_version} cannot label or annotate the pods it creates, so KAI's pod-grouper "
            f"groups them itself in KAI's default queue ({names.KAI_DEFAULT_QUEUE}): queue {replica.queue}, "
            f"priority class {replica.priority_class_name} and the "
            "replica's all-or-nothing gang do not apply, and no PodGroup is rendered; KServe 0.17 or later "
            "applies them."
        )
    for engine in sorted(replica.engines, key=lambda e: e.name):
        main, _ = members(engine)
        p = parallelism.resolve(engine, tensor_hint=tensor_parallel_size(user_args(main)), launched=())
        if parallelism.needs_pipeline_config(engine, p):
            notes.append(
                f"engine {engine.name} uses pipeline parallelism: KServe ships no preset for it, so the cluster "
                f"needs an LLMInferenceServiceConfig named {_pipeline_preset(replica, engine)} in namespace "
                f"{replica.workload_namespace} or KServe's own, else the LLMInferenceService stays "
                "PresetsCombined=False (ConfigNotFound)."
            )
    return tuple(notes)
