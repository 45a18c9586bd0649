"""deployment_status publishes counts, placement and the unplaced diagnosis in the XRD's status shape."""

from __future__ import annotations

from pathlib import Path

import yaml
from modelplane import model as m
from modelplane.api import deployment_status, parse_deployment
from modelplane.scheduler.result import Code, Diagnosis, Status

from tests.validator import validate_documents


def replica(cluster: str, index: int, *, ready: bool) -> m.ModelReplica:
    member = m.PlacedMember(role=m.Role.STANDALONE, pool="h200")
    engine = m.PlacedEngine(name="main", members=(member,))
    return m.ModelReplica(
        namespace="ns",
        name=f"llm-{cluster}-{index}",
        deployment="llm",
        cluster=cluster,
        index=index,
        engines=(engine,),
        ready=ready,
    )


DIAGNOSIS = Diagnosis(
    desired=3,
    placed=2,
    total_clusters=3,
    statuses={
        "c": Status(
            code=Code.UNSCHEDULABLE,
            reason="had no pool with enough free nodes",
            detail="pool h200: 0 free nodes, engine main needs 1",
        ),
        "a": Status(code=Code.FIT),
        "b": Status(
            code=Code.UNRESOLVABLE,
            reason="had untolerated taints",
            detail="taint gpu:NoSchedule",
            also=(
                Status(
                    code=Code.UNRESOLVABLE,
                    reason="had no pool matching an engine's devices",
                    detail="engine main: " + "x" * 600,
                ),
            ),
        ),
    },
)

WANT = {
    "replicas": {"total": 2, "ready": 1},
    "placement": [
        {
            "name": "llm-a-0",
            "cluster": "a",
            "index": 0,
            "pools": [{"engine": "main", "role": "Standalone", "pool": "h200"}],
        },
        {
            "name": "llm-a-1",
            "cluster": "a",
            "index": 1,
            "pools": [{"engine": "main", "role": "Standalone", "pool": "h200"}],
        },
    ],
    "unplaced": {
        "count": 1,
        "summary": "1/3 clusters are available: 1 had no pool with enough free nodes, 1 had untolerated taints.",
        "clusters": [
            {
                "cluster": "b",
                "reason": "had untolerated taints",
                "detail": "taint gpu:NoSchedule",
                "also": [
                    {
                        "reason": "had no pool matching an engine's devices",
                        "detail": "engine main: " + "x" * (512 - 3 - len("engine main: ")) + "...",
                    }
                ],
            },
            {
                "cluster": "c",
                "reason": "had no pool with enough free nodes",
                "detail": "pool h200: 0 free nodes, engine main needs 1",
            },
        ],
    },
}


def test_status_lists_placements_in_order_and_why_the_rest_is_unplaced_every_failing_filter_bounded() -> None:
    got = deployment_status([replica("a", 1, ready=False), replica("a", 0, ready=True)], DIAGNOSIS)
    assert got == WANT


def test_a_fully_placed_deployment_has_no_unplaced_section() -> None:
    full = Diagnosis(desired=1, placed=1, total_clusters=1)
    assert deployment_status([replica("a", 0, ready=True)], full) == {
        "replicas": {"total": 1, "ready": 1},
        "placement": [
            {
                "name": "llm-a-0",
                "cluster": "a",
                "index": 0,
                "pools": [{"engine": "main", "role": "Standalone", "pool": "h200"}],
            }
        ],
    }


def test_the_status_validates_against_the_xrd(tmp_path: Path) -> None:
    xr = yaml.safe_load((Path(__file__).parent / "samples" / "valid" / "deployment-unified-minimal.yaml").read_text())
    parse_deployment(xr)
    xr["status"] = WANT
    assert validate_documents([xr], tmp_path) == (0, [])
