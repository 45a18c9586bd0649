"""How the engine's args reach vLLM through the presets of the cluster's KServe version.

KServe merges the LLMIS over its preset for the workload's shape (strategic merge: `args` and
`command` are replaced, not merged), and the preset starts vLLM. How it does so changed between
versions (KS = kserve/kserve, config/llmisvcconfig/ at each tag):

- single node (`config-llm-template.yaml`, `-decode-template`, `-prefill-template`):
  - 0.16: `command: [vllm, serve, /mnt/models]` and `args: [--served-model-name, <name>, --port,
    <port>, --disable-log-requests]`: no shell, and the container's args replace the preset's;
  - 0.17: `command: [vllm, serve, /mnt/models, --served-model-name, <name>, --port, <port>]`: no
    shell, the container's args follow;
  - 0.18, 0.19: `/bin/bash -c <script> --` evaluating `vllm serve ... ${VLLM_ADDITIONAL_ARGS} $@`;
  - 0.20: as 0.18, and the script also passes `--tensor-parallel-size <parallelism.tensor>`;
- data parallel (`config-llm[-decode|-prefill]-worker-data-parallel.yaml`):
  - 0.16: `command: [/bin/bash, -c]`, `args: [<script>]`; the script evaluates
    `vllm serve ... ${VLLM_ADDITIONAL_ARGS} --trust-remote-code`, with no `$@`;
  - 0.17 to 0.20: `/bin/bash -c <script> --`, the script evaluating `... ${VLLM_ADDITIONAL_ARGS} $@`.

The port is 8001 for the decode preset (its routing sidecar listens on 8000), else 8000. The
data-parallel presets pass `parallelism` (tensor, data, dataLocal, expert) themselves in every
version. So, per workload (`Launcher.forward`):

- single node: `--tensor-parallel-size=<tensor>` first (0.16 to 0.19 never pass it; 0.20 then
  gets the same value twice, which keeps one rendering right for 0.18 to 0.20), then the user's
  args, shell-quoted where the preset evals them (0.18+) and as written where vLLM gets them
  directly (0.16, 0.17: a quoted arg would arrive with its quotes). On 0.16 our args replace the
  preset's, so its `--served-model-name <name> --port <port> --disable-log-requests` are restated
  first;
- multi node: the args shell-quoted (every version evals them). On 0.16 the container's args would
  replace the script itself, so they go in the env `VLLM_ADDITIONAL_ARGS` the script expands
  instead, after the user's own value of it.

A user `command` replaces the preset's launcher, so none of this applies (see `pod`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from modelplane.model import KSERVE_VERSIONS, kserve_rendered_as
from modelplane.render.args import shell_words
from modelplane.render.envrefs import aliases
from modelplane.render.rendered import RenderError

ADDITIONAL_ARGS_ENV = "VLLM_ADDITIONAL_ARGS"
DECODE_PORT = 8001  # the decode presets' vLLM port; the routing sidecar takes 8000
PORT = 8000


@dataclass(frozen=True, slots=True, kw_only=True)
class Convention:
    """What one KServe version's presets do with an LLMIS, as far as rendering must care."""

    version: str
    single_node_eval: bool  # the single-node presets eval their args (0.18+)
    restates_preset_args: bool  # the single-node presets' own flags are container args ours replace (0.16)
    multi_node_forwards_args: bool  # the data-parallel scripts eval `$@` (0.17+)
    pod_metadata: bool  # spec.labels / spec.annotations exist and reach the pods (0.17+)


CONVENTIONS: Mapping[str, Convention] = {
    "0.16": Convention(
        version="0.16",
        single_node_eval=False,
        restates_preset_args=True,
        multi_node_forwards_args=False,
        pod_metadata=False,
    ),
    "0.17": Convention(
        version="0.17",
        single_node_eval=False,
        restates_preset_args=False,
        multi_node_forwards_args=True,
        pod_metadata=True,
    ),
    **{
        v: Convention(
            version=v,
            single_node_eval=True,
            restates_preset_args=False,
            multi_node_forwards_args=True,
            pod_metadata=True,
        )
        for v in ("0.18", "0.19", "0.20")
    },
}


