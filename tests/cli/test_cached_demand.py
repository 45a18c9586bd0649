"""Offline tools state a cached deployment's demand as its reconcile would: only where its
ModelCache, given among the input files, is Ready."""

from dataclasses import dataclass
from typing import Any

import pytest
from modelplane_function.cli.render.demands import stated
from modelplane_function.cli.render.wire import Doc

from tests.function.factories import API, cluster, deployment

CACHED = deployment()
CACHED["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "weights"}


def _mounting(name: str) -> dict[str, Any]:
    obj = cluster(name)
    obj["spec"]["workloadNamespace"] = "default"
    return obj


def _cache(**phases: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ModelCache",
        "metadata": {"name": "weights", "namespace": "team-a"},
        "spec": {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-8B", "sizeGiB": 20}},
        "status": {"clusters": [{"name": c, "phase": p} for c, p in phases.items()]},
    }


@dataclass(frozen=True)
class Case:
    name: str
    fleet: list[dict[str, Any]]
    want: dict[str, Any]


CASES = [
    Case(
        "only the clusters where the cache is Ready are stated",
        [_mounting("a"), _mounting("b"), _cache(a="Hydrating", b="Ready")],
        {"clusterSet": "Listed", "clusters": ["b"]},
    ),
    Case(
        "without its cache among the files it states no cluster",
        [_mounting("a"), _mounting("b")],
        {"clusterSet": "Listed", "clusters": []},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_cached_deployment_states_demand_where_its_cache_is(case: Case) -> None:
    source = Doc.from_dict(CACHED)
    ((statement, of),) = stated([(source, CACHED)], [Doc.from_dict(o) for o in case.fleet])
    got = {k: v for k, v in statement.head["spec"].items() if k in ("clusterSet", "clusters")}
    assert (of is source, got) == (True, case.want)
