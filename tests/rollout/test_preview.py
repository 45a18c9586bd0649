"""A rollout previewed round by round from an observed fleet, each change Ready by the next round."""

from dataclasses import dataclass

import pytest
from modelplane.rollout import Budget
from modelplane.rollout.step import Member, Preview, Round, preview


def m(name: str, *, current: bool = False, ready: bool = True) -> Member:
    cluster, index = name.rsplit("-", 1)
    return Member(name=name, cluster=cluster, index=int(index), current=current, ready=ready)


OLD4 = (m("a-0"), m("a-1"), m("b-0"), m("b-1"))
DEFAULT = Budget(surge=1, unavailable=1)


def rnd(number: int, created: int, updated: tuple[str, ...], removed: tuple[str, ...], *counts: int) -> Round:
    available, total, current = counts
    return Round(
        number=number,
        created=created,
        updated=updated,
        removed=removed,
        available=available,
        total=total,
        current=current,
    )


@dataclass(frozen=True)
class Case:
    name: str
    fleet: tuple[Member, ...]
    want: Preview
    budget: Budget = DEFAULT
    paused: bool = False
    replicas: int = 4


CASES = [
    Case(
        "the defaults take a 4-replica change through 4 rounds, 3 of 4 available in each",
        fleet=OLD4,
        want=Preview(
            rounds=(
                rnd(1, 1, ("a-1",), (), 3, 5, 2),
                rnd(2, 0, (), ("b-1",), 4, 4, 2),  # the busiest cluster's highest index leaves first
                rnd(3, 1, ("b-0",), (), 3, 5, 4),
                rnd(4, 0, (), ("a-0",), 4, 4, 4),
            ),
            complete=True,
        ),
    ),
    Case(
        "with no surge each round updates one replica in place",
        fleet=OLD4,
        budget=Budget(surge=0, unavailable=1),
        want=Preview(
            rounds=(
                rnd(1, 0, ("a-0",), (), 3, 4, 1),
                rnd(2, 0, ("a-1",), (), 3, 4, 2),
                rnd(3, 0, ("b-0",), (), 3, 4, 3),
                rnd(4, 0, ("b-1",), (), 3, 4, 4),
            ),
            complete=True,
        ),
    ),
    Case(
        "surge only: all 4 stay available, old replicas leave once successors are up",
        fleet=OLD4,
        budget=Budget(surge=2, unavailable=0),
        want=Preview(
            rounds=(
                rnd(1, 2, (), (), 4, 6, 2),
                rnd(2, 0, (), ("a-1",), 5, 5, 2),
                rnd(3, 1, (), ("b-1",), 4, 5, 3),
                rnd(4, 1, (), ("b-0",), 4, 5, 4),
                rnd(5, 0, (), ("a-0",), 4, 4, 4),
            ),
            complete=True,
        ),
    ),
    Case(
        "a not-Ready old replica is updated first, at no cost: with 3 Ready the floor allows no other",
        fleet=(m("a-0"), m("a-1", ready=False), m("b-0"), m("b-1")),
        budget=Budget(surge=0, unavailable=1),
        want=Preview(
            rounds=(
                rnd(1, 0, ("a-1",), (), 3, 4, 1),
                rnd(2, 0, ("a-0",), (), 3, 4, 2),
                rnd(3, 0, ("b-0",), (), 3, 4, 3),
                rnd(4, 0, ("b-1",), (), 3, 4, 4),
            ),
            complete=True,
        ),
    ),
    Case(
        "paused: no round changes anything",
        fleet=OLD4,
        paused=True,
        want=Preview(rounds=(), complete=False),
    ),
    Case(
        "every replica at the revision and Ready: nothing to do",
        fleet=tuple(m(r.name, current=True) for r in OLD4),
        want=Preview(rounds=(), complete=True),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_preview(case: Case) -> None:
    got = preview(replicas=case.replicas, budget=case.budget, paused=case.paused, fleet=case.fleet)
    assert got == case.want


def test_the_preview_does_not_depend_on_the_input_order() -> None:
    forward = preview(replicas=4, budget=DEFAULT, paused=False, fleet=OLD4)
    assert preview(replicas=4, budget=DEFAULT, paused=False, fleet=tuple(reversed(OLD4))) == forward
