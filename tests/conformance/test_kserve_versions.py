"""On every KServe version we support, vLLM receives the preset's command line plus exactly the user's args.

Each LLMIS is rendered for a version, merged over that version's preset as modelled in launchers.py
(restated from the presets at each tag), and started with a stub vllm. What vLLM must receive is
the preset's own argv (the preset alone, no container of ours) with, where the preset forwards the
container's args, our tensor flag (single node) and the user's args inserted unchanged. So a lost
`--served-model-name` or port (0.16 replaces the preset's args), a quote that reaches vLLM (0.16,
0.17 run no shell), a mangled JSON arg (eval) or a missing tensor size would each show. The model of
the newest presets is checked against the real ones, and each version's rendering against the
fields its LLMInferenceService API has.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from modelplane.model import KSERVE_VERSIONS
from modelplane.render import render_replica
from modelplane.render.args import extra_args
from modelplane.render.pod import user_args

from tests.conformance import examples, kserve, launchers
from tests.conformance.shapes import (
    ARG_CASES,
    HOSTILE,
    WORKLOADS,
    member_of,
    real_argv,
    rendered_llmis,
    replica_shapes,
    workload,
)


def _intended(version: str, llmis: dict[str, Any], path: str, user: list[str], workdir: Path) -> list[str]:
    """The preset's own argv with our tensor flag (single node) and the user's args where it forwards args."""
    own = launchers.vllm_argv(version, llmis, path, workdir, ours=False)
    shape = launchers.shape_of(llmis, path)
    tensor = (workload(llmis, path) or {}).get("parallelism", {}).get("tensor")
    ours = [f"--tensor-parallel-size={tensor}"] if shape.role == "single" and tensor else []
    at = len(own) - launchers.user_args_at(version, shape)
    return [*own[:at], *ours, *user, *own[at:]]


def _check(version: str, llmis: dict[str, Any], user_of: Any, workdir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    got: dict[str, Any] = {}
    want: dict[str, Any] = {}
    for path in WORKLOADS:
        if workload(llmis, path) is None:
            continue
        got[path] = launchers.vllm_argv(version, llmis, path, workdir)
        want[path] = _intended(version, llmis, path, user_of(path), workdir)
    return got, want


@pytest.mark.parametrize(("example", "index"), examples.llmis_ids())
def test_every_example_reaches_vllm_on_its_clusters_kserve(example: str, index: int, tmp_path: Path) -> None:
    llmis = examples.llmis(example, index)
    r = examples.replica_of(example, llmis)
    version = r.kserve_version or KSERVE_VERSIONS[-1]
    got, want = _check(version, llmis, lambda path: list(extra_args(user_args(member_of(r, llmis, path)))), tmp_path)
    assert got == want


def _cases() -> list[tuple[str, str]]:
    return [(version, kind) for version in KSERVE_VERSIONS for kind in sorted(ARG_CASES)]


@pytest.mark.parametrize(("version", "kind"), _cases())
def test_hostile_args_reach_vllm_unchanged_on_every_version(version: str, kind: str, tmp_path: Path) -> None:
    case = ARG_CASES[kind]
    got: dict[str, Any] = {}
    want: dict[str, Any] = {}
    for shape, r in replica_shapes(case.args, case.env).items():
        llmis = rendered_llmis(replace(r, kserve_version=version))
        g, w = _check(version, llmis, lambda _path: list(case.want), tmp_path)
        got |= {f"{shape}: {p}": v for p, v in g.items()}
        want |= {f"{shape}: {p}": v for p, v in w.items()}
    assert got == want
    assert len(got) == 11  # every shape's every workload ran


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_the_model_of_the_newest_presets_agrees_with_the_real_ones(kind: str, tmp_path: Path) -> None:
    """vLLM gets the same model name, parallelism and user args from the modelled and the real presets."""
    kserve.require_presets()

    def facts(argv: list[str]) -> dict[str, Any]:
        flags = ("--served-model-name", "--port", "--tensor-parallel-size", "--data-parallel-size")
        return {
            **{f: kserve.flag_values(argv, f)[-1:] for f in flags},
            "expert": "--enable-expert-parallel" in argv,
            "headless": "--headless" in argv,
            "user args": argv[-len(HOSTILE[kind]) :],
        }

    got: dict[str, Any] = {}
    want: dict[str, Any] = {}
    for shape, r in replica_shapes(tuple(HOSTILE[kind])).items():
        llmis = rendered_llmis(r)
        for path in WORKLOADS:
            if workload(llmis, path) is None:
                continue
            real = real_argv(llmis, path, tmp_path)
            got[f"{shape}: {path}"] = facts(launchers.vllm_argv(KSERVE_VERSIONS[-1], llmis, path, tmp_path))
            want[f"{shape}: {path}"] = facts(real)
    assert got == want


# LLMInferenceService spec fields KServe v0.16 serves (KS v0.16.0
# config/crd/full/llmisvc/serving.kserve.io_llminferenceservices.yaml, v1alpha1, its only version):
# no workload labels or annotations, which arrive in v0.17.0. A field it lacks is pruned on create.
V016_SPEC = {"baseRefs", "model", "parallelism", "prefill", "replicas", "router", "template", "worker"}
V016_PREFILL = {"parallelism", "replicas", "template", "worker"}


@pytest.mark.parametrize("version", KSERVE_VERSIONS)
def test_each_version_gets_only_fields_its_api_has_and_a_podgroup_only_when_pods_can_join_it(version: str) -> None:
    got: dict[str, Any] = {}
    for shape, r in replica_shapes(("--enforce-eager",)).items():
        objects = render_replica(replace(r, kserve_version=version))
        manifests = [o.manifest["spec"]["forProvider"]["manifest"] for o in objects]
        llmis = next(m for m in manifests if m["kind"] == "LLMInferenceService")
        prefill = llmis["spec"].get("prefill", {})
        got[shape] = {
            "fields v0.16 lacks": sorted((llmis["spec"].keys() - V016_SPEC) | (prefill.keys() - V016_PREFILL)),
            "PodGroups": sum(m["kind"] == "PodGroup" for m in manifests),
        }
    labelled = ["annotations", "labels"]
    want = {
        shape: {"fields v0.16 lacks": [] if version == "0.16" else labelled, "PodGroups": int(version != "0.16")}
        for shape in got
    }
    assert got == want
