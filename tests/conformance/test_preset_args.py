"""vLLM receives exactly the args the user wrote, through KServe's real preset launchers.

Each rendered LLMInferenceService is merged over the presets KServe would pick for it, the presets'
Go templates resolved, and the `main` container's command run under bash with a stub `vllm` that
records its argv (see kserve.py). The argv must be the preset's own command line followed by the
user's args, unchanged: for every example, and for args full of what the presets' `eval` would
otherwise re-parse. Multi-node shapes run the leader and the worker scripts with LWS's env.
"""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from modelplane.model import ModelReplica, Parallelism, Phase, PlacedEngine, PlacedMember, Role, ServingMode
from modelplane.render import render_replica
from modelplane.render.args import extra_args
from modelplane.render.pod import user_args

from tests.conformance import examples, kserve
from tests.render.factories import container_template, engine, leader_worker, member, replica, standalone

WORKLOADS = ("template", "worker", "prefill.template", "prefill.worker")


def _workload(llmis: dict[str, Any], path: str) -> dict[str, Any] | None:
    node: Any = llmis["spec"]
    for part in path.split(".")[:-1]:
        node = node.get(part)
        if node is None:
            return None
    return node if path.rsplit(".", maxsplit=1)[-1] in node else None


def _lws_env(workload: dict[str, Any], path: str) -> dict[str, str]:
    if "worker" not in workload:
        return {}
    size = kserve.group_size(workload.get("parallelism"))
    return kserve.lws_env(worker_index=1 if path.endswith("worker") else 0, size=size)


_BASELINES: dict[str, list[str]] = {}


def _argv(llmis: dict[str, Any], path: str, workdir: Path, *, without_args: bool = False) -> list[str]:
    container = kserve.rendered_container(llmis, path)
    if without_args:
        container.pop("args", None)
    workload = _workload(llmis, path)
    assert workload is not None
    env = _lws_env(workload, path)
    if not without_args:
        return kserve.launch(container, workdir, env=env)
    key = json.dumps([container, env], sort_keys=True)  # the preset's own part, the same for every arg list
    if key not in _BASELINES:
        _BASELINES[key] = kserve.launch(container, workdir, env=env)
    return _BASELINES[key]


def _member(r: ModelReplica, llmis: dict[str, Any], path: str) -> PlacedMember:
    workload = _workload(llmis, path)
    assert workload is not None
    engine_name = workload["labels"]["modelplane.ai/engine"]
    eng = next(e for e in r.engines if e.name == engine_name)
    roles = (Role.WORKER,) if path.endswith("worker") else (Role.STANDALONE, Role.LEADER)
    return next(m for m in eng.members if m.role in roles)


def _ours(workload: dict[str, Any]) -> list[str]:
    """The arg we add in front of the user's: the tensor size, which single-node presets pass only from v0.20."""
    tensor = workload.get("parallelism", {}).get("tensor")
    return [f"--tensor-parallel-size={tensor}"] if "worker" not in workload and tensor else []


def _seen(argv: list[str], baseline: list[str], workload: dict[str, Any]) -> dict[str, Any]:
    """What vLLM is told: its model path and name, the parallelism flags, and the args after the preset's."""
    p = workload.get("parallelism", {})
    last = {f: (kserve.flag_values(argv, f) or [None])[-1] for f in ("--tensor-parallel-size", "--data-parallel-size")}
    return {
        "command": argv[:2],
        "served-model-name": kserve.flag_values(argv, "--served-model-name")[:1],
        "tensor": last["--tensor-parallel-size"],
        "data": last["--data-parallel-size"] if p.get("data") else None,
        "expert": "--enable-expert-parallel" in argv,
        "user args": argv[len(baseline) :] if argv[: len(baseline)] == baseline else ["<preset part changed>"],
    }


