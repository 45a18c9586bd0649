"""One reconcile's share of a rollout: how many new replicas, which to update in place, which to remove."""

from dataclasses import dataclass

import pytest
from modelplane.rollout import Budget, Fate, Replica, Step, step, wanted_new


def r(
    name: str, *, current: bool = True, ready: bool = True, fate: Fate = Fate.KEEP, replacing: bool = False
) -> Replica:
    return Replica(name=name, current=current, ready=ready, fate=fate, replacing=replacing)


def old(name: str, *, ready: bool = True, fate: Fate = Fate.KEEP, room: bool = False, waits: bool = False) -> Replica:
    return Replica(name=name, current=False, ready=ready, fate=fate, room=room, waits=waits)


OLD4 = (old("a"), old("b"), old("c"), old("d"))
DEFAULT = Budget(surge=1, unavailable=1)
IN_PLACE = Budget(surge=0, unavailable=1)


@dataclass(frozen=True)
class Case:
    name: str
    fleet: tuple[Replica, ...]
    placed: int  # new replicas the scheduler managed to place
    want_new: int
    want: Step
    replicas: int = 4
    budget: Budget = DEFAULT
    frozen: bool = False


CASES = [
    Case(
        "a deployment at its revision with every replica Ready changes nothing",
        fleet=(r("a"), r("b"), r("c"), r("d")),
        placed=0,
        want_new=0,
        want=Step(),
    ),
    Case(
        "a change surges one replica and updates one more in place within maxUnavailable",
        fleet=OLD4,
        placed=1,
        want_new=1,
        want=Step(update=frozenset({"b"})),
    ),
    Case(
        "with no room for the surge, one replica is updated in place",
        fleet=OLD4,
        placed=0,
        want_new=1,
        want=Step(update=frozenset({"a"})),
    ),
    Case(
        "an old replica goes once its surge successor is Ready, and nothing else that reconcile",
        fleet=(old("a"), r("b"), old("c"), old("d"), r("e")),
        placed=0,
        want_new=0,
        want=Step(remove=frozenset({"a"})),
    ),
    Case(
        "an old replica stays while its surge successor is not Ready",
        fleet=(old("a"), r("b"), old("c"), old("d"), r("e", ready=False)),
        placed=0,
        want_new=0,
        want=Step(),
        budget=Budget(surge=1, unavailable=0),
    ),
    Case(
        "maxSurge 0 updates in place, one Ready replica at a time",
        fleet=OLD4,
        placed=0,
        want_new=0,
        want=Step(update=frozenset({"a"})),
        budget=IN_PLACE,
    ),
    Case(
        "maxUnavailable 2 updates two in place in one reconcile",
        fleet=OLD4,
        placed=0,
        want_new=0,
        want=Step(update=frozenset({"a", "b"})),
        budget=Budget(surge=0, unavailable=2),
    ),
    Case(
        "an old replica that is not Ready is updated at no cost and already counts as down",
        fleet=(old("a", ready=False), old("b"), old("c"), old("d")),
        placed=0,
        want_new=0,
        want=Step(update=frozenset({"a"})),
        budget=IN_PLACE,
    ),
    Case(
        "nothing is updated while another replica is down and the floor is reached",
        fleet=(r("a", ready=False), old("b"), old("c"), old("d")),
        placed=0,
        want_new=0,
        want=Step(),
        budget=IN_PLACE,
    ),
    Case(
        "a frozen rollout (paused or past its deadline) touches no old replica",
        fleet=OLD4,
        placed=0,
        want_new=0,
        want=Step(),
        frozen=True,
    ),
    Case(
        "a frozen rollout still scales up, at the current revision",
        fleet=OLD4,
        placed=1,
        want_new=1,
        want=Step(),
        replicas=5,
        frozen=True,
    ),
    Case(
        "a Ready replica that must move gets a successor beyond maxSurge and stays until it is Ready",
        fleet=(r("a", fate=Fate.MOVE), r("b"), r("c"), r("d")),
        placed=1,
        want_new=1,
        want=Step(),
        budget=IN_PLACE,
    ),
    Case(
        "a moving replica leaves once its successor is Ready",
        fleet=(r("a", fate=Fate.MOVE), r("b"), r("c"), r("d"), r("e")),
        placed=0,
        want_new=0,
        want=Step(remove=frozenset({"a"})),
    ),
    Case(
        "a moving replica with no successor placed keeps serving",
        fleet=(r("a", fate=Fate.MOVE), r("b"), r("c"), r("d")),
        placed=0,
        want_new=1,
        want=Step(),
    ),
    Case(
        "a moving replica that is not Ready leaves at once",
        fleet=(r("a", ready=False, fate=Fate.MOVE), r("b"), r("c"), r("d")),
        placed=1,
        want_new=1,
        want=Step(remove=frozenset({"a"})),
    ),
    Case(
        "replicas asked to make room get successors only within maxSurge",
        fleet=tuple(r(n, fate=Fate.MAKE_ROOM) for n in "abcd"),
        placed=1,
        want_new=1,
        want=Step(),
    ),
    Case(
        "with maxSurge 0 a replica asked to make room gets no successor and stays",
        fleet=tuple(r(n, fate=Fate.MAKE_ROOM) for n in "abcd"),
        placed=0,
        want_new=0,
        want=Step(),
        budget=IN_PLACE,
    ),
    Case(
        "a successor not yet Ready takes the surge slot: no other replica asked to make room gets one",
        fleet=(*(r(n, fate=Fate.MAKE_ROOM) for n in "abcd"), r("e", ready=False)),
        placed=0,
        want_new=0,
        want=Step(),
    ),
    Case(
        "replicas asked to make room leave once their successors are Ready, maxUnavailable a reconcile",
        fleet=(*(r(n, fate=Fate.MAKE_ROOM) for n in "abcd"), r("e"), r("f")),
        placed=0,
        want_new=0,
        want=Step(remove=frozenset({"a"})),
        budget=Budget(surge=2, unavailable=1),
    ),
    Case(
        "a replica that must move leaves before one asked to make room",
        fleet=(r("a", fate=Fate.MAKE_ROOM), r("b", fate=Fate.MOVE), r("c"), r("d"), r("e")),
        placed=0,
        want_new=1,
        want=Step(remove=frozenset({"b"})),
    ),
    Case(
        "a replica whose cluster is gone is removed at once, even when frozen",
        fleet=(r("a", fate=Fate.GONE), old("b"), old("c"), old("d")),
        placed=1,
        want_new=1,
        want=Step(remove=frozenset({"a"})),
        frozen=True,
    ),
    Case(
        "scale-down takes one Ready replica per reconcile with maxUnavailable 1",
        fleet=(r("a"), r("b"), r("c", fate=Fate.SCALE_DOWN), r("d", fate=Fate.SCALE_DOWN)),
        placed=0,
        want_new=0,
        want=Step(remove=frozenset({"c"})),
        replicas=2,
    ),
    Case(
        "scale-down removes replicas that are not Ready at once",
        fleet=(r("a"), r("b"), r("c", ready=False, fate=Fate.SCALE_DOWN), r("d", ready=False, fate=Fate.SCALE_DOWN)),
        placed=0,
        want_new=0,
        want=Step(remove=frozenset({"c", "d"})),
        replicas=2,
    ),
    Case(
        "a replica yielding an overcommitted pool goes even below the Ready floor, within the budget",
        fleet=(r("a", fate=Fate.YIELD), r("b", ready=False)),
        placed=0,
        want_new=1,
        want=Step(remove=frozenset({"a"})),
        replicas=2,
    ),
    Case(
        "an old replica its pools no longer fit is removed within the budget, its successor placed next",
        fleet=tuple(old(n, fate=Fate.MOVE) for n in "abcd"),
        placed=0,
        want_new=0,
        want=Step(remove=frozenset({"a"})),
        budget=IN_PLACE,
    ),
    Case(
        "a Ready replica with room is renamed beside its old objects, taking the surge slot; one without goes down",
        fleet=(old("a", room=True), old("b"), old("c"), old("d")),
        placed=0,
        want_new=0,
        want=Step(update=frozenset({"a", "b"}), surge=frozenset({"a"})),
    ),
    Case(
        "replicas with room but no free surge slot wait rather than go down",
        fleet=(r("a", replacing=True), old("b", waits=True), old("c", waits=True), old("d", waits=True)),
        placed=0,
        want_new=0,
        want=Step(),
    ),
    Case(
        "a rename under way holds the surge slot: a replica without room goes down within maxUnavailable",
        fleet=(r("a", replacing=True), old("b"), old("c"), old("d")),
        placed=0,
        want_new=0,
        want=Step(update=frozenset({"b"})),
    ),
    Case(
        "without room, renames go one at a time: none while a renamed replica is down",
        fleet=(r("a", ready=False), old("b"), old("c"), old("d")),
        placed=0,
        want_new=1,
        want=Step(),
    ),
    Case(
        "an old replica that is not Ready is renamed at once, not beside its old objects",
        fleet=(old("a", ready=False, room=True), old("b"), old("c"), old("d")),
        placed=0,
        want_new=1,
        want=Step(update=frozenset({"a"})),
    ),
    Case(
        "paused, a replica with room is not renamed",
        fleet=(old("a", room=True), old("b"), old("c"), old("d")),
        placed=0,
        want_new=0,
        want=Step(),
        frozen=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_step(case: Case) -> None:
    new = wanted_new(replicas=case.replicas, budget=case.budget, frozen=case.frozen, fleet=case.fleet)
    got = step(replicas=case.replicas, budget=case.budget, frozen=case.frozen, fleet=case.fleet, placed=case.placed)
    assert (new, got) == (case.want_new, case.want)


def test_the_order_of_the_fleet_does_not_matter() -> None:
    fleet = (old("d"), old("a", ready=False), old("c"), old("b"))
    steps = {step(replicas=4, budget=IN_PLACE, frozen=False, fleet=f, placed=0) for f in (fleet, fleet[::-1])}
    assert steps == {Step(update=frozenset({"a"}))}
