"""The demand of other deployments: room held for larger ones (reserve.py), and moves that make room (displace.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pytest
from modelplane.model import Cluster, Deployment, DeviceGroup, ModelReplica, PoolCharge, PoolPacking, Role
from modelplane.scheduler import schedule
from modelplane.scheduler.result import Move
from modelplane.scheduler.state import statements
from modelplane.stated import StatedDemand

from tests.scheduler.factories import (
    IS_GPU,
    IS_NIC,
    Outline,
    cluster,
    deployment,
    engine,
    gpu,
    gpu_engines,
    is_model,
    member,
    nic,
    observed,
    outline,
    pool,
    request,
    selector,
)

# One H100 node and one A100 node: the 8-GPU Hopper-only model fits only the first; the 1-GPU model either.
FLEET = (
    cluster("a", pools=[pool("h100", nodes=1)]),
    cluster("b", pools=[pool("a100", nodes=1, model="A100")]),
)
BIG = deployment("big", replicas=1, engines=gpu_engines(8, model="H100"))
SMALL = deployment("small", namespace="team-b", replicas=1, engines=gpu_engines(1))
TWO_BIG = deployment("big", replicas=2, engines=gpu_engines(8, model="H100"))
BAD = replace(
    BIG, name="bad", engines=(engine(members=[member(requests=[request(count=8, selectors=("device.nope ==",))])]),)
)


# Two H100 nodes of one kind, and larger demand confined to the first cluster by its clusterSelector:
# scarcity (per pool kind) cannot tell the two apart, held room (per cluster) can.
PINNED_FLEET = (
    cluster("a", pools=[pool("h100", nodes=1)], labels={"zone": "one"}),
    cluster("c", pools=[pool("h100", nodes=1)], labels={"zone": "two"}),
)
BIG_IN_ONE = replace(BIG, cluster_selector=selector(labels={"zone": "one"}))


@dataclass(frozen=True)
class Case:
    name: str
    deployment: Deployment
    others: Sequence[Deployment]  # every other deployment the function reads
    fleet: Sequence[ModelReplica] = ()
    want: Outline = field(default_factory=Outline)
    reserved: tuple[tuple[str, int], ...] = ()
    clusters: Sequence[Cluster] = FLEET


RESERVE_CASES = [
    Case(
        "a small deployment leaves the only H100 node to the larger Hopper-only one: scarcity alone keeps it off",
        SMALL,
        [BIG],
        want=Outline(replicas=("b/0 main@a100",), created=("b/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "a small deployment leaves the only H100 node of the larger one's cluster to it: room is held there",
        SMALL,
        [BIG_IN_ONE],
        want=Outline(replicas=("c/0 main@h100",), created=("c/0",), message="Scheduled 1 of 1 replicas."),
        reserved=(("team-a/big", 1),),
        clusters=PINNED_FLEET,
    ),
    Case(
        "read alone (no deployments read), it takes the first cluster by name",
        SMALL,
        [],
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "placed already, the larger deployment holds no room",
        SMALL,
        [BIG],
        fleet=[observed(BIG, cluster="a", index=0, pools="h100")],
        want=Outline(replicas=("b/0 main@a100",), created=("b/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "room held for two H100 replicas, where only one fits: the other holds nothing",
        SMALL,
        [replace(BIG_IN_ONE, replicas=2)],
        want=Outline(replicas=("c/0 main@h100",), created=("c/0",), message="Scheduled 1 of 1 replicas."),
        reserved=(("team-a/big", 1),),
        clusters=PINNED_FLEET,
    ),
    Case(
        "a larger deployment never waits for a smaller one",
        BIG,
        [SMALL],
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "a deployment whose selector cannot compile reserves nothing",
        SMALL,
        [BAD],
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
]


@pytest.mark.parametrize("case", RESERVE_CASES, ids=lambda c: c.name)
def test_room_is_held_for_larger_demand(case: Case) -> None:
    deployments = [case.deployment, *case.others] if case.others else None
    result = schedule(case.deployment, case.clusters, case.fleet, demands=stated(deployments, case.clusters))
    reserved = tuple((r.deployment, r.replicas) for r in result.diagnosis.reserved)
    assert (outline(result), reserved) == (case.want, case.reserved)


def test_unplaced_for_a_reservation_says_for_whom() -> None:
    one_node = (cluster("a", pools=[pool("h100", nodes=1)]),)
    result = schedule(SMALL, one_node, [], demands=stated([SMALL, BIG], one_node))
    assert (outline(result), [(r.deployment, r.replicas) for r in result.diagnosis.reserved]) == (
        Outline(
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: "
            "1 had no pool with enough free nodes."
        ),
        [("team-a/big", 1)],
    )


HELD = observed(SMALL, cluster="a", index=0, pools="h100")


@dataclass(frozen=True)
class MoveCase:
    name: str
    fleet: Sequence[ModelReplica]
    deployments: Sequence[Deployment]
    want_small: Outline
    want_moves: tuple[str, ...]
    stale: frozenset[str] = frozenset()


MOVE_CASES = [
    MoveCase(
        "a Ready replica on the only fit of blocked demand moves where it also fits",
        [HELD],
        [SMALL, BIG],
        Outline(
            replicas=("b/0 main@a100",),
            created=("b/0",),
            removed=("a/0: making room for another deployment",),
            message="Scheduled 1 of 1 replicas.",
        ),
        ("team-b/small#0 moves off a/h100 to make room for team-a/big",),
    ),
    MoveCase(
        "a replica that is not Ready does not move",
        [observed(SMALL, cluster="a", index=0, pools="h100", ready=False)],
        [SMALL, BIG],
        Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
        (),
    ),
    MoveCase(
        "no room elsewhere: nothing moves",
        [HELD, observed(deployment("other", replicas=1, engines=gpu_engines(8)), cluster="b", index=0, pools="a100")],
        [SMALL, BIG, deployment("other", replicas=1, engines=gpu_engines(8))],
        Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
        (),
    ),
    MoveCase(
        "the blocked deployment is not read: nothing moves",
        [HELD],
        [SMALL],
        Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
        (),
    ),
    MoveCase(
        "a rollout under way: the replica stays, and says nothing of moving until it is done",
        [HELD],
        [SMALL, BIG],
        Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
        (),
        stale=frozenset({HELD.name}),
    ),
]


@pytest.mark.parametrize("case", MOVE_CASES, ids=lambda c: c.name)
def test_moves_make_room(case: MoveCase) -> None:
    result = schedule(SMALL, FLEET, case.fleet, demands=stated(case.deployments, FLEET), stale=case.stale)
    assert (outline(result), tuple(m.text() for m in result.moves)) == (case.want_small, case.want_moves)


def test_every_deployment_agrees_on_the_move() -> None:
    """The blocked deployment sees the same move, as the one it waits for, whatever the input order."""
    small = schedule(SMALL, FLEET, [HELD], demands=stated([SMALL, BIG], FLEET))
    big = schedule(BIG, list(reversed(FLEET)), [HELD], demands=stated([BIG, SMALL], list(reversed(FLEET))))
    # The room: BIG's one 8-GPU pod, on the node SMALL's one-GPU pod holds now.
    room = (("h100", PoolCharge(nodes=0, groups=(DeviceGroup(pods=1, devices=8),))),)
    assert (small.moves, big.moves) == (
        (Move(replica=HELD, demand="team-a/big", cluster="a", pools=("h100",), room=room),),
        (Move(replica=HELD, demand="team-a/big", cluster="a", pools=("h100",), room=room),),
    )
    assert outline(big) == Outline(
        message="Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
        "1 had no pool matching an engine's devices, 1 had no pool with enough free nodes."
    )


def test_a_deployment_that_never_moves_keeps_its_replica_and_says_nothing() -> None:
    pinned = replace(SMALL, movable=False)
    mover = schedule(pinned, FLEET, [HELD], demands=stated([pinned, BIG], FLEET))
    blocked = schedule(BIG, FLEET, [HELD], demands=stated([pinned, BIG], FLEET))
    assert (outline(mover), mover.moves, blocked.moves) == (
        Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
        (),
        (),
    )


IB_FLEET = (
    cluster("a", pools=[pool("ib", nodes=2, devices=[gpu(count=8), nic()])]),
    cluster("b", pools=[pool("h100", nodes=2)]),
)
_IB_MEMBER = [request(count=8), request("ib", count=1, selectors=(IS_NIC,))]
GANG = deployment(
    "gang",
    engines=[
        engine(
            members=[
                member(role=Role.LEADER, requests=_IB_MEMBER),
                member(role=Role.WORKER, worker_nodes=1, requests=_IB_MEMBER),
            ]
        )
    ],
)
ONE_GPU = deployment("one-gpu", namespace="team-b", replicas=1, engines=gpu_engines(1))
OTHER_GPU = deployment("other-gpu", namespace="team-c", replicas=1, engines=gpu_engines(1))
ON_IB = (
    observed(ONE_GPU, cluster="a", index=0, pools="ib"),
    observed(OTHER_GPU, cluster="a", index=0, pools="ib"),
)


def test_a_gang_blocked_by_two_holders_gets_both_moved() -> None:
    """Two one-GPU replicas of two deployments hold the only InfiniBand pool's two nodes: each moves."""
    everyone = [ONE_GPU, OTHER_GPU, GANG]
    got = {d.name: schedule(d, IB_FLEET, ON_IB, demands=stated(everyone, IB_FLEET)) for d in everyone}
    want_moves = (
        "team-b/one-gpu#0 moves off a/ib to make room for team-a/gang",
        "team-c/other-gpu#0 moves off a/ib to make room for team-a/gang",
    )
    assert (
        {name: outline(r) for name, r in got.items() if name != "gang"},
        tuple(m.text() for m in got["gang"].moves),
    ) == (
        {
            "one-gpu": Outline(
                replicas=("b/0 main@h100",),
                created=("b/0",),
                removed=("a/0: making room for another deployment",),
                message="Scheduled 1 of 1 replicas.",
            ),
            "other-gpu": Outline(
                replicas=("b/0 main@h100",),
                created=("b/0",),
                removed=("a/0: making room for another deployment",),
                message="Scheduled 1 of 1 replicas.",
            ),
        },
        want_moves,
    )


