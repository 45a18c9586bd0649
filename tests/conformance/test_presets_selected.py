"""Every rendered shape selects KServe presets that exist, or the replica says which config is missing.

KServe treats a missing well-known config as terminal (`PresetsCombined=False ConfigNotFound`, no
workload created), so the presets each LLMIS selects must all ship with KServe (config/llmisvcconfig/),
unless the replica's ReplicaRendered note names the config the platform team must install.
"""

from dataclasses import dataclass

import pytest
from modelplane.model import ModelReplica, Parallelism, Phase, ServingMode
from modelplane.render import render_notes, render_replica

from tests.conformance import examples, kserve
from tests.render.factories import engine, leader_worker, replica, standalone


@pytest.mark.parametrize(("example", "index"), examples.llmis_ids())
def test_every_example_selects_shipped_presets(example: str, index: int) -> None:
    llmis = examples.llmis(example, index)
    assert [n for n in kserve.well_known_configs(llmis["spec"]) if n not in kserve.presets()] == []


@dataclass(frozen=True)
class Case:
    name: str
    replica: ModelReplica
    want: tuple[list[str], list[str]]  # (selected configs missing from KServe, configs the notes name)


PD = ServingMode.PREFILL_DECODE
PIPELINE = Parallelism(pipeline=2)
CASES = [
    Case("a single node", replica(), ([], [])),
    Case("a data-parallel gang", replica(engines=(engine(members=leader_worker(nodes=1)),)), ([], [])),
    Case(
        "a pipeline gang needs a config KServe does not ship, and says so",
        replica(engines=(engine(members=leader_worker(nodes=1), parallelism=PIPELINE),)),
        (["kserve-config-llm-worker-pipeline-parallel"], ["kserve-config-llm-worker-pipeline-parallel"]),
    ),
    Case(
        "prefill/decode on single nodes, with the router presets",
        replica(
            serving_mode=PD,
            engines=(engine("d", phase=Phase.DECODE), engine("p", phase=Phase.PREFILL, members=standalone())),
        ),
        ([], []),
    ),
    Case(
        "prefill/decode with data-parallel gangs",
        replica(
            serving_mode=PD,
            engines=(
                engine("d", phase=Phase.DECODE, members=leader_worker(nodes=1)),
                engine("p", phase=Phase.PREFILL, members=leader_worker(nodes=2)),
            ),
        ),
        ([], []),
    ),
    Case(
        "a pipeline prefill gang names the prefill config",
        replica(
            serving_mode=PD,
            engines=(
                engine("d", phase=Phase.DECODE),
                engine("p", phase=Phase.PREFILL, members=leader_worker(nodes=1), parallelism=PIPELINE),
            ),
        ),
        (
            ["kserve-config-llm-prefill-worker-pipeline-parallel"],
            ["kserve-config-llm-prefill-worker-pipeline-parallel"],
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_shapes_select_presets_that_exist_or_say_what_is_missing(case: Case) -> None:
    llmis = next(o for o in render_replica(case.replica) if o.readiness_source).manifest["spec"]["forProvider"]
    missing = [n for n in kserve.well_known_configs(llmis["manifest"]["spec"]) if n not in kserve.presets()]
    named = [w for note in render_notes(case.replica) for w in note.split() if w.startswith("kserve-config-")]
    assert (missing, named) == case.want
