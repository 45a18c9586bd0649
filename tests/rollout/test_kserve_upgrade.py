"""A cluster upgraded to another KServe version changes what its replicas render: the rollout budget paces it.

Two Ready replicas rendered for KServe 0.19 on a cluster that now runs 0.20, no room to surge:
one reconcile updates one of them (the budget's one), re-emits the other exactly as observed, and
counts only the first as updated; once it is Ready the next reconcile takes the second.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from modelplane.model import ModelReplica
from modelplane.rollout import Observed, revision
from modelplane.rollout.reconcile import reconcile

from tests.scheduler.factories import cluster, deployment, observed, pool

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DEP = deployment(replicas=2)
UPGRADED = replace(cluster("a", pools=[pool("h100", nodes=2)]), kserve_version="0.20")


def _rendered_for(version: str | None, index: int, *, ready: bool = True) -> ModelReplica:
    r = observed(DEP, cluster="a", index=index, pools="h100", ready=ready)
    return replace(r, kserve_version=version, revision=revision(DEP))


def _summary(replicas: tuple[ModelReplica, ...]) -> list[tuple[int, str | None]]:
    return [(r.index, r.kserve_version) for r in replicas]


def test_a_kserve_upgrade_reaches_replicas_one_reconcile_at_a_time() -> None:
    first = reconcile(
        DEP, [UPGRADED], [_rendered_for("0.19", 0), _rendered_for("0.19", 1)], observed=Observed(), now=NOW
    )
    second = reconcile(
        DEP, [UPGRADED], [_rendered_for("0.20", 0), _rendered_for("0.19", 1)], observed=Observed(), now=NOW
    )
    assert (
        _summary(first.replicas),
        first.counts.updated,
        _summary(second.replicas),
        second.counts.updated,
    ) == ([(0, "0.20"), (1, "0.19")], 1, [(0, "0.20"), (1, "0.20")], 2)


def test_replicas_rendered_for_the_version_their_cluster_runs_are_current() -> None:
    done = reconcile(
        DEP, [UPGRADED], [_rendered_for("0.20", 0), _rendered_for("0.20", 1)], observed=Observed(), now=NOW
    )
    assert (done.updated, done.counts.updated, done.progress.reason) == (frozenset(), 2, "RolloutComplete")


def test_a_cluster_moving_to_a_later_kserve_than_known_renders_alike_and_rolls_nothing_out() -> None:
    later = replace(UPGRADED, kserve_version="0.21")  # rendered as 0.20, exactly as before
    done = reconcile(DEP, [later], [_rendered_for("0.20", 0), _rendered_for("0.20", 1)], observed=Observed(), now=NOW)
    assert (done.updated, done.counts.updated, done.progress.reason) == (frozenset(), 2, "RolloutComplete")