def stated(deployments: Sequence[Deployment] | None, fleet: Sequence[Cluster]) -> tuple[StatedDemand, ...] | None:
    """What each deployment's own reconcile states; None: the fleet's demand was not read."""
    return None if deployments is None else statements(deployments, fleet)


# Four nodes: two H100 (the only fit of a Hopper-only two-node gang), two A100 where a one-GPU model
# also fits. The one-GPU replica on an H100 node must move, and its successor must not take the
# other H100 node: that node is half of the room being freed.
FOUR_NODES = (
    cluster("a", pools=[pool("h100", nodes=2)]),
    cluster("b", pools=[pool("a100", nodes=2, model="A100")]),
)
_HOPPER = [request(count=8, selectors=(IS_GPU, is_model("H100")))]
HOPPER_GANG = deployment(
    "gang",
    engines=[
        engine(
            members=[
                member(role=Role.LEADER, requests=_HOPPER),
                member(role=Role.WORKER, worker_nodes=1, requests=_HOPPER),
            ]
        )
    ],
)
ON_H100 = observed(SMALL, cluster="a", index=0, pools="h100")
A100_HOLDER = deployment("holder", namespace="team-c", replicas=2, engines=gpu_engines(8, model="A100"))


@dataclass(frozen=True)
class FreedCase:
    name: str
    fleet: Sequence[ModelReplica]
    deployments: Sequence[Deployment]
    want: dict[str, Outline]  # per deployment name
    want_moves: tuple[str, ...]  # as the gang sees them


