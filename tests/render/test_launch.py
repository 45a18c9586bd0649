"""The engine's args take the form the cluster's KServe presets need, per version (render/launch.py)."""

from dataclasses import dataclass, replace
from typing import Any

import pytest
from modelplane.model import KSERVE_VERSIONS, ModelReplica, Phase, ServingMode
from modelplane.render import render_notes, render_replica

from tests.render.factories import container_template, engine, gpus, leader_worker, member, replica

JSON_ARG = '--hf-overrides={"rope_scaling":{"rope_type":"yarn","factor":4.0}}'
QUOTED = f"'{JSON_ARG}'"
ARGS = ("--max-model-len=8192", JSON_ARG)
WORKLOADS = ("template", "worker", "prefill.template", "prefill.worker")


def _single(*, args: tuple[str, ...] = ARGS, gpu_count: int = 2, env: tuple[dict[str, Any], ...] = ()) -> Any:
    template = container_template(args=args, env=env)
    return engine(members=(member(requests=(gpus(gpu_count),) if gpu_count else (), template=template),))


def _gang(*, env: tuple[dict[str, Any], ...] = (), name: str = "main", phase: Phase | None = None) -> Any:
    template = container_template(args=ARGS, env=env)
    return engine(name, phase=phase, members=tuple(replace(m, template=template) for m in leader_worker(nodes=1)))


def _pd(version: str | None) -> ModelReplica:
    return replica(
        serving_mode=ServingMode.PREFILL_DECODE,
        engines=(
            replace(_single(), name="decode", phase=Phase.DECODE),
            replace(_single(), name="prefill", phase=Phase.PREFILL),
        ),
        kserve_version=version,
    )


def _view(r: ModelReplica) -> dict[str, Any]:
    """Per workload: the main container's args and env and whether pod metadata is rendered; the kinds rendered."""
    objects = render_replica(r)
    llmis = next(o for o in objects if o.readiness_source).manifest["spec"]["forProvider"]["manifest"]
    out: dict[str, Any] = {"kinds": sorted(o.manifest["spec"]["forProvider"]["manifest"]["kind"] for o in objects)}
    for path in WORKLOADS:
        node: Any = llmis["spec"]
        for part in path.split(".")[:-1]:
            node = node.get(part) or {}
        pod = node.get(path.rsplit(".", maxsplit=1)[-1])
        if pod is not None:
            main = pod["containers"][0]
            out[path] = {
                "args": main.get("args"),
                "env": main.get("env"),
                "pod metadata": sorted(k for k in ("labels", "annotations") if k in node),
            }
    return out


ALL = ["annotations", "labels"]
KINDS = ["LLMInferenceService", "PodGroup", "ResourceClaimTemplate"]
GANG_KINDS = ["LLMInferenceService", "PodGroup", "ResourceClaimTemplate", "ResourceClaimTemplate"]
PD_KINDS = ["LLMInferenceService", "PodGroup", "ResourceClaimTemplate", "ResourceClaimTemplate"]
RESTATED = ["--served-model-name", "Qwen/Qwen3-8B", "--port"]
GANG_ENV = [
    {"name": "MODELPLANE_LEADER_ADDRESS", "value": "$(LWS_LEADER_ADDRESS)"},
    {"name": "MODELPLANE_RANK", "value": "$(LWS_WORKER_INDEX)"},
]
OWN_ENV = [
    *GANG_ENV,
    {"name": "A", "value": "1"},
    {"name": "VLLM_ADDITIONAL_ARGS", "value": f"--seed 7 {ARGS[0]} {QUOTED}"},
]


@dataclass(frozen=True)
class Case:
    name: str
    replica: ModelReplica
    want: dict[str, Any]


