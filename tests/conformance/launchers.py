"""Test-only: how each KServe version's presets start vLLM, as a small explicit model.

The real presets in ../shared are the newest ones (tests/conformance/kserve.py runs them). Older
versions' preset files are not copied into this repository; what matters of them for the args is
restated here from their source, per tag (KS = kserve/kserve, config/llmisvcconfig/<file> at
v0.16.0, v0.17.0, v0.18.0, v0.19.0, v0.20.0):

- single node, `config-llm-template.yaml` (port 8000), `config-llm-decode-template.yaml` (8001),
  `config-llm-prefill-template.yaml` (8000):
  - v0.16.0: `command: [vllm, serve, /mnt/models]`, `args: [--served-model-name, "{{ .Spec.Model.Name }}",
    --port, "<port>", --disable-log-requests]`: vLLM's argv is command + args, no shell;
  - v0.17.0: `command: [vllm, serve, /mnt/models, --served-model-name, "{{ .Spec.Model.Name }}", --port,
    "<port>"]`, no args: no shell;
  - v0.18.0, v0.19.0: `command: [/bin/bash, -c, <script>, "--"]`, the script ending in
    `eval "[exec] vllm serve /mnt/models --served-model-name "<name>" --port <port> ... ${VLLM_ADDITIONAL_ARGS} $@"`;
  - v0.20.0: as v0.19.0 plus `--tensor-parallel-size {{ .Spec.Parallelism.Tensor }}` when set
    (`.Spec.Prefill.Parallelism.Tensor` in the prefill preset);
- data parallel, `config-llm-worker-data-parallel.yaml` (8000), `-decode-` (8001), `-prefill-` (8000),
  leader script then worker script (`--headless`):
  - v0.16.0: `command: [/bin/bash, -c]`, `args: [<script>]`, the script ending in `eval "vllm serve
    /mnt/models --served-model-name "<name>" --port <port> ... [--enable-expert-parallel]
    [--tensor-parallel-size <tensor>] --data-parallel-size <data> --data-parallel-size-local <dataLocal>
    ... ${VLLM_ADDITIONAL_ARGS} --trust-remote-code [--headless]"`: no `$@`;
  - v0.17.0: `command: [/bin/bash, -c, <script>, "--"]`, the same line with `$@` after
    `${VLLM_ADDITIONAL_ARGS}` and before `--trust-remote-code [--headless]`;
  - v0.18.0 to v0.20.0: as v0.17.0, with `[--headless]` earlier and `${VLLM_ADDITIONAL_ARGS} $@` last.

KServe merges the LLMIS over the preset (strategic merge: containers and env by name, `command`
and `args` replaced), so the model builds the preset's `main` container with its templates already
resolved, merges ours over it with `kserve.strategic_merge`, and runs the result as the kubelet
would (`kserve.launch`: exec of command + args, bash for the scripts) with the stub vllm. Flags of
the scripts that never depend on what we render (RoCE probing, access logs, TLS, the DP address and
RPC port, the start rank) are left out.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conformance import kserve

VERSIONS = ("0.16", "0.17", "0.18", "0.19", "0.20")


@dataclass(frozen=True)
class Shape:
    """Which preset launches a pod: the workload (main, decode or prefill) and the pod's role."""

    kind: str  # main | decode | prefill
    role: str  # single | leader | worker

    @property
    def port(self) -> str:
        return "8001" if self.kind == "decode" else "8000"


def shape_of(llmis: Mapping[str, Any], path: str) -> Shape:
    """The shape of a workload path (`template`, `worker`, `prefill.template`, `prefill.worker`)."""
    prefill = path.startswith("prefill.")
    spec = llmis["spec"]["prefill"] if prefill else llmis["spec"]
    kind = "prefill" if prefill else ("decode" if llmis["spec"].get("prefill") is not None else "main")
    if "worker" not in spec:
        return Shape(kind, "single")
    return Shape(kind, "worker" if path.endswith("worker") else "leader")


