"""maxSurge/maxUnavailable resolve as a Deployment's do: surge rounds up, unavailable down, never both 0."""

from dataclasses import dataclass

import pytest
from modelplane.errors import SpecError
from modelplane.model import RolloutStrategy
from modelplane.rollout import Budget, resolve_budget


@dataclass(frozen=True)
class Case:
    name: str
    strategy: RolloutStrategy
    replicas: int
    want: Budget


CASES = [
    Case("the defaults surge one and take one down", RolloutStrategy(), 4, Budget(surge=1, unavailable=1)),
    Case(
        "25% of 10 surges 3 (rounded up) and takes 2 down (rounded down)",
        RolloutStrategy(max_surge="25%", max_unavailable="25%"),
        10,
        Budget(surge=3, unavailable=2),
    ),
    Case(
        "a percent below one replica still surges one",
        RolloutStrategy(max_surge="10%", max_unavailable="10%"),
        4,
        Budget(surge=1, unavailable=0),
    ),
    Case(
        "both 0 would block every change, so one may be unavailable",
        RolloutStrategy(max_surge=0, max_unavailable=0),
        4,
        Budget(surge=0, unavailable=1),
    ),
    Case(
        "percents that both round to 0 also leave one unavailable",
        RolloutStrategy(max_surge="0%", max_unavailable="20%"),
        4,
        Budget(surge=0, unavailable=1),
    ),
    Case(
        "100% takes every replica down",
        RolloutStrategy(max_surge=0, max_unavailable="100%"),
        3,
        Budget(surge=0, unavailable=3),
    ),
    Case(
        "integers are taken as they are, even above spec.replicas",
        RolloutStrategy(max_surge=5, max_unavailable=0),
        2,
        Budget(surge=5, unavailable=0),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_resolve_budget(case: Case) -> None:
    assert resolve_budget(case.strategy, case.replicas) == case.want


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        (
            RolloutStrategy(max_surge="101%"),
            "spec.rollout.maxSurge: must be an integer or a percent from 0% to 100%, got '101%'",
        ),
        (
            RolloutStrategy(max_unavailable="1.5%"),
            "spec.rollout.maxUnavailable: must be an integer or a percent from 0% to 100%, got '1.5%'",
        ),
        (RolloutStrategy(max_unavailable=-1), "spec.rollout.maxUnavailable: must not be negative, got -1"),
    ],
)
def test_a_budget_outside_the_schema_is_a_spec_error(strategy: RolloutStrategy, message: str) -> None:
    with pytest.raises(SpecError) as e:
        resolve_budget(strategy, 4)
    assert str(e.value) == message
