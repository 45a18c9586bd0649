"""Pod wiring: the PodSpec of one placed member, as the LLMInferenceService carries it.

From the member's curated template: the container named `engine` becomes KServe's serving
container `main` (env, resources, ...; `command` only when the user wrote one; args minus the flags
the preset launcher sets, in the form the cluster's KServe presets take them, see `launch`), and the
other PodSpec fields (imagePullSecrets, ...) pass through. KServe merges `main` over its preset's
container (strategic merge by container name; lists such as args replaced, maps such as
securityContext merged).

Image and security context: without an image the preset's image runs (llm-d's vLLM build, non-root,
matching the preset's `runAsNonRoot: true`). With an image the user's runs, and since the common
vLLM images (vllm/vllm-openai) run as root, which `runAsNonRoot: true` refuses to start, the
container gets `securityContext.runAsNonRoot: false` unless the template gives its own
securityContext (say runAsUser for a non-root image on a cluster that enforces the restricted Pod
Security Standard). The preset's other hardening (no privilege escalation, all capabilities dropped,
RuntimeDefault seccomp) is merged in either way.

Added to every PodSpec:

- `nodeSelector {modelplane.ai/pool: <pool>}`: the pool the scheduler chose;
- `schedulerName: kai-scheduler`, so the gang's PodGroup governs the pods;
- the deployment's tolerations (they admitted the cluster; a taint on the pool's nodes needs them
  on the pods too) and `nvidia.com/gpu Exists NoSchedule`: the taint GPU Operator / managed node
  groups put on GPU nodes;
- for a Leader or Worker, `MODELPLANE_LEADER_ADDRESS` and `MODELPLANE_RANK` ahead of `main`'s
  env, unless the engine sets them itself (see `gangenv`);
- for a claiming member, a pod claim `devices` from its ResourceClaimTemplate (every pod gets
  its own claim) and `resources.claims [{name: devices}]` on `main`;
- for an exclusive deployment, pod anti-affinity against every other deployment's pods (see
  `exclusive`).
- for a replica serving from a ModelCache, its claim as the volume `kserve-pvc-source`, mounted
  read-write on `main` at /mnt/models, where Modelplane mounts it and every preset serves from
  (`vllm serve /mnt/models`). For a `pvc://` model KServe adds that volume itself, read-only (KS
  pkg/controller/v1alpha2/llmisvc/workload_storage.go `attachPVCModelArtifact`, v0.16 to v0.20),
  unless `main` already mounts a volume of that name (pkg/utils/storage.go
  `addVolumeMountToContainer`): ours stands, and engines can write their tokenizer, compile and
  lock files beside the weights as they do under Modelplane.

Labels and annotations are not here: an LLMIS `template` is a PodSpec, so pod metadata travels in
the workload's `labels`/`annotations` (see `llmis`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from modelplane import names
from modelplane.cache import MOUNT_PATH
from modelplane.model import PlacedMember, Toleration
from modelplane.render.args import extra_args
from modelplane.render.exclusive import anti_affinity
from modelplane.render.gangenv import with_gang_env
from modelplane.render.launch import Launcher

ENGINE_CONTAINER = "engine"  # the container name in the curated template
SERVING_CONTAINER = "main"  # KServe's preset container name (strategic-merge key)
CLAIM_NAME = "devices"  # the pod-level claim name every claiming pod uses
KAI_SCHEDULER = "kai-scheduler"
GPU_TOLERATION: Mapping[str, str] = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
MODEL_VOLUME = "kserve-pvc-source"  # KServe's volume name for a pvc:// model (constants.PvcSourceMountName)


def as_mapping(value: Any) -> Mapping[str, Any]:
    """A raw JSON object, or empty when absent or of another shape."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """A raw JSON array, or empty when absent or of another shape."""
    return list(cast("Sequence[Any]", value)) if isinstance(value, list) else []


def _split(spec: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]]:
    """(the engine container, the other containers); a lone container is the engine whatever its name."""
    containers = [as_mapping(c) for c in as_list(spec.get("containers"))]
    at = next((i for i, c in enumerate(containers) if c.get("name") == ENGINE_CONTAINER), None)
    if at is None and len(containers) == 1:
        at = 0
    if at is None:
        return {}, containers
    return containers[at], containers[:at] + containers[at + 1 :]


def _engine_container(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return _split(spec)[0]


ROOT_IMAGE_SECURITY: Mapping[str, bool] = {"runAsNonRoot": False}


def uses_preset_launcher(member: PlacedMember) -> bool:
    """True unless the member's container has its own command (which replaces the preset's)."""
    return "command" not in _engine_container(as_mapping(member.template.get("spec")))


def serving_container(member: PlacedMember, *, launcher: Launcher, cache_claim: str | None = None) -> dict[str, Any]:
    """KServe's `main` container built from the member's `engine` container, for `launcher`'s preset."""
    user = _engine_container(as_mapping(member.template.get("spec")))
    container: dict[str, Any] = {k: v for k, v in user.items() if k not in {"name", "command", "args"}}
    container["name"] = SERVING_CONTAINER
    if "image" in user and "securityContext" not in user:
        container["securityContext"] = dict(ROOT_IMAGE_SECURITY)
    user_args = [str(a) for a in as_list(user.get("args"))]
    env = as_list(user.get("env"))
    if launcher.multi_node:
        env = with_gang_env(env)
        container["env"] = env
    if "command" in user:
        container["command"] = user["command"]
        args: Sequence[str] = user_args  # the user's own launcher: nothing of the preset's applies
    else:
        args, forwarded = launcher.forward(extra_args(user_args), env)
        if forwarded is not None:
            container["env"] = forwarded
    if args:
        container["args"] = list(args)
    if cache_claim is not None:
        mounts = [m for m in as_list(user.get("volumeMounts")) if as_mapping(m).get("name") != MODEL_VOLUME]
        container["volumeMounts"] = [*mounts, {"name": MODEL_VOLUME, "mountPath": MOUNT_PATH}]
    if member.device_requests:
        resources = dict(as_mapping(user.get("resources")))
        claims = [c for c in as_list(resources.get("claims")) if as_mapping(c).get("name") != CLAIM_NAME]
        resources["claims"] = [*claims, {"name": CLAIM_NAME}]
        container["resources"] = resources
    return dict(sorted(container.items()))


