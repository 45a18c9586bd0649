"""vLLM receives exactly the args the user wrote, through KServe's real preset launchers.

Each rendered LLMInferenceService is merged over the presets KServe would pick for it, the presets'
Go templates resolved, and the `main` container's command run under bash with a stub `vllm` that
records its argv (see kserve.py). The argv must be the preset's own command line followed by the
user's args, unchanged: for every example, and for args full of what the presets' `eval` would
otherwise re-parse. Multi-node shapes run the leader and the worker scripts with LWS's env.
"""

from pathlib import Path
from typing import Any

import pytest
from modelplane.render.args import extra_args
from modelplane.render.pod import user_args

from tests.conformance import examples, kserve
from tests.conformance.shapes import (
    ARG_CASES,
    WORKLOADS,
    member_of,
    real_argv,
    rendered_llmis,
    replica_shapes,
    workload,
)
from tests.render.factories import replica


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
        w = workload(llmis, path)
        if w is None:
            continue
        argv = real_argv(llmis, path, tmp_path)
        baseline = real_argv(llmis, path, tmp_path, without_args=True)
        got[path] = _seen(argv, baseline, w)
        p = w.get("parallelism", {})
        want[path] = {
            "command": ["serve", "/mnt/models"],
            "served-model-name": [llmis["spec"]["model"]["name"]],
            "tensor": str(p["tensor"]) if "tensor" in p else None,
            "data": str(p["data"]) if p.get("data") else None,
            "expert": bool(p.get("expert")),
            "user args": [*_ours(w), *extra_args(user_args(member_of(r, llmis, path)))],
        }
    assert got == want


@pytest.mark.parametrize("kind", sorted(ARG_CASES))
def test_hostile_args_reach_vllm_unchanged(kind: str, tmp_path: Path) -> None:
    kserve.require_presets()
    case = ARG_CASES[kind]
    got: dict[str, list[str]] = {}
    want: dict[str, list[str]] = {}
    for shape, r in replica_shapes(case.args, case.env).items():
        llmis = rendered_llmis(r)
        for path in WORKLOADS:
            w = workload(llmis, path)
            if w is not None:
                argv = real_argv(llmis, path, tmp_path)
                got[f"{shape}: {path}"] = argv[len(real_argv(llmis, path, tmp_path, without_args=True)) :]
                want[f"{shape}: {path}"] = [*_ours(w), *case.want]
    assert got == want
    assert len(got) == 11  # every shape's every workload ran


def test_an_unquoted_json_arg_is_mangled_by_the_preset(tmp_path: Path) -> None:
    """Why quoting matters: the preset's eval strips quotes and brace-expands a raw JSON arg."""
    kserve.require_presets()
    llmis = rendered_llmis(replica())
    container = kserve.rendered_container(llmis, "template")
    container["args"] = ['--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}']
    baseline = len(kserve.launch({**container, "args": []}, tmp_path))
    assert kserve.launch(container, tmp_path)[baseline:] == [
        "--kv-transfer-config=kv_connector:NixlConnector",
        "--kv-transfer-config=kv_role:kv_both",
    ]