FREED_CASES = [
    FreedCase(
        "the successor lands beside the room being freed, not in it",
        [ON_H100],
        [SMALL, HOPPER_GANG],
        {
            "small": Outline(
                replicas=("b/0 main@a100",),
                created=("b/0",),
                removed=("a/0: making room for another deployment",),
                message="Scheduled 1 of 1 replicas.",
            ),
            "gang": Outline(
                message="Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
                "1 had no pool matching an engine's devices, 1 had no pool with enough free nodes."
            ),
        },
        ("team-b/small#0 moves off a/h100 to make room for team-a/gang",),
    ),
    FreedCase(
        "room only inside the room being freed: nothing moves",
        [ON_H100, *(observed(A100_HOLDER, cluster="b", index=i, pools="a100") for i in range(2))],
        [SMALL, HOPPER_GANG, A100_HOLDER],
        {
            "small": Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
            "gang": Outline(
                message="Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
                "1 had no pool matching an engine's devices, 1 had no pool with enough free nodes."
            ),
        },
        (),
    ),
]


@pytest.mark.parametrize("case", FREED_CASES, ids=lambda c: c.name)
def test_a_successor_never_takes_back_the_room_its_move_frees(case: FreedCase) -> None:
    demands = stated(case.deployments, FOUR_NODES)
    got = {d.name: schedule(d, FOUR_NODES, case.fleet, demands=demands) for d in (SMALL, HOPPER_GANG)}
    assert (
        {name: outline(r) for name, r in got.items()},
        tuple(m.text() for m in got["gang"].moves),
    ) == (case.want, case.want_moves)


# The same two one-GPU holders, on one node of a shared pool (packing: Devices) this time, and an
# eight-GPU deployment that needs the node whole. Several leavers of one shared pool never make
# room: each owner's reconcile would work the room out again on a pool its successor changed.
SHARED_FLEET = (
    cluster("a", pools=[replace(pool("h100", nodes=1), packing=PoolPacking.DEVICES)]),
    cluster("b", pools=[pool("a100", nodes=2, model="A100")]),
)
ON_SHARED = (
    observed(ONE_GPU, cluster="a", index=0, pools="h100"),
    observed(OTHER_GPU, cluster="a", index=0, pools="h100"),
)
EIGHT_H100 = deployment("eight", replicas=1, engines=gpu_engines(8, model="H100"))


@dataclass(frozen=True)
class SharedCase:
    name: str
    fleet: Sequence[ModelReplica]
    want_moves: tuple[str, ...]


SHARED_CASES = [
    SharedCase(
        "one holder of a shared pool's node leaves for it",
        ON_SHARED[:1],
        ("team-b/one-gpu#0 moves off a/h100 to make room for team-a/eight",),
    ),
    SharedCase("two holders of a shared pool's node would have to leave: nothing moves", ON_SHARED, ()),
]


@pytest.mark.parametrize("case", SHARED_CASES, ids=lambda c: c.name)
def test_room_on_a_shared_pool_is_made_by_one_leaver_at_most(case: SharedCase) -> None:
    everyone = [ONE_GPU, OTHER_GPU, EIGHT_H100]
    got = schedule(EIGHT_H100, SHARED_FLEET, case.fleet, demands=stated(everyone, SHARED_FLEET))
    assert tuple(m.text() for m in got.moves) == case.want_moves
