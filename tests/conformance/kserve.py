"""Test-only: what KServe's LLMInferenceService controller does with an LLMIS, restated from its source.

Each rule names the KServe file it restates (KS = kserve/kserve, pkg/controller/v1alpha2/llmisvc/
unless said otherwise). The presets are KServe's real config files, read from
../shared/schemas/presets/kserve/ (upstream config/llmisvcconfig/, provenance in
../shared/schemas/README.md); they are not copied into this repository.

- `well_known_configs`: which presets `combineBaseRefsConfig` (config_merge.go) merges under an
  LLMIS, in order, then the LLMIS's own baseRefs.
- `merged_pod`: a workload's PodSpec after `MergeSpecs` (a strategic merge patch of each config,
  then the LLMIS, over the previous result; Kubernetes PodSpec merge keys: containers by name, env
  by name, ...; other lists replaced, maps merged).
- `rendered_container`: the `main` container with the presets' Go templates resolved as
  `ReplaceVariables` does (over the JSON text, with the user's LLMIS as data; see gotemplate).
- `launch`: runs that container's command and args under bash with a stub `vllm` on PATH that
  records its argv, so a test sees exactly what vLLM would receive.
- `deployment_selector`, `workload_names`: the labels and names KServe derives
  (workload_single_node.go, workload_multi_node.go, workload.go, `kmeta.ChildName`).
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conformance import gotemplate, kubelet

ROOT = Path(__file__).resolve().parents[2]
PRESETS = ROOT.parent / "shared" / "schemas" / "presets" / "kserve"
PREFIX = "kserve-"  # LLM_INFERENCE_SERVICE_CONFIG_PREFIX default

# Strategic-merge keys of the PodSpec / Container lists the presets and our manifests use
# (k8s.io/api core/v1 patchMergeKey tags); every other list is replaced by the patch.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
}


def require_presets() -> None:
    """Skip, saying why, when KServe's preset files are not checked out next to the repository."""
    if not PRESETS.is_dir():
        pytest.skip(
            f"{PRESETS} is absent: KServe's real preset configs are not copied into this repository "
            "(the modelled launchers of tests/conformance/launchers.py still run)"
        )


@cache
def presets() -> dict[str, dict[str, Any]]:
    """KServe's well-known configs: name -> spec."""
    require_presets()
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(PRESETS.glob("config-llm-*.yaml")):
        doc = yaml.safe_load(path.read_text())
        out[doc["metadata"]["name"]] = doc["spec"]
    return out


def is_data_parallel(p: Mapping[str, Any] | None) -> bool:
    return bool(p) and (p.get("data", 0) > 0 or p.get("dataLocal", 0) > 0)  # type: ignore[union-attr]


def is_pipeline_parallel(p: Mapping[str, Any] | None) -> bool:
    return bool(p) and p.get("pipeline", 0) > 0  # type: ignore[union-attr]


