"""Reserve room for larger demand the fleet can see, before placing a deployment's own replicas.

Deployments reconcile in whatever order the control plane runs them, and each places only its own
replicas. Placed one at a time in that order, early small replicas take the nodes that larger,
pickier ones need later: on a fleet short of GPUs the greedy serves about three quarters of what
an exact optimum serves, while placing the largest replicas first serves about 0.95 of it
(tests/benchmarks/quality.py). So every reconcile plays that order out over the demand it can
read: before placing its own replicas, a deployment reserves, on the scheduler's ledger, the
replicas every deployment ranked ahead of it still lacks, placed by the same filters, scores and
bind as if that deployment were reconciling. Ranked ahead means more GPUs per replica, ties to
the (namespace, name) that sorts first; every deployment ranks the same way, so the reconciles
agree whatever their order.

Reservations only hold back new placements: a running replica is never removed for one. Demand
that fits nowhere reserves nothing. At most MAX_RESERVED replicas are reserved per call, so a
large fleet stays within the scheduler's time budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from modelplane.devices import DeviceMatcher
from modelplane.errors import SpecError
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.scheduler.bind import bind
from modelplane.scheduler.engines import EngineOptions
from modelplane.scheduler.filters import Context, FilterRunner
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.packing import Packing
from modelplane.scheduler.result import Reservation

MAX_RESERVED = 64


def deployment_gpus(deployment: Deployment) -> int:
    """Devices one replica of `deployment` claims: pods x copies x requested devices."""
    return sum(
        member.pods_per_copy * engine.copies * sum(r.count for r in member.device_requests)
        for engine in deployment.engines
        for member in engine.members
    )


def rank(deployment: Deployment) -> tuple[int, str, str]:
    """The order the fleet serves demand in: most GPUs per replica first, then by name."""
    return (-deployment_gpus(deployment), deployment.namespace, deployment.name)


def reserve(
    ledger: Ledger,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    deployments: Sequence[Deployment],
    *,
    deployment: Deployment,
    matcher: DeviceMatcher,
    options: dict[tuple[str, str], EngineOptions] | None = None,
) -> tuple[Reservation, ...]:
    """Charge to `ledger` the replicas that deployments ranked ahead of `deployment` still lack.

    `options` keeps each deployment's engine options between calls on the same fleet (they do not
    depend on the ledger), so playing the same demand out twice matches devices once.
    """
    options = options if options is not None else {}
    count = Counter((r.namespace, r.deployment) for r in replicas if not r.deleting)
    mine = rank(deployment)
    ahead = sorted(
        (
            d
            for d in deployments
            if rank(d) < mine and (d.namespace, d.name) != (deployment.namespace, deployment.name)
            if d.replicas > count[(d.namespace, d.name)]
        ),
        key=rank,
    )
    left = MAX_RESERVED
    out: list[Reservation] = []
    for d in ahead:
        if left <= 0:
            break
        try:
            matcher.validate(d, clusters)
        except SpecError:
            continue  # its own reconcile reports the bad spec; it places nothing, so it reserves nothing
        missing = min(d.replicas - count[(d.namespace, d.name)], left)
        engines = options.setdefault((d.namespace, d.name), EngineOptions(d, matcher))
        ctx = Context(d, engines, ledger, packing=Packing(engines))
        spread = Counter(r.cluster for r in replicas if (r.namespace, r.deployment) == (d.namespace, d.name))
        placed = bind(ctx, FilterRunner(ctx), clusters=clusters, count=missing, taken={}, replicas_on=spread)
        left -= missing
        if placed.placements:
            out.append(Reservation(deployment=f"{d.namespace}/{d.name}", replicas=len(placed.placements)))
    return tuple(out)
