"""Test-only: what every launcher check runs over: LLMIS workloads, replica shapes and hostile args.

test_preset_args.py runs them through KServe's real (newest) presets, test_kserve_versions.py
through the modelled launchers of every version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from modelplane.model import ModelReplica, Parallelism, Phase, PlacedEngine, PlacedMember, Role, ServingMode
from modelplane.render import render_replica

from tests.conformance import kserve, kubelet
from tests.render.factories import container_template, engine, leader_worker, member, replica, standalone

Env = tuple[Mapping[str, Any], ...]

WORKLOADS = ("template", "worker", "prefill.template", "prefill.worker")

HOSTILE = {
    "JSON": ['--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}', "--hf-overrides", "{}"],
    "spaces": ["--chat-template", "{% for m in messages %} {{ m.content }} {% endfor %}", "--served-x= a  b "],
    "quotes": ["--x='single'", '--y="double"', "--z=it's", '--w="', ""],
    "dollars and backticks": ["--x=$HOME", "--y=${PATH}", "--z=$(id)", "--w=`id`", "--v=$'\\n'"],
    "braces": ["--x={a,b}", "--y={1..3}", "{}", "--z=}{"],
    "backslashes": ["--x=a\\b", "--y=\\\\", "--z=\\n", "--w=end\\"],
    "globs": ["--x=*", "--y=?", "--z=[ab]", "/*"],
    "newlines and tabs": ["--x=a\nb", "--y=\t", "--z=line\n"],
    "shell operators": ["--x=a;b", "--y=a|b", "--z=a&&b", "--w=>out", "--v=#comment", "--u=!x"],
}

# Args that refer to the container's env the kubelet's way (`$(NAME)`), with a value that the
# presets' eval would re-parse if the kubelet pasted it into a quoted word: what vLLM must get is
# what the kubelet's expansion alone gives (`$$` escapes, an undeclared name stays as written).
ENV_REFS: Env = (
    {"name": "API_KEY", "value": 'k\'ey "x" $HOME `id` {a,b} * ;'},
    {"name": "EMPTY", "value": ""},
    # Valid Kubernetes names bash cannot import (`-`, `.`) or sets itself (UID).
    {"name": "API-KEY", "value": "a'; touch /tmp/pwned; '"},
    {"name": "a.b", "value": '"$(id)"'},
    {"name": "UID", "value": "not-a-uid"},
)
REF_ARGS = (
    "--api-key=$(API_KEY)",
    "--x=$$(API_KEY)",
    "--y=$(UNDECLARED)",
    "--z=$(API_KEY)$(API_KEY)",
    "--w=pre-$(EMPTY)-post",
    "$(API_KEY)",
    "--v=$(API_KEY",
    "--api-key=$(API-KEY)",
    "$(a.b)-$(UID)",
)


@dataclass(frozen=True)
class ArgCase:
    """Args (and env) on every pod of every shape, and the user args vLLM must receive from them."""

    args: tuple[str, ...]
    want: tuple[str, ...]
    env: Env = ()


ARG_CASES = {
    **{kind: ArgCase(args=tuple(args), want=tuple(args)) for kind, args in HOSTILE.items()},
    "kubelet env references": ArgCase(
        args=REF_ARGS,
        want=tuple(kubelet.expand(a, kubelet.container_env(ENV_REFS, {})) for a in REF_ARGS),
        env=ENV_REFS,
    ),
}


def workload(llmis: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The workload (`spec` or `spec.prefill`) holding the pod at `path`, None when there is no such pod."""
    node: Any = llmis["spec"]
    for part in path.split(".")[:-1]:
        node = node.get(part)
        if node is None:
            return None
    return node if path.rsplit(".", maxsplit=1)[-1] in node else None


def member_of(r: ModelReplica, llmis: dict[str, Any], path: str) -> PlacedMember:
    """The replica's member whose pods the workload path launches."""
    engine_name = llmis["metadata"]["labels"].get("modelplane.ai/engine")  # a Unified LLMIS
    if llmis["spec"].get("prefill") is not None:
        phase = Phase.PREFILL if path.startswith("prefill.") else Phase.DECODE
        engine_name = next(e.name for e in r.engines if e.phase is phase)
    eng = next(e for e in r.engines if e.name == engine_name)
    roles = (Role.WORKER,) if path.endswith("worker") else (Role.STANDALONE, Role.LEADER)
    return next(m for m in eng.members if m.role in roles)


def rendered_llmis(r: ModelReplica) -> dict[str, Any]:
    """The (first) LLMInferenceService a replica renders."""
    return next(o for o in render_replica(r) if o.readiness_source).manifest["spec"]["forProvider"]["manifest"]


def _gang(args: tuple[str, ...], env: Env, name: str = "main", phase: Phase | None = None) -> PlacedEngine:
    leader, worker = leader_worker(nodes=1)
    return engine(
        name,
        phase=phase,
        members=(
            replace(leader, template=container_template(args=args, env=env)),
            replace(worker, template=container_template(args=args, env=env)),
        ),
    )


def replica_shapes(args: tuple[str, ...], env: Env = ()) -> dict[str, ModelReplica]:
    """A replica of every shape whose every pod has `args` and `env`: 11 workloads in all."""
    template = container_template(args=args, env=env)
    single = (member(requests=standalone(gpu_count=2)[0].device_requests, template=template),)
    pd = ServingMode.PREFILL_DECODE
    return {
        "single node": replica(engines=(engine(members=single),)),
        "prefill/decode": replica(
            serving_mode=pd,
            engines=(
                engine("decode", phase=Phase.DECODE, members=single),
                engine("prefill", phase=Phase.PREFILL, members=single),
            ),
        ),
        "multi-node data parallel": replica(engines=(_gang(args, env),)),
        "multi-node prefill and decode": replica(
            serving_mode=pd,
            engines=(_gang(args, env, "decode", Phase.DECODE), _gang(args, env, "prefill", Phase.PREFILL)),
        ),
        "multi-node expert off": replica(
            engines=(replace(_gang(args, env), parallelism=Parallelism(expert=False)),),
        ),
    }


def _lws_env(w: dict[str, Any], path: str) -> dict[str, str]:
    if "worker" not in w:
        return {}
    size = kserve.group_size(w.get("parallelism"))
    return kserve.lws_env(worker_index=1 if path.endswith("worker") else 0, size=size)


_BASELINES: dict[str, list[str]] = {}


def real_argv(llmis: dict[str, Any], path: str, workdir: Path, *, without_args: bool = False) -> list[str]:
    """What vLLM receives from KServe's real preset for the pod at `path` (`without_args`: with no container args)."""
    container = kserve.rendered_container(llmis, path)
    if without_args:
        container.pop("args", None)
    w = workload(llmis, path)
    assert w is not None
    env = _lws_env(w, path)
    if not without_args:
        return kserve.launch(container, workdir, env=env)
    key = json.dumps([container, env], sort_keys=True)  # the preset's own part, the same for every arg list
    if key not in _BASELINES:
        _BASELINES[key] = kserve.launch(container, workdir, env=env)
    return _BASELINES[key]