# The presets in ../shared are the newest; a replica rendered for an older KServe is checked against
# that version's launcher in test_kserve_versions.py.
EVAL_VERSIONS = (None, "0.18", "0.19", "0.20")
NEWEST_LLMIS = [
    (e, i)
    for e, i in examples.llmis_ids()
    if examples.replica_of(e, examples.llmis(e, i)).kserve_version in EVAL_VERSIONS
]


@pytest.mark.parametrize(("example", "index"), NEWEST_LLMIS)
def test_every_example_reaches_vllm_as_written(example: str, index: int, tmp_path: Path) -> None:
    kserve.require_presets()
    llmis = examples.llmis(example, index)
    r = examples.replica_of(example, llmis)
    got: dict[str, Any] = {}
    want: dict[str, Any] = {}
    for path in WORKLOADS:
        workload = _workload(llmis, path)
        if workload is None:
            continue
        argv = _argv(llmis, path, tmp_path)
        baseline = _argv(llmis, path, tmp_path, without_args=True)
        got[path] = _seen(argv, baseline, workload)
        p = workload.get("parallelism", {})
        want[path] = {
            "command": ["serve", "/mnt/models"],
            "served-model-name": [llmis["spec"]["model"]["name"]],
            "tensor": str(p["tensor"]) if "tensor" in p else None,
            "data": str(p["data"]) if p.get("data") else None,
            "expert": bool(p.get("expert")),
            "user args": [*_ours(workload), *extra_args(user_args(_member(r, llmis, path)))],
        }
    assert got == want


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


def _gang(args: tuple[str, ...], name: str = "main", phase: Phase | None = None) -> PlacedEngine:
    leader, worker = leader_worker(nodes=1)
    return engine(
        name,
        phase=phase,
        members=(
            replace(leader, template=container_template(args=args)),
            replace(worker, template=container_template(args=args)),
        ),
    )


def _shapes(args: tuple[str, ...]) -> dict[str, ModelReplica]:
    single = (member(requests=standalone(gpu_count=2)[0].device_requests, args=args),)
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
        "multi-node data parallel": replica(engines=(_gang(args),)),
        "multi-node prefill and decode": replica(
            serving_mode=pd,
            engines=(_gang(args, "decode", Phase.DECODE), _gang(args, "prefill", Phase.PREFILL)),
        ),
        "multi-node expert off": replica(
            engines=(replace(_gang(args), parallelism=Parallelism(expert=False)),),
        ),
    }


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_args_reach_vllm_unchanged(kind: str, tmp_path: Path) -> None:
    kserve.require_presets()
    args = tuple(HOSTILE[kind])
    got: dict[str, list[str]] = {}
    want: dict[str, list[str]] = {}
    for shape, r in _shapes(args).items():
        llmis = next(o for o in render_replica(r) if o.readiness_source).manifest["spec"]["forProvider"]["manifest"]
        for path in WORKLOADS:
            workload = _workload(llmis, path)
            if workload is not None:
                argv = _argv(llmis, path, tmp_path)
                got[f"{shape}: {path}"] = argv[len(_argv(llmis, path, tmp_path, without_args=True)) :]
                want[f"{shape}: {path}"] = [*_ours(workload), *args]
    assert got == want
    assert len(got) == 11  # every shape's every workload ran


def test_an_unquoted_json_arg_is_mangled_by_the_preset(tmp_path: Path) -> None:
    """Why quoting matters: the preset's eval strips quotes and brace-expands a raw JSON arg."""
    kserve.require_presets()
    llmis = next(o for o in render_replica(replica()) if o.readiness_source).manifest["spec"]["forProvider"]["manifest"]
    container = kserve.rendered_container(llmis, "template")
    container["args"] = ['--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}']
    baseline = len(kserve.launch({**container, "args": []}, tmp_path))
    assert kserve.launch(container, tmp_path)[baseline:] == [
        "--kv-transfer-config=kv_connector:NixlConnector",
        "--kv-transfer-config=kv_role:kv_both",
    ]
