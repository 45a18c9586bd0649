"""PodGroup arithmetic: one leaf per engine holding all its pods, the root requiring every leaf."""

from dataclasses import dataclass, replace
from typing import Any

import pytest
from modelplane.model import ModelReplica, Phase, ServingMode
from modelplane.render.podgroup import pod_group

from tests.render.factories import engine, leader_worker, replica, standalone


@dataclass(frozen=True)
class Case:
    name: str
    replica: ModelReplica
    want_spec: dict[str, Any]


CASES = [
    Case(
        "one single-node copy is a gang of one, in the queue and priority class KAI installs",
        replica(),
        {
            "queue": "default-queue",
            "minSubGroup": 1,
            "subGroups": [{"name": "main", "minMember": 1}],
            "priorityClassName": "inference",
        },
    ),
    Case(
        "standalone copies all join the engine's leaf",
        replica(engines=(engine(copies=3),), queue="team-a"),
        {
            "queue": "team-a",
            "minSubGroup": 1,
            "subGroups": [{"name": "main", "minMember": 3}],
            "priorityClassName": "inference",
        },
    ),
    Case(
        "every copy brings its leader and its workers",
        replica(engines=(engine(copies=2, members=leader_worker(nodes=3)),)),
        {
            "queue": "default-queue",
            "minSubGroup": 1,
            "subGroups": [{"name": "main", "minMember": 8}],
            "priorityClassName": "inference",
        },
    ),
    Case(
        "a claimless leader is still a pod of the gang",
        replica(engines=(engine(members=leader_worker(nodes=1, leader_claims=False)),)),
        {
            "queue": "default-queue",
            "minSubGroup": 1,
            "subGroups": [{"name": "main", "minMember": 2}],
            "priorityClassName": "inference",
        },
    ),
    Case(
        "prefill and decode are both required, each with its own pods",
        replica(
            serving_mode=ServingMode.PREFILL_DECODE,
            engines=(
                engine("prefill", phase=Phase.PREFILL, copies=4, members=standalone(gpu_count=8)),
                engine("decode", phase=Phase.DECODE, copies=2, members=leader_worker(nodes=3)),
            ),
        ),
        {
            "queue": "default-queue",
            "minSubGroup": 2,
            "subGroups": [{"name": "decode", "minMember": 8}, {"name": "prefill", "minMember": 4}],
            "priorityClassName": "inference",
        },
    ),
    Case(
        "priority class and topology come from the replica",
        replace(replica(), priority_class_name="inference-high", topology="rack-topology"),
        {
            "queue": "default-queue",
            "minSubGroup": 1,
            "subGroups": [{"name": "main", "minMember": 1}],
            "priorityClassName": "inference-high",
            "topologyConstraint": {"topology": "rack-topology"},
        },
    ),
    Case(
        "the cluster's topology levels keep the gang within one rack, preferably one block",
        replace(
            replica(),
            topology="rack-topology",
            topology_required_level="example.com/rack",
            topology_preferred_level="example.com/block",
        ),
        {
            "queue": "default-queue",
            "minSubGroup": 1,
            "subGroups": [{"name": "main", "minMember": 1}],
            "priorityClassName": "inference",
            "topologyConstraint": {
                "topology": "rack-topology",
                "requiredTopologyLevel": "example.com/rack",
                "preferredTopologyLevel": "example.com/block",
            },
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_pod_group(case: Case) -> None:
    got = pod_group(case.replica, name="pg", labels={"a": "b"})
    assert got == {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "modelplane-workloads", "labels": {"a": "b"}},
        "spec": case.want_spec,
    }
