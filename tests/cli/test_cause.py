"""The main cause of unplaced replicas is the nearest miss: the cluster closest to placing the replica."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest
from modelplane.scheduler.result import FIT, NODE_CAPACITY, Code, Status
from modelplane_function.cli.render.cause import nearest_miss

FULL = Status(
    code=Code.UNSCHEDULABLE,
    reason="had no pool with enough free nodes",
    detail="pool h100: 0 free nodes",
    filter=NODE_CAPACITY,
)
NO_DEVICES = Status(
    code=Code.UNRESOLVABLE,
    reason="had no pool matching an engine's devices",
    detail="at most 4 per node",
    filter="DeviceMatch",
)
TAINTED = Status(
    code=Code.UNRESOLVABLE,
    reason="had untolerated taints",
    detail="untolerated gpu=x:NoSchedule",
    filter="TaintToleration",
)
NOT_READY = Status(code=Code.UNSCHEDULABLE, reason="had Ready=False", detail="cluster is not Ready", filter="Ready")
UNSELECTED = Status(
    code=Code.UNRESOLVABLE, reason="did not match clusterSelector", detail="wants fleet=prod", filter="ClusterSelector"
)


@dataclass(frozen=True)
class Case:
    name: str
    statuses: Mapping[str, Status]
    want: tuple[str, Status] | None


CASES = [
    Case(name="every cluster fits: no cause", statuses={"a": FIT}, want=None),
    Case(
        name="a full cluster beats more clusters that can never host the deployment",
        statuses={"ada-1": NO_DEVICES, "ada-2": NO_DEVICES, "h100": FULL},
        want=("h100", FULL),
    ),
    Case(
        name="a cluster with one failure beats one with two",
        statuses={
            "a": Status(
                code=Code.UNSCHEDULABLE, reason=NOT_READY.reason, detail=NOT_READY.detail, filter="Ready", also=(FULL,)
            ),
            "b": TAINTED,
        },
        want=("b", TAINTED),
    ),
    Case(
        name="a failure that may pass later beats one that needs a change",
        statuses={"a": TAINTED, "b": NOT_READY},
        want=("b", NOT_READY),
    ),
    Case(
        name="short of free nodes alone beats not Ready",
        statuses={"a": NOT_READY, "b": FULL},
        want=("b", FULL),
    ),
    Case(
        name="a cluster the selector leaves out comes last, whatever else",
        statuses={
            "a": UNSELECTED,
            "b": Status(
                code=Code.UNRESOLVABLE,
                reason=TAINTED.reason,
                detail=TAINTED.detail,
                filter=TAINTED.filter,
                also=(NO_DEVICES,),
            ),
        },
        want=(
            "b",
            Status(
                code=Code.UNRESOLVABLE,
                reason=TAINTED.reason,
                detail=TAINTED.detail,
                filter=TAINTED.filter,
                also=(NO_DEVICES,),
            ),
        ),
    ),
    Case(
        name="equally near clusters go by name",
        statuses={"b": FULL, "a": FULL},
        want=("a", FULL),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_main_cause_is_the_nearest_miss(case: Case) -> None:
    assert nearest_miss(case.statuses) == case.want
