"""The diagnosis people act on: every failing filter per cluster, true reasons, honest summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from modelplane.model import Cluster, Deployment, Device, ModelReplica
from modelplane.rollout import Observed
from modelplane.rollout.reconcile import reconcile
from modelplane.scheduler import Diagnosis, ScheduleResult, schedule
from modelplane.scheduler.result import FIT, Code, Status
from modelplane_function.cli.render.explain import lines as explain_lines

from tests.scheduler.factories import (
    GPU_DRIVER,
    cluster,
    deployment,
    engine,
    is_model,
    member,
    observed,
    pool,
    request,
    selector,
    taint,
)


@dataclass(frozen=True)
class Explained:
    """What a user reads: the condition reason and message, the summary, each rejected cluster's failures."""

    reason: str
    message: str
    summary: str
    failures: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # (reason, detail) in order


def explained(result: ScheduleResult) -> Explained:
    d = result.diagnosis
    return Explained(
        reason=d.reason(),
        message=d.message(),
        summary=d.summary(),
        failures={c: tuple((f.reason, f.detail) for f in s.every) for c, s in d.statuses.items() if not s.fits},
    )


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica] = ()
    want: Explained


H200 = (engine(members=[member(requests=[request(selectors=[is_model("H200")])])]),)
SIXTEEN = (engine(members=[member(requests=[request(count=16)])]),)
H2 = (
    engine(
        members=[member(requests=[request(selectors=['device.attributes["gpu.nvidia.com"].model.startsWith("H2")'])])]
    ),
)
UNLABELLED_GPU = Device(name="gpu", driver=GPU_DRIVER, device_class_name=GPU_DRIVER, count=8)
NO_H200 = (
    "engine main: member Standalone device request gpu: no device passes selector 1 "
    '(device.attributes["gpu.nvidia.com"].model == "H200"); devices here publish attributes gpu.nvidia.com/{model}'
)
TAINTED = ("had untolerated taints", "untolerated maintenance:NoSchedule")
NOT_READY = ("had Ready=False", "cluster is not Ready")
NO_DEVICES = ("had no pool matching an engine's devices", NO_H200)
FULL = ("had no pool with enough free nodes", "pool h100: 0 free nodes, engine main needs 1")

