"""A deployment naming a ModelCache is placed only where a Ready copy of it can be mounted; its
running replicas stay whatever the cache says."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import pytest
from modelplane.model import Cluster, Deployment, LabelSelector, ModelCache, ModelReplica
from modelplane.scheduler import schedule

from tests.scheduler.factories import Outline, cluster, deployment, observed, outline


def _mounting(name: str, **labels: str) -> Cluster:
    """A cluster whose workloads run where Modelplane's ModelCache stages its volume."""
    return replace(cluster(name, labels=labels), workload_namespace="default")


def _cached(
    phases: Mapping[str, str] | None = None,
    *,
    selector: Mapping[str, str] | None = None,
    problem: str | None = None,
    replicas: int = 1,
) -> Deployment:
    cache = None
    if problem is None and phases is not None:
        sel = LabelSelector(match_labels=dict(selector)) if selector else None
        cache = ModelCache(namespace="team-a", name="weights", cluster_selector=sel, phases=dict(phases))
    return replace(deployment(replicas=replicas), model_cache="weights", model=None, cache=cache, cache_problem=problem)


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica] = ()
    want: Outline = field(default_factory=Outline)


REASON = "had no Ready copy of the ModelCache"
KEPT = _cached({"a": "Hydrating"}, replicas=2)

CASES = [
    Case(
        name="only a cluster where the cache is Ready takes the replica",
        deployment=_cached({"a": "Hydrating", "b": "Ready", "c": "Failed"}),
        clusters=[_mounting("a"), _mounting("b"), _mounting("c"), _mounting("d")],
        want=Outline(
            replicas=("b/0 main@h100",),
            created=("b/0",),
            message="Scheduled 1 of 1 replicas.",
            details={
                "a": "ModelCache weights is Hydrating here",
                "c": "ModelCache weights is Failed here",
                "d": "ModelCache weights reports no phase here yet",
            },
        ),
    ),
    Case(
        name="a cluster outside the cache's clusterSelector is not a candidate, whatever its status says",
        deployment=_cached({"east": "Ready", "west": "Ready"}, selector={"region": "west"}),
        clusters=[_mounting("east", region="east"), _mounting("west", region="west")],
        want=Outline(
            replicas=("west/0 main@h100",),
            created=("west/0",),
            message="Scheduled 1 of 1 replicas.",
            details={"east": "ModelCache weights does not stage here: labels region=east; wants region=west"},
        ),
    ),
    Case(
        name="a cluster whose workloads run outside the cache volume's namespace cannot mount it",
        deployment=_cached({"a": "Ready"}),
        clusters=[cluster("a")],
        want=Outline(
            message=f"Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 {REASON}.",
            details={
                "a": "ModelCache weights stages its volume in namespace default and a pod mounts only a claim "
                "of its own namespace; the cluster's workloadNamespace is ws-a"
            },
        ),
    ),
    Case(
        name="a missing cache places nothing and says so on every cluster",
        deployment=_cached(problem="ModelCache team-a/weights does not exist"),
        clusters=[_mounting("a"), _mounting("b")],
        want=Outline(
            message=f"Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: 2 {REASON}.",
            details={"a": "ModelCache team-a/weights does not exist", "b": "ModelCache team-a/weights does not exist"},
        ),
    ),
    Case(
        name="a cache not read at all places nothing",
        deployment=replace(_cached({}), cache=None),
        clusters=[_mounting("a")],
        want=Outline(
            message=f"Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 {REASON}.",
            details={"a": "ModelCache team-a/weights was not read"},
        ),
    ),
    Case(
        name="a running replica stays where the cache is hydrating again; no new one joins it",
        deployment=KEPT,
        clusters=[_mounting("a")],
        replicas=[observed(KEPT, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("a/0 main@h100",),
            message=f"Scheduled 1 of 2 replicas; 0/1 clusters are available for the rest: 1 {REASON}.",
            details={"a": "ModelCache weights is Hydrating here"},
        ),
    ),
    Case(
        name="a running replica stays when the cache has gone",
        deployment=replace(KEPT, cache=None, cache_problem="ModelCache team-a/weights does not exist"),
        clusters=[_mounting("a")],
        replicas=[observed(KEPT, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("a/0 main@h100",),
            message=f"Scheduled 1 of 2 replicas; 0/1 clusters are available for the rest: 1 {REASON}.",
            details={"a": "ModelCache team-a/weights does not exist"},
        ),
    ),
    Case(
        name="a deployment naming no cache ignores what clusters hold",
        deployment=deployment(),
        clusters=[cluster("a")],
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_model_cache_placement(case: Case) -> None:
    result = schedule(case.deployment, case.clusters, case.replicas)
    assert outline(result, details=True) == case.want
