"""How the fleet view reads each cluster: turned the deployment down, left out by its clusterSelector,
or hosting it with no room for more; and what each pool's nodes carry."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

import pytest
from modelplane.fleet import build
from modelplane.fleet.text import rejection_table
from modelplane.model import Attribute, AttributeType, Device
from modelplane.scheduler.filters import REASON_NO_CAPACITY, REASON_SELECTOR_MISMATCH, REASON_UNTOLERATED_TAINTS

from tests.fleet.factories import rejected, result
from tests.scheduler.factories import cluster, deployment, gpu, nic, observed, pool, selector

DEP = deployment("llm", namespace="team-a", replicas=2, cluster_selector=selector(labels={"fleet": "prod"}))
OURS_A0 = observed(DEP, cluster="a", index=0, pools="h100")
H200 = Device(
    name="gpu",
    driver="gpu.nvidia.com",
    device_class_name="gpu.nvidia.com",
    count=8,
    attributes=MappingProxyType({"productName": Attribute(type=AttributeType.STRING, value="NVIDIA H200")}),
)


@dataclass(frozen=True)
class Case:
    name: str
    verdicts: dict[str, str]  # cluster -> the scheduler's reason ("" = fits)
    want: dict[str, tuple[bool, bool, int]]  # cluster -> (rejected, excluded, hosts)


CASES = [
    Case(
        name="a cluster hosting a replica and full for the next has not turned the deployment down",
        verdicts={"a": REASON_NO_CAPACITY, "b": REASON_UNTOLERATED_TAINTS},
        want={"a": (False, False, 1), "b": (True, False, 0), "c": (False, True, 0)},
    ),
    Case(
        name="a clusterSelector mismatch is shown as left out, not as a refusal",
        verdicts={"a": "", "b": REASON_SELECTOR_MISMATCH},
        want={"a": (False, False, 1), "b": (False, True, 0), "c": (False, True, 0)},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cluster_reading(case: Case) -> None:
    statuses = {c: rejected(r, "detail") for c, r in case.verdicts.items() if r}
    view = build(
        DEP,
        [cluster("a"), cluster("b")],
        [OURS_A0],
        result(desired=2, replicas=[OURS_A0], total_clusters=2, statuses=statuses),
        excluded=[cluster("c", labels={"fleet": "staging"})],  # never sent: matchLabels filtered it out
    )
    got = {c.name: (c.rejected, c.excluded, c.hosts) for c in view.clusters}
    assert got == case.want


def test_a_cluster_the_function_never_saw_says_which_labels_it_has_and_which_are_wanted() -> None:
    view = build(DEP, [cluster("a")], [], result(desired=2), excluded=[cluster("c", labels={"fleet": "staging"})])
    got = [(c.name, c.verdict.reason, c.verdict.detail) for c in view.clusters if c.verdict]
    assert got == [("c", REASON_SELECTOR_MISMATCH, "labels fleet=staging; wants fleet=prod")]


def test_each_pool_says_what_a_node_carries_by_product_name_else_by_device_name() -> None:
    c = cluster("a", pools=[pool("h200", devices=[H200, nic(count=8)]), pool("old", devices=[gpu(count=4)])])
    view = build(DEP, [c], [], result(desired=2))
    assert [(p.name, p.devices) for p in view.clusters[0].pools] == [
        ("h200", "8x NVIDIA H200, 8x ib"),
        ("old", "4x gpu"),
    ]


def test_a_rejected_cluster_lists_every_failing_filter_in_order() -> None:
    tainted_and_small = replace(
        rejected(REASON_UNTOLERATED_TAINTS, "taint spot:NoSchedule"),
        also=(rejected(REASON_NO_CAPACITY, "pool h100: 0 free nodes, engine main needs 1"),),
    )
    view = build(DEP, [cluster("b")], [], result(desired=2, statuses={"b": tainted_and_small}))
    assert rejection_table(view) == [
        "  CLUSTER  REASON                              DETAIL",
        "  b        had untolerated taints              taint spot:NoSchedule",
        "           had no pool with enough free nodes  pool h100: 0 free nodes, engine main needs 1",
    ]
