"""Choose one pool per engine of a replica within one cluster, given the pools' free nodes.

Per engine (spec order) the pool with the least packing penalty comes first (packing.py), then
the best fit: fewest free nodes that still fit, then pool name. Engines of one replica may share
a pool, so each choice reserves its nodes before the next engine is considered. The preferred
pool per engine can still reject a feasible replica (an early engine takes the only pool a later
engine fits), so the search backtracks; the first assignment it finds is the greedy one whenever
greedy succeeds. Failed (engine, free nodes) states are memoised, which keeps the search
polynomial in practice for <= 8 engines."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from modelplane.model import Engine
from modelplane.scheduler.capacity import DeviceCapacity, PoolCapacity
from modelplane.scheduler.engines import ClusterOptions, EngineOption


def assign(
    options: ClusterOptions,
    pools: Mapping[str, PoolCapacity],
    penalty: Callable[[int, EngineOption], int] | None = None,
) -> tuple[EngineOption, ...] | None:
    """One option per engine fitting `free` together, or None when no such assignment exists.

    `penalty(engine index, option)` orders each engine's pools before best fit (packing.py).
    """
    remaining = {name: cap.copy() for name, cap in pools.items()}
    chosen: list[EngineOption] = []
    failed: set[tuple[int, tuple[tuple[str, object], ...]]] = set()

    def search(i: int) -> bool:
        if i == len(options):
            return True
        state = (i, tuple(sorted((name, cap.state()) for name, cap in remaining.items())))
        if state in failed:
            return False
        fitting = [o for o in options[i] if fits(o, remaining)]
        # an option spanning a fabric's pools only after every single-pool one of the same penalty
        for opt in sorted(
            fitting,
            key=lambda o: (penalty(i, o) if penalty else 0, bool(o.split), remaining[o.pool].free_nodes(), o.pool),
        ):
            take(opt, remaining)
            chosen.append(opt)
            if search(i + 1):
                return True
            chosen.pop()
            take(opt, remaining, sign=-1)
        failed.add(state)
        return False

    return tuple(chosen) if search(0) else None


def fits(option: EngineOption, pools: Mapping[str, PoolCapacity]) -> bool:
    """Whether every pool the option holds can hold its part (separately: engines of a replica are fitted in turn)."""
    return all(pool in pools and pools[pool].fits(charge) for pool, charge in option.pool_charges())


def take(option: EngineOption, pools: Mapping[str, PoolCapacity], *, sign: int = 1) -> None:
    for pool, charge in option.pool_charges():
        pools[pool].take(charge, sign=sign)


def shortfall(engines: Sequence[Engine], options: ClusterOptions, pools: Mapping[str, PoolCapacity]) -> str:
    """Why `assign` found nothing: the first engine no pool fits, else the engines that fit only singly."""
    for engine, opts in zip(engines, options, strict=True):
        if not any(fits(o, pools) for o in opts):
            # The closest miss: the pool with the most free nodes (then name).
            best = min(opts, key=lambda o: (-_free(pools, o.pool), o.pool))
            cap = pools.get(best.pool)
            if isinstance(cap, DeviceCapacity):
                return f"pool {best.pool}: {cap.describe()}, engine {engine.name} needs {_pods(best)}"
            have = max(_free(pools, best.pool), 0)
            return f"pool {best.pool}: {have} free {_nodes(have)}, engine {engine.name} needs {best.cost}"
    names = sorted({p for opts in options for o in opts for p, _ in o.pool_charges()})
    frees = ", ".join(f"pool {p}: {pools[p].describe()}" for p in names if p in pools)
    engine_names = ", ".join(e.name for e in engines)
    return f"engines {engine_names} each fit a pool but not all together ({frees})"


def _free(pools: Mapping[str, PoolCapacity], pool: str) -> int:
    cap = pools.get(pool)
    return cap.free_nodes() if cap is not None else 0


def _pods(option: EngineOption) -> str:
    groups = option.charge.groups
    pods = sum(g.pods for g in groups)
    devices = max((g.devices for g in groups), default=0)
    return f"{pods} {'pod' if pods == 1 else 'pods'} of {devices} {'device' if devices == 1 else 'devices'}"


def _nodes(n: int) -> str:
    return "node" if n == 1 else "nodes"