CASES = [
    Case(
        name="a tainted cluster whose GPUs would not match anyway says both, the taint counted",
        deployment=deployment(engines=H200),
        clusters=[cluster("a", taints=[taint("maintenance")])],
        want=Explained(
            reason="NoSuitableCluster",
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had untolerated taints.",
            summary="0/1 clusters are available: 1 had untolerated taints.",
            failures={"a": (TAINTED, NO_DEVICES)},
        ),
    ),
    Case(
        name="a cluster that is not Ready, tainted and full says all three, in filter order",
        deployment=deployment(),
        clusters=[cluster("a", ready=False, taints=[taint("maintenance")], pools=[pool("h100", nodes=0)])],
        want=Explained(
            reason="NoSuitableCluster",
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had Ready=False.",
            summary="0/1 clusters are available: 1 had Ready=False.",
            failures={"a": (NOT_READY, TAINTED, FULL)},
        ),
    ),
    Case(
        name="capacity is not judged where the devices do not match",
        deployment=deployment(engines=H200),
        clusters=[cluster("a", ready=False, pools=[pool("h100", nodes=0)])],
        want=Explained(
            reason="NoSuitableCluster",
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had Ready=False.",
            summary="0/1 clusters are available: 1 had Ready=False.",
            failures={"a": (NOT_READY, NO_DEVICES)},
        ),
    ),
    Case(
        name="a cluster short of nothing but free nodes makes the reason InsufficientCapacity",
        deployment=deployment(replicas=2),
        clusters=[cluster("a", pools=[pool("h100", nodes=1)]), cluster("b", taints=[taint("maintenance")])],
        want=Explained(
            reason="InsufficientCapacity",
            message=(
                "Scheduled 1 of 2 replicas; 0/2 clusters are available for the rest: "
                "1 had no pool with enough free nodes, 1 had untolerated taints."
            ),
            summary="0/2 clusters are available: 1 had no pool with enough free nodes, 1 had untolerated taints.",
            failures={"a": (FULL,), "b": (TAINTED,)},
        ),
    ),
    Case(
        name="a count larger than any node's devices says so, not that no device matches",
        deployment=deployment(engines=SIXTEEN),
        clusters=[cluster("a")],
        want=Explained(
            reason="NoSuitableCluster",
            message=(
                "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: "
                "1 had no pool matching an engine's devices."
            ),
            summary="0/1 clusters are available: 1 had no pool matching an engine's devices.",
            failures={
                "a": (
                    (
                        "had no pool matching an engine's devices",
                        "engine main: member Standalone device request gpu: asks for 16 devices per node; "
                        "the matching devices (gpu) have at most 8 per node",
                    ),
                ),
            },
        ),
    ),
    Case(
        name="a selector failing on every device of one cluster says so there, with the error",
        deployment=deployment(engines=H2),
        clusters=[cluster("a", pools=[pool("h100", devices=[UNLABELLED_GPU])]), cluster("b")],
        want=Explained(
            reason="NoSuitableCluster",
            message=(
                "Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
                "2 had no pool matching an engine's devices."
            ),
            summary="0/2 clusters are available: 2 had no pool matching an engine's devices.",
            failures={
                "a": (
                    (
                        "had no pool matching an engine's devices",
                        "engine main: member Standalone device request gpu: selector 1 "
                        '(device.attributes["gpu.nvidia.com"].model.startsWith("H2")) failed to evaluate on every '
                        'device here: no such key "model"; devices here publish no attributes or capacities',
                    ),
                ),
                "b": (
                    (
                        "had no pool matching an engine's devices",
                        "engine main: member Standalone device request gpu: no device passes selector 1 "
                        '(device.attributes["gpu.nvidia.com"].model.startsWith("H2")); devices here publish '
                        "attributes gpu.nvidia.com/{model}",
                    ),
                ),
            },
        ),
    ),
    Case(
        name="with nothing to place no cluster is evaluated, and the summary does not claim any is available",
        deployment=deployment(replicas=1),
        clusters=[cluster("a"), cluster("b", taints=[taint("maintenance")])],
        replicas=[observed(deployment(replicas=1), cluster="a", index=0, pools="h100")],
        want=Explained(
            reason="Scheduled",
            message="Scheduled 1 of 1 replicas.",
            summary="nothing was left to place; no cluster was evaluated (2 in the fleet).",
        ),
    ),
    Case(
        name="when everything is placed the last round's rejections are explained in full",
        deployment=deployment(replicas=1, engines=H200),
        clusters=[cluster("a", pools=[pool("h200", model="H200")]), cluster("b", taints=[taint("maintenance")])],
        want=Explained(
            reason="Scheduled",
            message="Scheduled 1 of 1 replicas.",
            summary="1/2 clusters are available: 1 had untolerated taints.",
            failures={"b": (TAINTED, NO_DEVICES)},
        ),
    ),
    Case(
        name="scaled to zero is its own reason",
        deployment=deployment(replicas=0),
        clusters=[cluster("a")],
        want=Explained(
            reason="ScaledToZero",
            message="Scheduled 0 of 0 replicas.",
            summary="nothing was left to place; no cluster was evaluated (1 in the fleet).",
        ),
    ),
    Case(
        name="with no cluster at all the reason is NoClusters",
        deployment=deployment(replicas=1, cluster_selector=None),
        clusters=[],
        want=Explained(
            reason="NoClusters",
            message="Scheduled 0 of 1 replicas; 0/0 clusters are available for the rest.",
            summary="0/0 clusters are available.",
        ),
    ),
    Case(
        name="a cluster outside clusterSelector is still explained in full",
        deployment=deployment(cluster_selector=selector(labels={"region": "eu"}), engines=H200),
        clusters=[cluster("a", labels={"region": "us"}, taints=[taint("maintenance")])],
        want=Explained(
            reason="NoSuitableCluster",
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 did not match clusterSelector.",
            summary="0/1 clusters are available: 1 did not match clusterSelector.",
            failures={
                "a": (
                    ("did not match clusterSelector", "labels region=us; wants region=eu"),
                    TAINTED,
                    NO_DEVICES,
                )
            },
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_diagnosis(case: Case) -> None:
    assert explained(schedule(case.deployment, case.clusters, case.replicas)) == case.want


def test_render_explain_lists_every_failing_filter_under_its_cluster() -> None:
    clusters = [cluster("a", taints=[taint("maintenance")]), cluster("b")]
    rolled = reconcile(deployment(engines=H200), clusters, [], observed=Observed(), now=datetime.now(UTC))
    table = [line for line in explain_lines(rolled) if line.startswith("  ")]
    assert table == [
        "  CLUSTER  REASON                                    DETAIL",
        f"  a        {TAINTED[0]:<40}  {TAINTED[1]}",
        f"           {NO_DEVICES[0]:<40}  {NO_DEVICES[1]}",
        f"  b        {NO_DEVICES[0]:<40}  {NO_DEVICES[1]}",
    ]


@dataclass(frozen=True, kw_only=True)
class Cause:
    name: str
    statuses: Mapping[str, Status]
    want: tuple[str, Status] | None


def _turned_down(reason: str, detail: str) -> Status:
    return Status(code=Code.UNSCHEDULABLE, reason=reason, detail=detail)


CAUSES = [
    Cause(name="every cluster fits: no cause", statuses={"a": FIT}, want=None),
    Cause(
        name="the most common reason wins, shown by its first cluster by name",
        statuses={
            "c": _turned_down(*FULL),
            "b": _turned_down(*TAINTED),
            "z": _turned_down(*NO_DEVICES),
            "y": _turned_down(*NO_DEVICES),
            "a": FIT,
        },
        want=("y", _turned_down(*NO_DEVICES)),
    ),
    Cause(
        name="a tie goes to the reason the summary lists first",
        statuses={"b": _turned_down(*TAINTED), "a": _turned_down(*NOT_READY)},
        want=("a", _turned_down(*NOT_READY)),
    ),
]


@pytest.mark.parametrize("case", CAUSES, ids=lambda c: c.name)
def test_the_main_cause_is_the_summarys_first_reason_with_its_specifics(case: Cause) -> None:
    d = Diagnosis(desired=1, placed=0, total_clusters=len(case.statuses), statuses=case.statuses)
    assert d.main_cause() == case.want
