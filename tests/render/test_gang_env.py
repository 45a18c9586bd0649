"""Gang pods get MODELPLANE_LEADER_ADDRESS and MODELPLANE_RANK, as Modelplane sets them (render/gangenv.py)."""

from dataclasses import dataclass, replace
from typing import Any

import pytest
from modelplane.model import ModelReplica, Role
from modelplane.render import render_replica
from modelplane.render.envrefs import alias

from tests.render.factories import container_template, engine, gpus, leader_worker, member, replica

LEADER = {"name": "MODELPLANE_LEADER_ADDRESS", "value": "$(LWS_LEADER_ADDRESS)"}
RANK = {"name": "MODELPLANE_RANK", "value": "$(LWS_WORKER_INDEX)"}
RAY_HEAD = ("/bin/sh", "-c", "ray start --head --port=6379; exec vllm serve /mnt/models")
RAY_JOIN = ("/bin/sh", "-c", "exec ray start --address=$(MODELPLANE_LEADER_ADDRESS):6379 --block")


def _gang(leader: dict[str, Any], worker: dict[str, Any] | None = None) -> ModelReplica:
    lead, work = leader_worker(nodes=2)
    members = (
        replace(lead, template=container_template(**leader)),
        replace(work, template=container_template(**(leader if worker is None else worker))),
    )
    return replica(engines=(engine(members=members),))


def _env(r: ModelReplica) -> dict[str, Any]:
    """Each workload's `main` env (None: it has none)."""
    llmis = next(o for o in render_replica(r) if o.readiness_source).manifest["spec"]["forProvider"]["manifest"]
    return {w: llmis["spec"][w]["containers"][0].get("env") for w in ("template", "worker") if w in llmis["spec"]}


@dataclass(frozen=True)
class Case:
    name: str
    replica: ModelReplica
    want: dict[str, Any]


CASES = [
    Case(
        "the leader and the workers of a gang with its own commands both get the leader's address and their rank",
        _gang({"command": RAY_HEAD}, {"command": RAY_JOIN}),
        {"template": [LEADER, RANK], "worker": [LEADER, RANK]},
    ),
    Case(
        "a gang under the preset launcher gets them too",
        _gang({"args": ("--max-model-len=8192",)}),
        {"template": [LEADER, RANK], "worker": [LEADER, RANK]},
    ),
    Case(
        "they go ahead of the engine's own env, so its values can refer to them",
        _gang({"command": RAY_JOIN, "env": ({"name": "NODE_RANK", "value": "$(MODELPLANE_RANK)"},)}),
        {
            "template": [LEADER, RANK, {"name": "NODE_RANK", "value": "$(MODELPLANE_RANK)"}],
            "worker": [LEADER, RANK, {"name": "NODE_RANK", "value": "$(MODELPLANE_RANK)"}],
        },
    ),
    Case(
        "a name the engine sets itself keeps the engine's value and place, and is not written twice",
        _gang({"command": RAY_HEAD, "env": ({"name": "A", "value": "1"}, {"name": "MODELPLANE_RANK", "value": "7"})}),
        {
            "template": [LEADER, {"name": "A", "value": "1"}, {"name": "MODELPLANE_RANK", "value": "7"}],
            "worker": [LEADER, {"name": "A", "value": "1"}, {"name": "MODELPLANE_RANK", "value": "7"}],
        },
    ),
    Case(
        "an arg the preset evals reaches the rank through an alias declared after it",
        _gang({"args": ("--node-rank=$(MODELPLANE_RANK)",)}),
        {
            "template": [LEADER, RANK, {"name": alias("MODELPLANE_RANK"), "value": "$(MODELPLANE_RANK)"}],
            "worker": [LEADER, RANK, {"name": alias("MODELPLANE_RANK"), "value": "$(MODELPLANE_RANK)"}],
        },
    ),
    Case(
        "a standalone pod is no LeaderWorkerSet's, so it gets neither",
        replica(engines=(engine(members=(member(Role.STANDALONE, requests=(gpus(),)),)),)),
        {"template": None},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gang_env(case: Case) -> None:
    assert _env(case.replica) == case.want
