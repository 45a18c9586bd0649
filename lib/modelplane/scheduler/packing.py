"""What taking a pool costs the rest of the fleet: the packing penalty of an engine option, in devices.

Capacity is whole nodes, so a pod claiming one of a node's eight GPUs idles the other seven for as
long as it runs, and a replica placed early on a scarce pool can leave later, pickier demand with
nothing. Among the pools that fit, the scheduler therefore prefers, in one sum of device units:

- idle: fewest devices left unclaimed on the nodes the engine holds (a 1-GPU model on a 4-GPU
  node rather than an 8-GPU one);
- premium: the smallest adequate devices (rank of the claimed devices' capacity, memory above
  all, among the pools that could host this engine on the eligible clusters), charged on the
  devices claimed and, less, on those left idle (an idle H200 is worth more than an idle L40S,
  so a 1-GPU model does not spread onto the scarce large pool larger models need), and no node
  carrying a Synthetic device (an InfiniBand NIC) the engine does not ask for.

Every part is a property of the pool and the engine alone, so the ranking needs no view of other
demand and costs no device-selector evaluation beyond the deployment's own.

The weights were tuned on the placement-quality benchmark's tuning seeds (tests/benchmarks).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from modelplane.model import Cluster, PoolCharge
from modelplane.scheduler.capacity import DeviceCapacity, PoolCapacity
from modelplane.scheduler.engines import EngineOption, EngineSource

IDLE = 1  # per idle device
LARGER = 4  # per claimed device, per capacity rank above the smallest adequate device
LARGER_IDLE = 1  # per idle device on the nodes held, per capacity rank above the smallest adequate device
SPARE = 4  # per node, per Synthetic device kind the engine does not use
MIXING = 4  # per device of a node, per pod size new to a shared pool that already holds pods
OPENING = 2  # per device of a node, for the first pods on a shared pool


@dataclass(frozen=True, slots=True, kw_only=True)
class Penalty:
    idle: int = 0
    premium: int = 0
    mixing: int = 0
    scarce: int = 0  # what other demand loses (scarcity.py)

    @property
    def total(self) -> int:
        return self.idle + self.premium + self.mixing + self.scarce

    def __add__(self, other: Penalty) -> Penalty:
        return Penalty(
            idle=self.idle + other.idle,
            premium=self.premium + other.premium,
            mixing=self.mixing + other.mixing,
            scarce=self.scarce + other.scarce,
        )


class Packing:
    """Penalties of one deployment's engine options for one schedule() call (memoised per pool content)."""

    def __init__(self, engines: EngineSource) -> None:
        self._engines = engines
        self._sizes: dict[int, tuple[Fraction, ...]] = {}
        self._ranked: tuple[str, ...] | None = None
        self._memo: dict[tuple[int, int], tuple[EngineOption, Penalty]] = {}

    def rank_sizes(self, clusters: Iterable[Cluster]) -> None:
        """Rank each engine's device sizes over the pools that can host it on `clusters` (fixed for the call)."""
        clusters = list(clusters)
        ranked = tuple(c.name for c in clusters)
        if ranked == self._ranked:  # the same clusters as the last bind: the same ranking
            return
        self._ranked = ranked
        sizes: dict[int, set[Fraction]] = {}
        for cluster in clusters:
            for index, options in enumerate(self._engines.of(cluster)):
                sizes.setdefault(index, set()).update(o.size for o in options)
        self._sizes = {index: tuple(sorted(values)) for index, values in sizes.items()}
        self._memo.clear()

    def penalty(self, engine: int, option: EngineOption, pool: PoolCapacity | None = None) -> Penalty:
        """The option's penalty; on a shared pool (`pool` given) also what mixing pod sizes there costs."""
        static = self._static(engine, option)
        mixing = _mixing(option.charge, pool)
        return static if not mixing else Penalty(idle=static.idle, premium=static.premium, mixing=mixing)

    def on(self, engine: int, option: EngineOption, pools: Mapping[str, PoolCapacity]) -> Penalty:
        """The option's penalty against the cluster's pools: an option spanning a fabric mixes on each it holds."""
        if not option.split:
            return self.penalty(engine, option, pools.get(option.pool))
        static = self._static(engine, option)
        mixing = sum(_mixing(charge, pools.get(pool)) for pool, charge in option.split)
        return Penalty(idle=static.idle, premium=static.premium, mixing=mixing)

    def _static(self, engine: int, option: EngineOption) -> Penalty:
        # Options are shared by every pool of one name and content (engines.py), and so is the penalty.
        cached = self._memo.get((engine, id(option)))
        if cached is not None and cached[0] is option:
            return cached[1]
        sizes = self._sizes.get(engine, ())
        rank = sizes.index(option.size) if option.size in sizes else 0
        premium = rank * (LARGER * option.claimed + LARGER_IDLE * option.idle) + SPARE * option.spare * option.cost
        penalty = Penalty(idle=IDLE * option.idle, premium=premium)
        self._memo[(engine, id(option))] = (option, penalty)
        return penalty


def _mixing(charge: PoolCharge, pool: PoolCapacity | None) -> int:
    """What taking `charge` on a shared pool costs in mixed pod sizes (nothing on a pool of whole nodes)."""
    if not isinstance(pool, DeviceCapacity):
        return 0
    if not pool.groups:  # opening an unused shared pool splits free capacity the other pools could take
        return OPENING * pool.per_node
    present = {pool.devices(g) for g in pool.groups}
    new = {pool.devices(g) for g in charge.groups} - present
    # A pod size new to the pool lets smaller pods crowd larger ones out of every node (capacity.py).
    return MIXING * pool.per_node * len(new)