CASES = [
    *(
        Case(
            f"on {v or 'an undeclared version (0.20)'} a single node gets the tensor size, and args quoted for the eval",
            replica(engines=(_single(),), kserve_version=v),
            {
                "kinds": KINDS,
                "template": {"args": ["--tensor-parallel-size=2", ARGS[0], QUOTED], "env": None, "pod metadata": ALL},
            },
        )
        for v in (None, "0.18", "0.19", "0.20", "0.21", "0.100")
    ),
    Case(
        "on 0.17 vLLM gets a single node's args directly, so they are written as they are",
        replica(engines=(_single(),), kserve_version="0.17"),
        {"kinds": KINDS, "template": {"args": ["--tensor-parallel-size=2", *ARGS], "env": None, "pod metadata": ALL}},
    ),
    Case(
        "on 0.16 our args replace the preset's, so its model name, port and flag are restated first",
        replica(engines=(_single(),), kserve_version="0.16"),
        {
            "kinds": ["LLMInferenceService", "ResourceClaimTemplate"],
            "template": {
                "args": [*RESTATED, "8000", "--disable-log-requests", "--tensor-parallel-size=2", *ARGS],
                "env": None,
                "pod metadata": [],
            },
        },
    ),
    Case(
        "on 0.16 a claimless single node without args keeps the preset's own args",
        replica(engines=(_single(args=(), gpu_count=0),), kserve_version="0.16"),
        {"kinds": ["LLMInferenceService"], "template": {"args": None, "env": None, "pod metadata": []}},
    ),
    Case(
        "on 0.16 the decode preset's port is 8001 and the prefill preset's 8000",
        _pd("0.16"),
        {
            "kinds": ["LLMInferenceService", "ResourceClaimTemplate", "ResourceClaimTemplate"],
            "template": {
                "args": [*RESTATED, "8001", "--disable-log-requests", "--tensor-parallel-size=2", *ARGS],
                "env": None,
                "pod metadata": [],
            },
            "prefill.template": {
                "args": [*RESTATED, "8000", "--disable-log-requests", "--tensor-parallel-size=2", *ARGS],
                "env": None,
                "pod metadata": [],
            },
        },
    ),
    Case(
        "on 0.17 prefill and decode take args as written",
        _pd("0.17"),
        {
            "kinds": PD_KINDS,
            "template": {"args": ["--tensor-parallel-size=2", *ARGS], "env": None, "pod metadata": ALL},
            "prefill.template": {"args": ["--tensor-parallel-size=2", *ARGS], "env": None, "pod metadata": ALL},
        },
    ),
    *(
        Case(
            f"on {v} the data-parallel scripts eval the args, so they are quoted",
            replica(engines=(_gang(),), kserve_version=v),
            {
                "kinds": GANG_KINDS,
                "template": {"args": [ARGS[0], QUOTED], "env": GANG_ENV, "pod metadata": ALL},
                "worker": {"args": [ARGS[0], QUOTED], "env": GANG_ENV, "pod metadata": ALL},
            },
        )
        for v in ("0.17", "0.20")
    ),
    Case(
        "on 0.16 the data-parallel script is the container's args, so ours go in VLLM_ADDITIONAL_ARGS",
        replica(engines=(_gang(),), kserve_version="0.16"),
        {
            "kinds": ["LLMInferenceService", "ResourceClaimTemplate", "ResourceClaimTemplate"],
            "template": {
                "args": None,
                "env": [*GANG_ENV, {"name": "VLLM_ADDITIONAL_ARGS", "value": f"{ARGS[0]} {QUOTED}"}],
                "pod metadata": [],
            },
            "worker": {
                "args": None,
                "env": [*GANG_ENV, {"name": "VLLM_ADDITIONAL_ARGS", "value": f"{ARGS[0]} {QUOTED}"}],
                "pod metadata": [],
            },
        },
    ),
    Case(
        "on 0.16 the args follow the engine's own VLLM_ADDITIONAL_ARGS, in its place",
        replica(
            engines=(_gang(env=({"name": "A", "value": "1"}, {"name": "VLLM_ADDITIONAL_ARGS", "value": "--seed 7"})),),
            kserve_version="0.16",
        ),
        {
            "kinds": ["LLMInferenceService", "ResourceClaimTemplate", "ResourceClaimTemplate"],
            "template": {"args": None, "env": OWN_ENV, "pod metadata": []},
            "worker": {"args": None, "env": OWN_ENV, "pod metadata": []},
        },
    ),
    Case(
        "on 0.16 a user command still takes its args as written",
        replica(
            engines=(
                engine(
                    members=(
                        member(
                            requests=(gpus(),),
                            template=container_template(command=("vllm", "serve"), args=("/mnt/models", JSON_ARG)),
                        ),
                    )
                ),
            ),
            kserve_version="0.16",
        ),
        {
            "kinds": ["LLMInferenceService", "ResourceClaimTemplate"],
            "template": {"args": ["/mnt/models", JSON_ARG], "env": None, "pod metadata": []},
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_args_take_the_form_the_clusters_presets_need(case: Case) -> None:
    assert _view(case.replica) == case.want


def _llmis_name(r: ModelReplica) -> str:
    llmis = next(o for o in render_replica(r) if o.readiness_source)
    return llmis.manifest["spec"]["forProvider"]["manifest"]["metadata"]["name"]


def test_only_a_change_to_or_from_0_16_replaces_the_llmis() -> None:
    """0.16 has no pod labels, so its Deployment selector differs: the LLMIS is replaced, not updated."""
    got = {v: _llmis_name(replica(engines=(_single(),), kserve_version=v)) for v in KSERVE_VERSIONS}
    newer = {got[v] for v in KSERVE_VERSIONS[1:]}
    assert (len(newer), got["0.16"] in newer) == (1, False)


NOTE_016 = (
    "KServe 0.16 cannot label or annotate the pods it creates, so KAI's pod-grouper groups them itself in KAI's "
    "default queue (default-queue): queue serving, priority class {} and the replica's all-or-nothing gang do not "
    "apply, and no "
    "PodGroup is rendered; KServe 0.17 or later applies them."
)


@dataclass(frozen=True)
class NoteCase:
    name: str
    replica: ModelReplica
    want: tuple[str, ...]


NOTES = [
    NoteCase(
        "0.16 says what KAI does without pod labels",
        replica(queue="serving", kserve_version="0.16"),
        (NOTE_016.format("inference"),),
    ),
    NoteCase(
        "0.16 names the priority class that does not apply",
        replace(replica(queue="serving", kserve_version="0.16"), priority_class_name="high"),
        (NOTE_016.format("high"),),
    ),
    *(NoteCase(f"{v} needs nothing more", replica(kserve_version=v), ()) for v in KSERVE_VERSIONS[1:]),
    *(
        NoteCase(
            f"{v}, newer than we know, says it is rendered as 0.20",
            replica(kserve_version=v),
            (
                f"KServe {v} is newer than the versions replicas are rendered for (0.16 to 0.20): they are "
                "rendered as for KServe 0.20, assuming its presets launch vLLM as 0.20's do.",
            ),
        )
        for v in ("0.21", "0.22")
    ),
]


@pytest.mark.parametrize("case", NOTES, ids=lambda c: c.name)
def test_notes_per_version(case: NoteCase) -> None:
    assert render_notes(case.replica) == case.want
