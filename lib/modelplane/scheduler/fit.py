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
from modelplane.scheduler.engines import ClusterOptions, EngineOption


def assign(
    options: ClusterOptions, free: Mapping[str, int], penalty: Callable[[int, EngineOption], int] | None = None
) -> tuple[EngineOption, ...] | None:
    """One option per engine fitting `free` together, or None when no such assignment exists.

    `penalty(engine index, option)` orders each engine's pools before best fit (packing.py).
    """
    remaining = dict(free)
    chosen: list[EngineOption] = []
    failed: set[tuple[int, tuple[tuple[str, int], ...]]] = set()

    def search(i: int) -> bool:
        if i == len(options):
            return True
        state = (i, tuple(sorted(remaining.items())))
        if state in failed:
            return False
        fitting = [o for o in options[i] if o.cost <= remaining.get(o.pool, 0)]
        for opt in sorted(fitting, key=lambda o: (penalty(i, o) if penalty else 0, remaining[o.pool], o.pool)):
            remaining[opt.pool] -= opt.cost
            chosen.append(opt)
            if search(i + 1):
                return True
            chosen.pop()
            remaining[opt.pool] += opt.cost
        failed.add(state)
        return False

    return tuple(chosen) if search(0) else None


def shortfall(engines: Sequence[Engine], options: ClusterOptions, free: Mapping[str, int]) -> str:
    """Why `assign` found nothing: the first engine no pool fits, else the engines that fit only singly."""
    for engine, opts in zip(engines, options, strict=True):
        if not any(o.cost <= free.get(o.pool, 0) for o in opts):
            # The closest miss: the pool with the most free nodes (then name).
            best = min(opts, key=lambda o: (-free.get(o.pool, 0), o.pool))
            have = max(free.get(best.pool, 0), 0)
            return f"pool {best.pool}: {have} free {_nodes(have)}, engine {engine.name} needs {best.cost}"
    pools = sorted({o.pool for opts in options for o in opts})
    frees = ", ".join(f"pool {p}: {max(free.get(p, 0), 0)} free {_nodes(free.get(p, 0))}" for p in pools)
    names = ", ".join(e.name for e in engines)
    return f"engines {names} each fit a pool but not all together ({frees})"


def _nodes(n: int) -> str:
    return "node" if n == 1 else "nodes"
