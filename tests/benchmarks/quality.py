"""`make bench`'s placement quality: GPUs the scheduler places in arrival order against exact optima.

For every seeded scenario (scenarios.py: small fleets of 4-7 clusters, medium of 8-12) the real
reconcile (modelplane.rollout's, over the scheduler) runs each deployment in turn, in several
random arrival orders (never sorted for it), each seeing the replicas the ones before it placed,
as a control plane's reconciles would; then every deployment keeps reconciling, what it created
Ready by the next round, until nothing changes (moves settle). Two ways demand arrives:
`visible`, every ModelDeployment exists and is read by each reconcile (applied together, as
GitOps does, or a control plane restarting), and `one at a time`, each created only after the
one before it was placed, so no reconcile can know what comes next. optimum.py computes the most GPUs any placement can serve under the same rules
(whole nodes) and under device-granular capacity (the hardware's limit). Printed per fleet and in
summary: placed/optimum (mean over orders and worst order), placed/limit, GPU utilisation of the
plan, the optimum and the limit, and GPUs stranded on held nodes (idle GPUs of nodes a replica
holds), and the moves made: Ready replicas that left to make room for another deployment, per
arrival, and the most one deployment made. The tuning seeds and the reported seeds are disjoint:
`--tuning` runs the former.

Usage: python -m tests.benchmarks.quality [--fleets N] [--orders K] [--tuning] [--time-limit S]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.rollout import Observed
from modelplane.rollout.reconcile import reconcile
from modelplane.scheduler.capacity import shares_devices
from modelplane.scheduler.demand import devices_claimed
from modelplane.scheduler.state import statements

from tests.benchmarks.optimum import Optimum, solve
from tests.benchmarks.scenarios import Scenario, generate, pool_gpus

REPORTED_SEEDS = 1000  # the first reported seed; tuning uses seeds from 0
SIZES = ("small", "medium")


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    gpus: int  # GPUs of the placed replicas
    stranded: int  # idle GPUs on nodes the placed replicas hold
    replicas: int
    wanted: int
    moves: int = 0  # Ready replicas that left to make room for another deployment
    most_moves: int = 0  # the most of those one deployment made


@dataclass(frozen=True, slots=True, kw_only=True)
class Fleet:
    scenario: Scenario
    plans: tuple[Plan, ...]  # one per arrival order, every deployment visible
    one_at_a_time: tuple[Plan, ...]  # the same orders, each deployment created after the one before placed
    largest_first: Plan  # for reference: the same demand sorted by GPUs per replica, largest first
    whole: Optimum
    limit: Optimum
    seconds: float  # wall time of both solves


def replica_gpus(replica: ModelReplica) -> int:
    """GPUs a replica claims: pods x copies x devices of every claiming member."""
    return devices_claimed(replica.engines)


def _stranded(scenario: Scenario, replicas: Sequence[ModelReplica]) -> int:
    """Idle GPUs on held nodes; on a shared pool the nodes its pods need at the least (devices / node, rounded up)."""
    pools = {(c.name, p.name): p for c in scenario.clusters for p in c.pools}
    held = 0
    shared: dict[tuple[str, str], int] = {}
    for r in replicas:
        for pool, charge in r.charges_by_pool().items():
            p = pools[(r.cluster, pool)]
            if shares_devices(p):
                shared[(r.cluster, pool)] = shared.get((r.cluster, pool), 0) + sum(
                    g.pods * g.devices for g in charge.groups
                )
            else:
                held += charge.nodes * pool_gpus(p)
    for key, used in shared.items():
        per_node = pool_gpus(pools[key])
        held += -(-used // per_node) * per_node
    return held - sum(replica_gpus(r) for r in replicas)


NOW = datetime(2026, 1, 1, tzinfo=UTC)
MAX_ROUNDS = 40  # reconciles of every deployment after the last arrives; converged fleets stop early


def _reconcile_all(
    deployments: Sequence[Deployment],
    clusters: Sequence[Cluster],
    fleet: dict[int, list[ModelReplica]],
    order: Sequence[int],
    *,
    matcher: DeviceMatcher,
    known: Sequence[Deployment],
    check: Check | None = None,
    moved: Counter[int] | None = None,
) -> bool:
    """One reconcile of each deployment in `order`; whether anything changed. New replicas start not Ready.

    `moved` counts, per deployment, the Ready replicas that left making room for another."""
    changed = False
    # What each visible deployment's own reconcile states: it depends on its spec and the fleet alone.
    demands = statements(known, clusters, matcher=matcher)
    for i in order:
        others = [r for j, rs in fleet.items() if j != i for r in rs]
        own = fleet.get(i, [])
        done = reconcile(
            deployments[i],
            clusters,
            [*others, *own],
            observed=Observed(),
            now=NOW,
            matcher=matcher,
            demands=demands,
        )
        before = {r.name: r for r in own}
        after = [replace(r, ready=before[r.name].ready if r.name in before else False) for r in done.replicas]
        changed |= [r.name for r in after] != [r.name for r in own]
        if moved is not None:
            making_room = {m.replica.name for m in done.schedule.moves}
            gone = {r.name for r in own} - {r.name for r in after}
            moved[i] += sum(1 for r in own if r.ready and r.name in gone and r.name in making_room)
        fleet[i] = after
        if check is not None:
            check(deployments[i], own, after, [r for rs in fleet.values() for r in rs])
    return changed


# Called after each reconcile with (the deployment, its replicas before, after, the whole fleet after).
Check = Callable[[Deployment, Sequence[ModelReplica], Sequence[ModelReplica], Sequence[ModelReplica]], None]


def run_plan(
    scenario: Scenario, order: Sequence[int], *, settle: bool = True, foresee: bool = True, check: Check | None = None
) -> Plan:
    """Place the demand in `order`, each deployment seeing every replica placed before it.

    As a control plane does, every deployment then keeps reconciling, and what it created becomes
    Ready by the next round, until nothing changes: moves (scheduler/displace.py) correct what
    arrival order got wrong, make-before-break. `settle=False` stops after the arrivals.
    """
    matcher = DeviceMatcher()
    deployments = [d.deployment for d in scenario.demand]
    fleet: dict[int, list[ModelReplica]] = {}
    moved: Counter[int] = Counter()
    for n, i in enumerate(order):
        arrived = deployments if foresee else [deployments[j] for j in order[: n + 1]]
        _reconcile_all(
            deployments, scenario.clusters, fleet, [i], matcher=matcher, known=arrived, check=check, moved=moved
        )
    for _ in range(MAX_ROUNDS if settle else 0):
        fleet = {i: [replace(r, ready=True) for r in rs] for i, rs in fleet.items()}
        if not _reconcile_all(
            deployments, scenario.clusters, fleet, order, matcher=matcher, known=deployments, check=check, moved=moved
        ):
            break
    placed = [r for rs in fleet.values() for r in rs]
    return _plan(scenario, placed, moved)


def _plan(scenario: Scenario, fleet: Sequence[ModelReplica], moved: Counter[int]) -> Plan:
    return Plan(
        gpus=sum(replica_gpus(r) for r in fleet),
        stranded=_stranded(scenario, fleet),
        replicas=len(fleet),
        wanted=sum(d.replicas for d in scenario.demand),
        moves=sum(moved.values()),
        most_moves=max(moved.values(), default=0),
    )


def orders(scenario: Scenario, count: int) -> list[list[int]]:
    rng = random.Random(f"order-{scenario.size}-{scenario.seed}")
    out: list[list[int]] = []
    for _ in range(count):
        order = list(range(len(scenario.demand)))
        rng.shuffle(order)
        out.append(order)
    return out


def measure_fleet(scenario: Scenario, *, order_count: int, time_limit: float) -> Fleet:
    plans = tuple(run_plan(scenario, o) for o in orders(scenario, order_count))
    one_at_a_time = tuple(run_plan(scenario, o, foresee=False) for o in orders(scenario, order_count))
    demand = scenario.demand
    largest = sorted(range(len(demand)), key=lambda i: (-demand[i].gpus_per_replica, i))
    started = time.perf_counter()
    whole = solve(scenario, devices=False, time_limit=time_limit)
    limit = solve(scenario, devices=True, time_limit=time_limit)
    return Fleet(
        scenario=scenario,
        plans=plans,
        one_at_a_time=one_at_a_time,
        largest_first=run_plan(scenario, largest),
        whole=whole,
        limit=limit,
        seconds=time.perf_counter() - started,
    )


def _ratio(placed: int, optimum: Optimum) -> float:
    return placed / optimum.gpus if optimum.gpus else 1.0


def _pct(n: float) -> str:
    return f"{100 * n:.0f}%"


def print_fleets(fleets: Sequence[Fleet]) -> None:
    print(
        f"{'FLEET':<12} {'CLUSTERS':>8} {'DEPLOY':>6} {'GPUS':>5} {'DEMAND':>6} {'OPT':>5} {'LIMIT':>5} "
        f"{'PLACED':>11} {'/OPT':>11} {'/LIMIT':>6} {'UTIL plan/opt/limit':>19} {'STRANDED':>8} {'SOLVE':>6}"
    )
    for f in fleets:
        s = f.scenario
        gpus = [p.gpus for p in f.plans]
        ratios = [_ratio(g, f.whole) for g in gpus]
        mean = statistics.mean(gpus)
        util = f"{_pct(mean / s.fleet_gpus)}/{_pct(f.whole.gpus / s.fleet_gpus)}/{_pct(f.limit.gpus / s.fleet_gpus)}"
        gap = "" if f.whole.gap == 0 and f.limit.gap == 0 else f" gap {max(f.whole.gap, f.limit.gap):.3f}"
        print(
            f"{s.size + '-' + str(s.seed):<12} {len(s.clusters):>8} {len(s.demand):>6} {s.fleet_gpus:>5} "
            f"{_pct(s.demand_gpus / s.fleet_gpus):>6} {f.whole.gpus:>5} {f.limit.gpus:>5} "
            f"{min(gpus):>5}-{max(gpus):<5} {min(ratios):.2f}-{max(ratios):.2f} {_ratio(round(mean), f.limit):>6.2f} "
            f"{util:>19} {statistics.mean(p.stranded for p in f.plans):>8.0f} {f.seconds:>5.1f}s{gap}"
        )


def summary(fleets: Sequence[Fleet]) -> dict[str, float]:
    ratios = [_ratio(p.gpus, f.whole) for f in fleets for p in f.plans]
    per_fleet_worst = [min(_ratio(p.gpus, f.whole) for p in f.plans) for f in fleets]
    return {
        "mean": statistics.mean(ratios),
        "worst": min(per_fleet_worst),
        "limit": statistics.mean(_ratio(p.gpus, f.limit) for f in fleets for p in f.plans),
        "util_plan": statistics.mean(p.gpus / f.scenario.fleet_gpus for f in fleets for p in f.plans),
        "util_opt": statistics.mean(f.whole.gpus / f.scenario.fleet_gpus for f in fleets),
        "util_limit": statistics.mean(f.limit.gpus / f.scenario.fleet_gpus for f in fleets),
        "stranded": statistics.mean(p.stranded / f.scenario.fleet_gpus for f in fleets for p in f.plans),
        "placed_replicas": statistics.mean(p.replicas / p.wanted for f in fleets for p in f.plans),
        "one_at_a_time": statistics.mean(_ratio(p.gpus, f.whole) for f in fleets for p in f.one_at_a_time),
        "one_at_a_time_worst": min(min(_ratio(p.gpus, f.whole) for p in f.one_at_a_time) for f in fleets),
        "largest_first": statistics.mean(_ratio(f.largest_first.gpus, f.whole) for f in fleets),
        "moves_per_arrival": statistics.mean(p.moves / len(f.scenario.demand) for f in fleets for p in f.plans),
        "moves_per_arrival_one": statistics.mean(
            p.moves / len(f.scenario.demand) for f in fleets for p in f.one_at_a_time
        ),
        "most_moves": max(p.most_moves for f in fleets for p in (*f.plans, *f.one_at_a_time)),
    }


def print_summary(by_size: dict[str, list[Fleet]]) -> None:
    rows = {size: summary(fleets) for size, fleets in by_size.items() if fleets}
    print("\nSummary (arrival order, every deployment visible unless said; ratios are GPUs placed / optimum):")
    print(f"  {'':<34}" + "".join(f"{f'{s} fleets ({len(by_size[s])})':>22}" for s in rows))
    lines = (
        ("placed / whole-node optimum", lambda r: f"mean {r['mean']:.2f}, worst {r['worst']:.2f}"),
        ("placed / device-granular limit", lambda r: f"mean {r['limit']:.2f}"),
        ("GPU utilisation plan/opt/limit", lambda r: f"{_pct(r['util_plan'])}/{_pct(r['util_opt'])}/{_pct(r['util_limit'])}"),
        ("GPUs stranded on held nodes", lambda r: f"{_pct(r['stranded'])} of the fleet"),
        ("replicas placed / wanted", lambda r: _pct(r["placed_replicas"])),
        ("created one at a time / optimum",
         lambda r: f"mean {r['one_at_a_time']:.2f}, worst {r['one_at_a_time_worst']:.2f}"),
        ("largest replica first / optimum", lambda r: f"{r['largest_first']:.2f}"),
        ("moves per arrival, visible / one", lambda r: f"{r['moves_per_arrival']:.2f} / {r['moves_per_arrival_one']:.2f}"),
        ("most moves by one deployment", lambda r: f"{r['most_moves']:.0f}"),
    )  # fmt: skip
    for label, cell in lines:
        print(f"  {label:<34}" + "".join(f"{cell(r):>22}" for r in rows.values()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fleets", type=int, default=10, help="fleets per size (default 10)")
    parser.add_argument("--orders", type=int, default=4, help="random arrival orders per fleet (default 4)")
    parser.add_argument("--tuning", action="store_true", help="the tuning seeds instead of the reported ones")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per optimum solve (default 20)")
    parser.add_argument(
        "--packing", choices=("Nodes", "Devices"), default="Nodes", help="the packing of every pool (default Nodes)"
    )
    args = parser.parse_args(argv)
    first = 0 if args.tuning else REPORTED_SEEDS
    by_size: dict[str, list[Fleet]] = {}
    for size in SIZES:
        fleets = [
            measure_fleet(
                generate(seed, size, packing=args.packing), order_count=args.orders, time_limit=args.time_limit
            )
            for seed in range(first, first + args.fleets)
        ]
        by_size[size] = fleets
        print_fleets(fleets)
        sys.stdout.flush()
    print(f"\nEvery pool packing: {args.packing}.")
    print_summary(by_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