def group_size(p: Mapping[str, Any] | None) -> int:
    """`ParallelismSpec.GetSize` (KS pkg/apis/serving/v1alpha2/llm_inference_service_types_func.go), nil -> 1."""
    if not p:
        return 1
    if is_data_parallel(p):
        return max(max(p.get("data", 1), 1) // max(p.get("dataLocal", 1), 1), 1)
    if is_pipeline_parallel(p):
        return int(p["pipeline"])
    return 1


def _shape_config(kind: str, workload: Mapping[str, Any]) -> str | None:
    infix = "" if kind == "main" else f"{kind}-"
    if workload.get("worker") is None:
        return f"{PREFIX}config-llm-{infix or ''}template"
    if is_data_parallel(workload.get("parallelism")):
        return f"{PREFIX}config-llm-{infix}worker-data-parallel"
    if is_pipeline_parallel(workload.get("parallelism")):
        return f"{PREFIX}config-llm-{infix}worker-pipeline-parallel"
    return None


def well_known_configs(spec: Mapping[str, Any]) -> list[str]:
    """Config names KServe merges under the LLMIS, in merge order (config_merge.go, `combineBaseRefsConfig`)."""
    refs: list[str] = []
    router = spec.get("router") or {}
    scheduler = router.get("scheduler")
    if scheduler is not None and not (scheduler.get("pool") or {}).get("ref"):
        refs.append(f"{PREFIX}config-llm-scheduler")
    if scheduler is not None and scheduler.get("tokenizer") is not None:
        refs.append(f"{PREFIX}config-llm-tokenizer")
    route = router.get("route")
    if route is not None and not (route.get("http") or {}).get("refs"):
        refs.append(f"{PREFIX}config-llm-router-route")
    if spec.get("tracing") is not None:
        refs.append(f"{PREFIX}config-llm-tracing")
    if spec.get("prefill") is not None:
        shapes = [_shape_config("prefill", spec["prefill"]), _shape_config("decode", spec)]
    else:
        shapes = [_shape_config("main", spec)]
    refs += [s for s in shapes if s is not None]
    return refs + [r["name"] for r in spec.get("baseRefs") or ()]


def strategic_merge(base: Any, patch: Any, field: str = "") -> Any:
    """`patch` applied to `base` with the strategic-merge rules above."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = strategic_merge(out[key], value, key) if key in out else value
        return out
    if isinstance(base, list) and isinstance(patch, list) and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        merged = list(base)
        for item in patch:
            at = next((i for i, b in enumerate(merged) if b.get(key) == item.get(key)), None)
            if at is None:
                merged.append(item)
            else:
                merged[at] = strategic_merge(merged[at], item)
        return merged
    return patch


def merged_spec(llmis: Mapping[str, Any]) -> dict[str, Any]:
    """The LLMIS spec after KServe merged its presets under it (before templates are resolved)."""
    spec: dict[str, Any] = {}
    for name in well_known_configs(llmis["spec"]):
        spec = strategic_merge(spec, presets()[name])
    return strategic_merge(spec, dict(llmis["spec"]))


def merged_pod(llmis: Mapping[str, Any], path: str) -> dict[str, Any]:
    """A merged PodSpec: path is `template`, `worker`, `prefill.template` or `prefill.worker`."""
    node: Any = merged_spec(llmis)
    for part in path.split("."):
        node = node[part]
    return node


def _go(value: Any) -> Any:
    """JSON-shaped data as the Go struct fields templates select (`dataLocal` -> `DataLocal`)."""
    special = {"kvCacheOffloading": "KVCacheOffloading", "uri": "URI"}
    if isinstance(value, Mapping):
        return {special.get(k, k[:1].upper() + k[1:]): _go(v) for k, v in value.items()}  # type: ignore[union-attr]
    if isinstance(value, list):
        return [_go(v) for v in value]  # type: ignore[union-attr]
    return value


def child_name(parent: str, suffix: str) -> str:
    """knative `kmeta.ChildName`: parent+suffix, or a truncated parent + md5 when over 63 characters."""
    longest, head = 63, 63 - 32
    if len(parent) <= longest - len(suffix):
        return parent + suffix
    if head - len(suffix) <= 0:
        msg = "suffixes of 31+ characters are not used by KServe's LLMIS controller"
        raise ValueError(msg)
    return parent[: head - len(suffix)] + hashlib.md5(parent.encode()).hexdigest() + suffix


def _shutdown_timeout(pod: Mapping[str, Any] | None, pre_stop: int) -> int:
    grace = (pod or {}).get("TerminationGracePeriodSeconds", 60) if pod is not None else 60
    return max(grace - pre_stop - min(5, grace), 0)


def _kv_transfer_config(spec: Any) -> str:
    if spec is not None:
        msg = "kvCacheOffloading is not rendered by us; teach this model its JSON before using it"
        raise ValueError(msg)
    return ""


def template_data(llmis: Mapping[str, Any]) -> dict[str, Any]:
    meta = llmis["metadata"]
    return {
        "ObjectMeta": {"Name": meta["name"], "Namespace": meta["namespace"]},
        "Spec": _go(llmis["spec"]),
        "GlobalConfig": {
            "EnableTLS": False,
            "InferencePoolNamespacedName": f"{meta['namespace']}/{child_name(meta['name'], '-inference-pool')}",
        },
    }


FUNCS = {"ChildName": child_name, "shutdownTimeout": _shutdown_timeout, "kvTransferConfig": _kv_transfer_config}


def resolve_templates(value: Any, llmis: Mapping[str, Any]) -> Any:
    """Every string of `value` through KServe's template pass (it runs over the whole merged spec)."""
    if isinstance(value, str):
        return gotemplate.render_json_string(value, template_data(llmis), FUNCS)
    if isinstance(value, Mapping):
        return {k: resolve_templates(v, llmis) for k, v in value.items()}  # type: ignore[union-attr]
    if isinstance(value, list):
        return [resolve_templates(v, llmis) for v in value]  # type: ignore[union-attr]
    return value


def rendered_container(llmis: Mapping[str, Any], path: str, name: str = "main") -> dict[str, Any]:
    """The merged container `name` of a workload, with its templates resolved as KServe resolves them."""
    pod = merged_pod(llmis, path)
    return resolve_templates(next(c for c in pod["containers"] if c["name"] == name), llmis)


_STUB = """#!/bin/bash
if [ "$1" = "--version" ]; then echo "$STUB_VLLM_VERSION"; exit 0; fi
printf '%s\\0' "$@" > "$STUB_VLLM_ARGV"
"""


def launch(container: Mapping[str, Any], workdir: Path, *, env: Mapping[str, str] | None = None) -> list[str]:
    """argv `vllm` receives when the container starts: the kubelet's expansion of its command and args,
    then the preset's script. `env` holds what the kubelet resolves itself (valueFrom, LWS's env)."""
    bin_dir = workdir / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    stub = bin_dir / "vllm"
    stub.write_text(_STUB)
    stub.chmod(0o755)
    argv_file = workdir / "argv"
    argv_file.unlink(missing_ok=True)
    variables = kubelet.container_env(container.get("env", []), env or {})
    environment = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        **variables,
        "HOME": str(workdir),
        "STUB_VLLM_VERSION": "0.23.0",  # newer than every version gate in the presets
        "STUB_VLLM_ARGV": str(argv_file),
        "DP_ADDRESS_RESOLVE_ATTEMPTS": "1",
        **(env or {}),
    }
    run = subprocess.run(
        [kubelet.expand(word, variables) for word in [*container["command"], *container.get("args", [])]],
        env=environment,
        capture_output=True,
        timeout=60,
        check=False,
        cwd=workdir,
    )
    if not argv_file.exists():
        msg = f"vllm was never started (exit {run.returncode}):\n{run.stdout.decode()}\n{run.stderr.decode()}"
        raise AssertionError(msg)
    return argv_file.read_bytes().decode().split("\0")[:-1]


