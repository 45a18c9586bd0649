"""Scarcity: flexible replicas go where fewer of the other deployments' stated demand could go (scarcity.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest
from modelplane.model import Deployment, ModelReplica, PoolPacking
from modelplane.scheduler import schedule
from modelplane.scheduler.scarcity import Scarcity
from modelplane.scheduler.state import statements

from tests.scheduler.factories import Outline, cluster, deployment, gpu_engines, observed, outline, pool

# Two nodes of H100, two of A100 alike in memory: the packing penalty alone cannot tell them apart.
FLEET = (
    cluster("a", pools=[pool("h100", nodes=2)]),
    cluster("b", pools=[pool("a100", nodes=2, model="A100")]),
)
SMALL = deployment("small", namespace="team-b", replicas=1, engines=gpu_engines(1))
HOPPER = deployment("hopper", replicas=1, engines=gpu_engines(8, model="H100"))
ANY_EIGHT = deployment("any", namespace="team-c", replicas=2, engines=gpu_engines(8))


@dataclass(frozen=True)
class Case:
    name: str
    others: Sequence[Deployment]
    fleet: Sequence[ModelReplica]
    want: Outline
    pressure: dict[str, float]  # per cluster's one pool, as SMALL's call sees it


CASES = [
    Case(
        "read alone, nothing presses: best fit takes the H100 pool one replica already fills",
        [],
        [observed(HOPPER, cluster="a", index=0, pools="h100")],
        Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
        {"a": 0.0, "b": 0.0},
    ),
    Case(
        "a Hopper-only deployment, placed already, still presses on the only kind it can use",
        [HOPPER],
        [observed(HOPPER, cluster="a", index=0, pools="h100")],
        Outline(replicas=("b/0 main@a100",), created=("b/0",), message="Scheduled 1 of 1 replicas."),
        {"a": 0.5, "b": 0.0},
    ),
    Case(
        "demand that can use either kind presses on both alike: best fit decides again",
        [ANY_EIGHT],
        [observed(HOPPER, cluster="a", index=0, pools="h100")],
        Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
        {"a": 0.5, "b": 0.5},
    ),
    Case(
        "picky and flexible demand together: the kind only the picky one needs presses harder",
        [HOPPER, ANY_EIGHT],
        [observed(HOPPER, cluster="a", index=0, pools="h100")],
        Outline(replicas=("b/0 main@a100",), created=("b/0",), message="Scheduled 1 of 1 replicas."),
        {"a": 1.0, "b": 0.5},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_flexible_replicas_go_where_fewer_others_could(case: Case) -> None:
    demands = statements([SMALL, *case.others], FLEET)
    scarcity = Scarcity(FLEET, demands, me=("team-b", "small"))
    result = schedule(SMALL, FLEET, case.fleet, demands=demands)
    pressure = {c.name: scarcity.pressure(c.name, c.pools[0].name) for c in FLEET}
    assert (outline(result), pressure) == (case.want, case.pressure)


def test_the_deployment_asking_never_presses_on_itself() -> None:
    demands = statements([SMALL, HOPPER], FLEET)
    as_hopper = Scarcity(FLEET, demands, me=("team-a", "hopper"))
    assert {c.name: as_hopper.pressure(c.name, c.pools[0].name) for c in FLEET} == {
        "a": 0.25,  # SMALL's one node over the four it could use
        "b": 0.25,
    }


def test_shared_pools_pay_no_scarcity() -> None:
    """On `packing: Devices` pools a pod holds devices, not nodes: best fit decides, as without statements."""
    shared = tuple(replace(c, pools=tuple(replace(p, packing=PoolPacking.DEVICES) for p in c.pools)) for c in FLEET)
    result = schedule(SMALL, shared, [], demands=statements([SMALL, HOPPER], shared))
    assert (outline(result), [s.scores.get("scarce") for s in result.diagnosis.scores]) == (
        Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
        [None, None],
    )
