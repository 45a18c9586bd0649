"""Scale down: choose which kept replicas leave when there are more than spec.replicas.

One victim at a time: replicas on not-Ready clusters go first, then replicas not at the
deployment's revision (`stale`, as a Deployment scales down old ReplicaSets first; a Ready one
leaves only once a successor is Ready, modelplane.rollout); among the candidates, a replica that
is not Ready goes before any Ready one, always (as a ReplicaSet deletes unready pods first): a
successor still starting is dropped, never the Ready replica it was to replace. Then the cluster
hosting most of this deployment's (still kept) replicas loses one, ties going to the cluster
whose name sorts last (the mirror of placement, which prefers names that sort first); within the
cluster the highest index goes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from modelplane.scheduler.retain import Kept


def scale_down(kept: Sequence[Kept], target: int, *, stale: Collection[str] = ()) -> tuple[list[Kept], list[Kept]]:
    """Split `kept` into (staying, dropped) so that at most `target` stay."""
    staying = list(kept)
    dropped: list[Kept] = []
    per_cluster = Counter(k.cluster.name for k in staying)
    while len(staying) > max(target, 0):
        not_ready = [k for k in staying if not k.cluster.ready]
        old = [k for k in staying if k.observed.name in stale]
        candidates = not_ready or old or staying
        victim = max(
            candidates,
            key=lambda k: (not k.observed.ready, per_cluster[k.cluster.name], k.cluster.name, k.observed.index),
        )
        staying.remove(victim)
        dropped.append(victim)
        per_cluster[victim.cluster.name] -= 1
    return staying, dropped