def user_args(member: PlacedMember) -> tuple[str, ...]:
    """The args the user wrote on the member's engine container."""
    user = _engine_container(as_mapping(member.template.get("spec")))
    return tuple(str(a) for a in as_list(user.get("args")))


def toleration(t: Toleration) -> dict[str, str]:
    """A Kubernetes toleration (empty fields left out: an empty effect tolerates every effect)."""
    out = {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect.value if t.effect else ""}
    return {k: v for k, v in out.items() if v}


def pod_spec(
    member: PlacedMember,
    *,
    claim_template: str | None,
    tolerations: tuple[Toleration, ...] = (),
    launcher: Launcher,
    exclusive_of: tuple[str, str] | None = None,
    cache_claim: str | None = None,
) -> dict[str, Any]:
    """The member's PodSpec with the placement and gang wiring.

    `exclusive_of`: (namespace, name) of an exclusive deployment, whose pods keep others off their nodes;
    `cache_claim`: the ModelCache's claim.
    """
    template_spec = as_mapping(member.template.get("spec"))
    spec: dict[str, Any] = {k: v for k, v in template_spec.items() if k != "containers"}
    main = serving_container(member, launcher=launcher, cache_claim=cache_claim)
    spec["containers"] = [main, *_split(template_spec)[1]]
    if cache_claim is not None:
        volumes = [v for v in as_list(spec.get("volumes")) if as_mapping(v).get("name") != MODEL_VOLUME]
        spec["volumes"] = [*volumes, {"name": MODEL_VOLUME, "persistentVolumeClaim": {"claimName": cache_claim}}]
    spec["nodeSelector"] = {**as_mapping(spec.get("nodeSelector")), names.LABEL_POOL: member.pool}
    wanted = [*as_list(spec.get("tolerations")), *(toleration(t) for t in tolerations), dict(GPU_TOLERATION)]
    spec["tolerations"] = [t for i, t in enumerate(wanted) if t not in wanted[:i]]
    spec["schedulerName"] = KAI_SCHEDULER
    if exclusive_of is not None:
        spec["affinity"] = anti_affinity(*exclusive_of)
    if claim_template is not None:
        claims = [c for c in as_list(spec.get("resourceClaims")) if as_mapping(c).get("name") != CLAIM_NAME]
        spec["resourceClaims"] = [*claims, {"name": CLAIM_NAME, "resourceClaimTemplateName": claim_template}]
    return dict(sorted(spec.items()))


def template_metadata(member: PlacedMember, field: str) -> Mapping[str, str]:
    """The member template's labels or annotations."""
    raw = as_mapping(as_mapping(member.template.get("metadata")).get(field))
    return {str(k): str(v) for k, v in raw.items()}
