"""Generated names: DNS labels within their limits, and unique across namespaces, clusters and parts."""

import re
from dataclasses import dataclass

import pytest
from modelplane import names
from modelplane.model import ModelReplica
from modelplane.render import LLMIS_NAME_MAX, render_replica

from tests.render.factories import engine, leader_worker, replica

DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class PairCase:
    name: str
    first: tuple[str, str, int, tuple[str, ...]]  # namespace, deployment, index, parts
    second: tuple[str, str, int, tuple[str, ...]]


PAIRS = [
    PairCase("a dash moved from namespace to deployment", ("team-a", "llm", 0, ()), ("team", "a-llm", 0, ())),
    PairCase("a dash moved from deployment to index", ("a", "b-0", 1, ()), ("a-b", "0", 1, ())),
    PairCase("a dash moved between parts", ("ns", "d", 0, ("x-y", "z")), ("ns", "d", 0, ("x", "y-z"))),
    PairCase("case and punctuation that sanitise alike", ("ns", "d", 0, ("Main",)), ("ns", "d", 0, ("main",))),
    PairCase(
        "long names that share the truncated head",
        ("n" * 63, "d" * 63, 0, ("decode",)),
        ("n" * 63, "d" * 63, 0, ("prefill",)),
    ),
]


@pytest.mark.parametrize("case", PAIRS, ids=lambda c: c.name)
def test_workload_names_differ(case: PairCase) -> None:
    first = names.workload_name(case.first[0], case.first[1], case.first[2], *case.first[3])
    second = names.workload_name(case.second[0], case.second[1], case.second[2], *case.second[3])
    assert (first != second, DNS_1035.match(first) is not None, DNS_1035.match(second) is not None) == (
        True,
        True,
        True,
    )


@pytest.mark.parametrize("max_length", [names.MAX_NAME, LLMIS_NAME_MAX, 12])
def test_workload_names_respect_their_limit(max_length: int) -> None:
    name = names.workload_name("9" * 63, "d" * 63, 63, "e" * 63, max_length=max_length)
    assert (len(name) <= max_length, DNS_1035.match(name) is not None) == (True, True)


def _names(r: ModelReplica) -> set[str]:
    """Every Object name and every workload name a replica's rendering uses."""
    out: set[str] = set()
    for obj in render_replica(r):
        out.add(obj.manifest["metadata"]["name"])
        out.add(obj.manifest["spec"]["forProvider"]["manifest"]["metadata"]["name"])
    return out


@dataclass(frozen=True)
class ReplicaPairCase:
    name: str
    first: ModelReplica
    second: ModelReplica


REPLICA_PAIRS = [
    ReplicaPairCase(
        "same-looking deployments of different namespaces",
        replica(namespace="team-a", deployment="llm"),
        replica(namespace="team", deployment="a-llm"),
    ),
    ReplicaPairCase(
        "the same deployment and index on two clusters",
        replica(cluster="gpu-east"),
        replica(cluster="gpu-west"),
    ),
    ReplicaPairCase("two indices of one deployment", replica(index=0), replica(index=1)),
]


@pytest.mark.parametrize("case", REPLICA_PAIRS, ids=lambda c: c.name)
def test_replicas_never_share_names(case: ReplicaPairCase) -> None:
    assert _names(case.first) & _names(case.second) == set()


def test_names_within_one_replica_are_distinct() -> None:
    r = replica(engines=(engine("a", members=leader_worker(nodes=2, leader_claims=True)), engine("a-leader")))
    rendered = render_replica(r)
    workload = [o.manifest["spec"]["forProvider"]["manifest"]["metadata"]["name"] for o in rendered]
    objects = [o.manifest["metadata"]["name"] for o in rendered]
    assert (len(set(workload)), len(set(objects))) == (len(rendered), len(rendered))
