"""The fleet view as terminal text: whole outputs, column alignment included."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from modelplane.fleet import build, pool_table, text
from modelplane.model import Cluster, Deployment, ModelReplica, TaintEffect
from modelplane.scheduler import RemovedReplica, ScheduleResult
from modelplane.scheduler.result import FIT

from tests.fleet.factories import rejected, result, score
from tests.scheduler.factories import cluster, deployment, leader_worker, observed, pool, taint

DEP = deployment("llm", namespace="team-a", replicas=3)
OTHER = deployment("chat", namespace="team-b")
GANG = deployment("gang", namespace="team-a", engines=[leader_worker("main", workers=1)])


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica]
    result: ScheduleResult | None
    want: str
    problem: str = ""


CASES = [
    Case(
        name="a full placement lists every pool, each further replica on its own line, then the scores",
        deployment=DEP,
        clusters=[
            cluster("us-east-1", pools=[pool("l4", nodes=6), pool("h100", nodes=4)]),
            cluster("eu-west-1", pools=[pool("a100", nodes=3)], taints=[taint("spot")]),
        ],
        replicas=[
            observed(OTHER, cluster="us-east-1", index=0, pools="h100"),
            observed(DEP, cluster="us-east-1", index=0, pools="h100"),
        ],
        result=result(
            desired=3,
            replicas=[observed(DEP, cluster="us-east-1", index=0, pools="h100")],
            created=[
                observed(DEP, cluster="us-east-1", index=1, pools="h100"),
                observed(DEP, cluster="eu-west-1", index=0, pools="a100"),
            ],
            total_clusters=2,
            scores=[
                score("us-east-1", 10150, spread=50, balance=100),
                score("eu-west-1", 10133, spread=100, balance=33),
            ],
        ),
        want=(
            "ModelDeployment team-a/llm: 3 of 3 replicas placed.\n"
            "  CLUSTER    READY  TAINTS           POOL  DEVICES PER NODE  NODES  USED  FREE  REPLICAS\n"
            "  eu-west-1  yes    spot:NoSchedule  a100  8x gpu            3      1     2     team-a/llm#0 main (new, 1 node)\n"
            "  us-east-1  yes    -                h100  8x gpu            4      3     1     team-a/llm#0 main (retained, 1 node)\n"
            "                                                                                team-a/llm#1 main (new, 1 node)\n"
            "                                                                                team-b/chat#0 main (1 node)\n"
            "                                     l4    8x gpu            6      0     6     -\n"
            "Scores (last round that placed a replica, best first):\n"
            "  CLUSTER    TOTAL  BALANCE  SPREAD\n"
            "  us-east-1  10150  100      50\n"
            "  eu-west-1  10133  33       100\n"
            "Diagnosis: 2/2 clusters are available.\n"
        ),
    ),
    Case(
        name="a partial placement says why clusters turned the rest down, that the hosting one is full, and what was removed",
        deployment=GANG,
        clusters=[
            cluster("b", ready=False, pools=[]),
            cluster(
                "a", pools=[pool("ib", nodes=3)], taints=[taint("drain", value="now", effect=TaintEffect.NO_EXECUTE)]
            ),
        ],
        replicas=[observed(GANG, cluster="c", index=0, pools="ib")],
        result=result(
            desired=2,
            created=[observed(GANG, cluster="a", index=0, pools="ib")],
            removed=[RemovedReplica(name="gang-c-0", cluster="c", index=0, reason="cluster deleted")],
            total_clusters=2,
            statuses={
                "a": rejected("had no pool with enough free nodes", "pool ib: 1 free nodes, engine main needs 2"),
                "b": rejected("were not Ready"),
            },
        ),
        want=(
            "ModelDeployment team-a/gang: 1 of 2 replicas placed, 1 unplaced.\n"
            "  CLUSTER  READY  TAINTS               POOL  DEVICES PER NODE  NODES  USED  FREE  REPLICAS\n"
            "  a        yes    drain=now:NoExecute  ib    8x gpu            3      2     1     team-a/gang#0 main (new, 2 nodes)\n"
            "  b        no     -                    -\n"
            "Why 1 unplaced replica fits nowhere:\n"
            "  CLUSTER  REASON          DETAIL\n"
            "  b        were not Ready  -\n"
            "Hosting this deployment, with no room for another replica:\n"
            "  CLUSTER  HOSTS  REASON                              DETAIL\n"
            "  a        1      had no pool with enough free nodes  pool ib: 1 free nodes, engine main needs 2\n"
            "Removed gang-c-0 from c: cluster deleted.\n"
            "Diagnosis: 0/2 clusters are available: 1 had no pool with enough free nodes, 1 were not Ready.\n"
        ),
    ),
    Case(
        name="when every replica is placed, clusters the last round passed over are still explained",
        deployment=deployment("llm", namespace="team-a", replicas=1),
        clusters=[cluster("a"), cluster("b", ready=False)],
        replicas=[],
        result=result(
            desired=1,
            created=[observed(DEP, cluster="a", index=0, pools="h100")],
            total_clusters=2,
            statuses={"a": FIT, "b": rejected("had Ready=False", "cluster is not Ready")},
        ),
        want=(
            "ModelDeployment team-a/llm: 1 of 1 replicas placed.\n"
            "  CLUSTER  READY  TAINTS  POOL  DEVICES PER NODE  NODES  USED  FREE  REPLICAS\n"
            "  a        yes    -       h100  8x gpu            4      1     3     team-a/llm#0 main (new, 1 node)\n"
            "  b        no     -       h100  8x gpu            4      0     4     -\n"
            "Clusters passed over in the last round:\n"
            "  CLUSTER  REASON           DETAIL\n"
            "  b        had Ready=False  cluster is not Ready\n"
            "Diagnosis: 1/2 clusters are available: 1 had Ready=False.\n"
        ),
    ),
    Case(
        name="a deployment that could not be scheduled shows the fleet as kept and the problem as the diagnosis",
        deployment=DEP,
        clusters=[cluster("a", pools=[pool("h100", nodes=1)])],
        replicas=[
            observed(DEP, cluster="a", index=0, pools="h100"),
            observed(OTHER, cluster="a", index=0, pools="h100"),
        ],
        result=None,
        problem="not scheduled (InvalidNodeSelector): engine main: bad",
        want=(
            "ModelDeployment team-a/llm: Not scheduled; 1 observed replicas kept.\n"
            "  CLUSTER  READY  TAINTS  POOL  DEVICES PER NODE  NODES  USED  FREE  REPLICAS\n"
            "  a        yes    -       h100  8x gpu            1      2     -1    team-a/llm#0 main (retained, 1 node)\n"
            "                                                                     team-b/chat#0 main (1 node)\n"
            "Diagnosis: not scheduled (InvalidNodeSelector): engine main: bad\n"
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_text(case: Case) -> None:
    got = text(build(case.deployment, case.clusters, case.replicas, case.result, problem=case.problem))
    assert got == case.want


def test_the_pool_table_is_the_text_between_the_headline_and_the_verdicts() -> None:
    case = CASES[0]
    view = build(case.deployment, case.clusters, case.replicas, case.result)
    assert pool_table(view) == case.want.splitlines()[1:7]