def lws_env(*, worker_index: int, size: int) -> dict[str, str]:
    """What LWS injects into every container (lws pkg/utils/pod `AddLWSVariables`)."""
    return {"LWS_LEADER_ADDRESS": "localhost", "LWS_GROUP_SIZE": str(size), "LWS_WORKER_INDEX": str(worker_index)}


def kserve_pod_labels(llmis: Mapping[str, Any], kind: str, role: str) -> dict[str, str]:
    """KServe's own labels on a pod: kind main|prefill, role single|leader|worker.

    workload_single_node.go (`singleNodeLabels` + component and llm-d role) and workload_multi_node.go
    (`expectedMainMultiNodeLWS`, `expectedPrefillMultiNodeLWS`: leader and worker label maps; workers
    carry kserve.io/component and the role only when there is no leader template, never with ours).
    """
    name = llmis["metadata"]["name"]
    prefill = kind == "prefill"
    component = {
        "single": "llminferenceservice-workload" + ("-prefill" if prefill else ""),
        "leader": "llminferenceservice-workload-leader" + ("-prefill" if prefill else ""),
        "worker": "llminferenceservice-workload-worker" + ("-prefill" if prefill else ""),
    }[role]
    labels = {
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/part-of": "llminferenceservice",
    }
    if role != "worker":
        labels["kserve.io/component"] = "workload"
        labels["llm-d.ai/role"] = "prefill" if prefill else ("decode" if llmis["spec"].get("prefill") else "both")
    return labels


