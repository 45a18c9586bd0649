"""The function reads other deployments' replicas for the ledger only, and clusters without the pools they replace."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api
from modelplane.errors import SpecError
from modelplane_function.handlers import requirements
from modelplane_function.handlers.convert import to_dict
from modelplane_function.handlers.pools import cluster_dict, read_cluster

from tests.api.test_ledger_replica import ledger_part
from tests.benchmarks.cases import Size, case
from tests.benchmarks.fleet import generate
from tests.function.factories import struct


def test_composed_replicas_are_skipped_and_every_other_one_is_read_for_the_ledger() -> None:
    """The deployment's own replicas come in full from observed state; the list is only the rest of the fleet."""
    c = case(Size(clusters=20, existing=200, new=4))
    req = c.steady_request()
    objs = [to_dict(s) for s in requirements.structs(req, requirements.REPLICAS)]
    full = {(r.namespace, r.name): r for r in map(api.parse_replica, objs)}
    ours = frozenset(
        k for k, r in full.items() if (r.namespace, r.deployment) == (c.deployment.namespace, c.deployment.name)
    )
    got = requirements.replicas(req, skip=ours)
    # and, for moves (scheduler/displace.py), whether each one is Ready
    want = {k: replace(ledger_part(r), ready=r.ready) for k, r in full.items() if k not in ours}
    assert (len(ours), len(want) >= 200, got) == (4, True, (want, {}))


def _request(xr: dict[str, Any], replicas: list[dict[str, Any]]) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(struct(xr))
    items = req.required_resources[requirements.REPLICAS]
    for obj in replicas:
        items.items.add().resource.CopyFrom(struct(obj))
    return req


XR = {"metadata": {"name": "mine", "namespace": "team-a"}}
OTHER = {
    "metadata": {
        "name": "other-c1-0",
        "namespace": "team-b",
        "labels": {"modelplane.ai/deployment": "other", "modelplane.ai/replica-index": "0"},
    },
    "spec": {
        "clusterName": "c1",
        "scheduling": {"queue": "default-queue", "priorityClassName": "inference"},
        "engines": [
            {
                "name": "main",
                "members": [
                    {
                        "nodePoolName": "h100",
                        "deviceRequests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}],
                        "template": {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}},
                    }
                ],
            }
        ],
    },
}


OTHER_ELSEWHERE = {
    **OTHER,
    "metadata": {**OTHER["metadata"], "name": "other-c2-0"},
    "spec": {**OTHER["spec"], "clusterName": "c2"},
}


def _with(path: tuple[str | int, ...], value: Any, obj: dict[str, Any] = OTHER) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    parent: Any = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return out


MEMBER = ("spec", "engines", 0, "members", 0)


@dataclass(frozen=True)
class Bad:
    name: str
    obj: dict[str, Any]


BAD = [
    Bad("a bad field the ledger reads", _with((*MEMBER, "nodePoolName"), "")),
    Bad(
        "bad fields the ledger reads and does not read",
        _with((*MEMBER, "template"), "x", _with(("spec", "engines", 0, "copies"), 1.5)),
    ),
    Bad(
        "a superscript replica index",
        _with(("metadata", "labels"), {"modelplane.ai/deployment": "other", "modelplane.ai/replica-index": "\u00b2"}),
    ),
]


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.name)
def test_an_other_replica_the_ledger_rejects_is_reported_against_its_cluster_with_the_full_parsers_message(
    bad: Bad,
) -> None:
    got = requirements.replicas(_request(XR, [bad.obj, OTHER_ELSEWHERE]), skip=frozenset())
    with pytest.raises(SpecError) as full:
        api.parse_replica(bad.obj)
    want_read = {("team-b", "other-c2-0"): ledger_part(api.parse_replica(OTHER_ELSEWHERE))}
    assert got == (want_read, {"c1": f"ModelReplica team-b/other-c1-0: {full.value}"})


def test_an_other_replica_is_not_checked_beyond_what_the_ledger_reads() -> None:
    bad_template = _with((*MEMBER, "template"), "not a pod")
    got = requirements.replicas(_request(XR, [bad_template]), skip=frozenset())
    assert got == ({("team-b", "other-c1-0"): ledger_part(api.parse_replica(OTHER))}, {})


def test_a_replica_labelled_as_the_deployments_but_not_composed_by_it_is_read_for_the_ledger_only() -> None:
    mine = _with(("metadata", "labels", "modelplane.ai/deployment"), "mine", _with(("metadata", "namespace"), "team-a"))
    got = requirements.replicas(_request(XR, [_with((*MEMBER, "template"), "x", mine)]), skip=frozenset())
    assert got == ({("team-a", "other-c1-0"): ledger_part(api.parse_replica(mine))}, {})


POOLS = [{"name": "p", "nodes": 1}]


@dataclass(frozen=True)
class ClusterCase:
    name: str
    obj: dict[str, Any]
    want: dict[str, Any]


CLUSTER_CASES = [
    ClusterCase(
        "published pools leave spec.nodePools unconverted",
        {"spec": {"kai": {}, "nodePools": POOLS}, "status": {"gpuPools": POOLS}},
        {"spec": {"kai": {}}, "status": {"gpuPools": POOLS}},
    ),
    ClusterCase(
        "a null gpuPools publishes nothing: spec.nodePools are read",
        {"spec": {"nodePools": POOLS}, "status": {"gpuPools": None}},
        {"spec": {"nodePools": POOLS}, "status": {"gpuPools": None}},
    ),
    ClusterCase("no status: spec.nodePools are read", {"spec": {"nodePools": POOLS}}, {"spec": {"nodePools": POOLS}}),
    ClusterCase(
        "a spec that is not an object is converted as it is",
        {"spec": "x", "status": {"gpuPools": POOLS}},
        {"spec": "x", "status": {"gpuPools": POOLS}},
    ),
]


@pytest.mark.parametrize("case", CLUSTER_CASES, ids=lambda c: c.name)
def test_cluster_dict_converts_what_parse_cluster_reads(case: ClusterCase) -> None:
    assert cluster_dict(struct(case.obj)) == case.want


def test_clusters_read_through_the_device_memos_equal_the_plain_parse() -> None:
    objs = list(generate(clusters=30, seed=3).clusters)
    plain = [api.parse_cluster(o) for o in objs]
    devices: dict[str, Any] = {}
    memoised = [api.parse_cluster(o, devices=devices) for o in objs]
    n_devices = sum(len(p.get("devices") or ()) for o in objs for p in o["status"]["gpuPools"])
    read = [read_cluster(struct(o)) for o in objs * 2]
    assert (memoised, read, len(devices) < n_devices / 4) == (plain, plain * 2, True)


GPU = {"name": "gpu", "driver": "d", "deviceClassName": "c", "attributes": {"v": {"version": "1.2.3"}}}


def test_a_bad_device_fails_with_the_same_message_through_the_device_memo() -> None:
    bad_gpu = {**GPU, "attributes": {"v": {"version": "1.2"}}}
    obj = {
        "metadata": {"name": "c"},
        "status": {"gpuPools": [{"name": "a", "devices": [GPU]}, {"name": "b", "devices": [GPU, bad_gpu]}]},
    }
    messages = []
    for devices in (None, {}):
        with pytest.raises(SpecError) as info:
            api.parse_cluster(obj, devices=devices)
        messages.append(str(info.value))
    assert (
        messages
        == [
            "status.gpuPools[1].devices[1].attributes.v: version '1.2' is not a semantic version (semver.org 2.0.0, "
            "e.g. 560.35.3)"
        ]
        * 2
    )