def convention(version: str | None) -> Convention:
    """The convention of a KServe minor version (None: the newest; a later minor: the newest known);
    RenderError for one that is neither."""
    rendered_as = kserve_rendered_as(version)
    found = None if rendered_as is None else CONVENTIONS.get(rendered_as)
    if found is None:
        msg = (
            f"KServe {version!r} is not a version replicas can be rendered for "
            f"(supported: {', '.join(KSERVE_VERSIONS)} and later 0.x minors): set the InferenceCluster's "
            "spec.kserve.version to one"
        )
        raise RenderError(msg)
    return found


def _env_name(entry: Any) -> object:
    return cast("Mapping[str, Any]", entry).get("name") if isinstance(entry, Mapping) else None


def _aliased(extra: Sequence[str], declared: frozenset[str], env: Sequence[Any]) -> list[Any] | None:
    """The env with the alias vars the shell-quoted args refer to appended (None: none needed)."""
    try:
        added = aliases(extra, declared)
    except ValueError as e:
        raise RenderError(str(e)) from None
    return [*env, *added] if added else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Launcher:
    """How one workload's preset starts vLLM: what its container's args (or env) must carry."""

    convention: Convention
    multi_node: bool
    model_name: str  # spec.model.name: what the preset serves the model as
    port: int  # the preset's vLLM port
    tensor: int | None  # parallelism.tensor, passed as a flag on a single node

    def forward(self, extra: Sequence[str], env: Sequence[Any]) -> tuple[tuple[str, ...], list[Any] | None]:
        """(the container's args, its env when it must change) for the user's extra args."""
        c = self.convention
        declared = frozenset(name for e in env if isinstance(name := _env_name(e), str))
        if self.multi_node:
            words, aliased = shell_words(extra, declared), _aliased(extra, declared, env)
            if c.multi_node_forwards_args:
                return words, aliased
            return (), self._additional_args(words, env if aliased is None else aliased)
        flags = (f"--tensor-parallel-size={self.tensor}",) if self.tensor else ()
        if not c.single_node_eval:  # vLLM gets the args as the kubelet expands them: nothing re-parses them
            return self._restated((*flags, *extra)), None
        return self._restated((*flags, *shell_words(extra, declared))), _aliased(extra, declared, env)

    def _restated(self, args: tuple[str, ...]) -> tuple[str, ...]:
        """On 0.16 our args replace the preset's own flags, so they are restated first."""
        if args and self.convention.restates_preset_args:
            return ("--served-model-name", self.model_name, "--port", str(self.port), "--disable-log-requests", *args)
        return args

    def _additional_args(self, words: tuple[str, ...], env: Sequence[Any]) -> list[Any] | None:
        """The env with `words` appended to VLLM_ADDITIONAL_ARGS (None: nothing to add)."""
        if not words:
            return None
        at = next((i for i, e in enumerate(env) if _env_name(e) == ADDITIONAL_ARGS_ENV), None)
        if at is None:
            return [*env, {"name": ADDITIONAL_ARGS_ENV, "value": " ".join(words)}]
        own = cast("Mapping[str, Any]", env[at])
        if "valueFrom" in own:
            msg = (
                f"KServe {self.convention.version}'s multi-node presets take extra vLLM args only from "
                f"{ADDITIONAL_ARGS_ENV}, which the engine sets from a reference: put the args there too, "
                "or write them as a value"
            )
            raise RenderError(msg)
        value = " ".join(w for w in (str(own.get("value") or ""), *words) if w)
        return [*env[:at], {"name": ADDITIONAL_ARGS_ENV, "value": value}, *env[at + 1 :]]
