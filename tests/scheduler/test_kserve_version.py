"""Every replica carries its cluster's KServe version, new or retained, so it renders for that cluster."""

from dataclasses import dataclass, replace

import pytest
from modelplane.model import Cluster, ModelReplica
from modelplane.scheduler import schedule

from tests.scheduler.factories import cluster, deployment, observed

DEP = deployment(replicas=2)


@dataclass(frozen=True)
class Case:
    name: str
    clusters: tuple[Cluster, ...]
    replicas: tuple[ModelReplica, ...]
    want: dict[str, str | None]  # cluster -> the version its replica carries


CASES = [
    Case(
        "new replicas take their cluster's version, none where the cluster declares none",
        (replace(cluster("a"), kserve_version="0.16"), cluster("b")),
        (),
        {"a": "0.16", "b": None},
    ),
    Case(
        "a retained replica follows its cluster's upgrade",
        (replace(cluster("a"), kserve_version="0.18"), replace(cluster("b"), kserve_version="0.20")),
        (
            replace(observed(DEP, cluster="a", index=0, pools="h100"), kserve_version="0.17"),
            observed(DEP, cluster="b", index=0, pools="h100"),
        ),
        {"a": "0.18", "b": "0.20"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_replicas_carry_their_clusters_kserve_version(case: Case) -> None:
    result = schedule(DEP, list(case.clusters), list(case.replicas))
    assert {r.cluster: r.kserve_version for r in result.replicas} == case.want