def _single(version: str, name: str, shape: Shape, parallelism: Mapping[str, Any]) -> dict[str, Any]:
    serve = ["vllm", "serve", "/mnt/models"]
    own = ["--served-model-name", name, "--port", shape.port]
    if version == "0.16":
        return {"name": "main", "command": serve, "args": [*own, "--disable-log-requests"]}
    if version == "0.17":
        return {"name": "main", "command": [*serve, *own]}
    tensor = (
        ["--tensor-parallel-size", str(parallelism["tensor"])] if version == "0.20" and "tensor" in parallelism else []
    )
    line = shlex.join([*serve[1:], *own, *tensor])
    return {"name": "main", "command": ["/bin/bash", "-c", f'eval "vllm {line} ${{VLLM_ADDITIONAL_ARGS}} $@"', "--"]}


def _data_parallel(version: str, name: str, shape: Shape, p: Mapping[str, Any]) -> dict[str, Any]:
    flags = ["serve", "/mnt/models", "--served-model-name", name, "--port", shape.port]
    flags += ["--enable-expert-parallel"] if p.get("expert") else []
    flags += ["--tensor-parallel-size", str(p["tensor"])] if p.get("tensor") else []
    flags += ["--data-parallel-size", str(p.get("data", 1)), "--data-parallel-size-local", str(p.get("dataLocal", 1))]
    headless = ["--headless"] if shape.role == "worker" else []
    if version == "0.16":
        script = f'eval "vllm {shlex.join(flags)} ${{VLLM_ADDITIONAL_ARGS}} {shlex.join(["--trust-remote-code", *headless])}"'
        return {"name": "main", "command": ["/bin/bash", "-c"], "args": [script]}
    if version == "0.17":
        tail = shlex.join(["--trust-remote-code", *headless])
        script = f'eval "vllm {shlex.join(flags)} ${{VLLM_ADDITIONAL_ARGS}} $@ {tail}"'
    else:
        script = f'eval "vllm {shlex.join([*flags, *headless])} ${{VLLM_ADDITIONAL_ARGS}} $@"'
    return {"name": "main", "command": ["/bin/bash", "-c", script, "--"]}


def preset_container(version: str, llmis: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The preset's `main` container for the workload at `path`, templates resolved."""
    shape = shape_of(llmis, path)
    workload = llmis["spec"]["prefill"] if path.startswith("prefill.") else llmis["spec"]
    name = llmis["spec"]["model"]["name"]
    parallelism = workload.get("parallelism") or {}
    if shape.role == "single":
        return _single(version, name, shape, parallelism)
    return _data_parallel(version, name, shape, parallelism)


def _pod(llmis: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    node: Any = llmis["spec"]
    for part in path.split("."):
        node = node[part]
    return node


def _ours(llmis: Mapping[str, Any], path: str) -> dict[str, Any]:
    """Our `main` container with KServe's template pass applied (it turns our `{{` escapes back)."""
    container = next(c for c in _pod(llmis, path)["containers"] if c["name"] == "main")
    return kserve.resolve_templates(container, llmis)


def _env(shape: Shape, workload: Mapping[str, Any]) -> dict[str, str]:
    if shape.role == "single":
        return {}
    size = kserve.group_size(workload.get("parallelism"))
    return kserve.lws_env(worker_index=1 if shape.role == "worker" else 0, size=size)


def vllm_argv(version: str, llmis: Mapping[str, Any], path: str, workdir: Path, *, ours: bool = True) -> list[str]:
    """What vLLM receives on a cluster running `version` (`ours=False`: the preset alone, no container of ours)."""
    container = preset_container(version, llmis, path)
    if ours:
        container = kserve.strategic_merge(container, _ours(llmis, path))
    workload = llmis["spec"]["prefill"] if path.startswith("prefill.") else llmis["spec"]
    return kserve.launch(container, workdir, env=_env(shape_of(llmis, path), workload))


def user_args_at(version: str, shape: Shape) -> int:
    """Where the container's extra args land in the preset's own argv, counted from its end."""
    if shape.role == "single" or version not in ("0.16", "0.17"):
        return 0
    return 2 if shape.role == "worker" else 1  # before --trust-remote-code [--headless]