def pod_labels(llmis: Mapping[str, Any], kind: str, role: str) -> dict[str, str]:
    """A pod's labels: KServe's map, then the workload's `labels` written over it (`utils.PropagateMap`)."""
    spec = llmis["spec"] if kind == "main" else llmis["spec"]["prefill"]
    return {**kserve_pod_labels(llmis, kind, role), **(spec.get("labels") or {})}


def pod_annotations(llmis: Mapping[str, Any], kind: str) -> dict[str, str]:
    spec = llmis["spec"] if kind == "main" else llmis["spec"]["prefill"]
    return dict(spec.get("annotations") or {})


def deployment_selector(llmis: Mapping[str, Any], kind: str) -> dict[str, str] | None:
    """`spec.selector.matchLabels` of a single-node workload's Deployment, None for a LeaderWorkerSet.

    expectedSingleNodeMainDeployment / expectedPrefillMainDeployment use one map object as the selector and
    the template labels, then write the workload labels into it: the selector is the pods' labels.
    """
    spec = llmis["spec"] if kind == "main" else llmis["spec"]["prefill"]
    return None if spec.get("worker") is not None else pod_labels(llmis, kind, "single")


def workload_service_selector(llmis: Mapping[str, Any]) -> dict[str, str]:
    """`GetWorkloadLabelSelector` (workload.go): what the workload Service and InferencePool select."""
    return {
        "app.kubernetes.io/part-of": "llminferenceservice",
        "app.kubernetes.io/name": llmis["metadata"]["name"],
        "kserve.io/component": "workload",
    }


def workload_names(llmis: Mapping[str, Any]) -> dict[str, str]:
    """Names KServe and LWS derive from an LLMIS (before pods): kind -> name."""
    name = llmis["metadata"]["name"]
    spec = llmis["spec"]
    out = {
        suffix: child_name(name, suffix)
        for suffix in (
            "-kserve-workload-svc",
            "-kserve-self-signed-certs",
            "-kserve-route",
            "-inference-pool",
            "-kserve-router-scheduler",
            "-epp-sa",
            "-kserve-mn-role",
        )
    }
    for kind, workload in (("main", spec), ("prefill", spec.get("prefill"))):
        if workload is None:
            continue
        if workload.get("worker") is None:
            out[f"{kind} Deployment"] = child_name(name, "-kserve" if kind == "main" else "-kserve-prefill")
            continue
        lws = child_name(name, "-kserve-mn" if kind == "main" else "-kserve-mn-prefill")
        out[f"{kind} LeaderWorkerSet"] = lws
        last_group = int(workload.get("replicas", 1)) - 1
        size = group_size(workload.get("parallelism"))
        out[f"{kind} leader StatefulSet"] = lws
        out[f"{kind} last worker StatefulSet"] = f"{lws}-{last_group}"
        out[f"{kind} last leader pod"] = f"{lws}-{last_group}"
        out[f"{kind} last worker pod"] = f"{lws}-{last_group}-{size - 1}"
    return out


def statefulsets(names: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in names.items() if "StatefulSet" in k}


def flag_values(argv: Sequence[str], flag: str) -> list[str]:
    """Values given to `flag` in argv (`--flag v` and `--flag=v`)."""
    out: list[str] = []
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            out.append(argv[i + 1])
        elif a.startswith(flag + "="):
            out.append(a[len(flag) + 1 :])
    return out
