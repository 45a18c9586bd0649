"""`modelplane plan --arrive-in-order`: the fleet after deployments are created one at a time, against after one apply."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane_function.cli.plan import plan

from tests.function.factories import cluster, deployment, namespace

ANY_GPU = 'device.driver == "gpu.nvidia.com"'
# One H100 node and one A100 node, and three deployments in the order the file gives them: one GPU of any
# kind, eight of any kind, eight H100s. Together they want 17 GPUs of 16.
FLEET = [cluster("a", nodes=1), cluster("b", nodes=1, product="A100")]
DEPLOYMENTS = [
    deployment(name="small", namespace="team-b", cel=ANY_GPU),
    deployment(name="any-eight", namespace="team-c", gpus=8, cel=ANY_GPU),
    deployment(name="hopper", gpus=8),
]


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    arrive_in_order: bool
    want: dict[str, list[str]]  # per cluster/pool: owner#index
    deployments: tuple[dict[str, Any], ...] = tuple(DEPLOYMENTS)


CASES = [
    Case(
        name="applied together, every statement is read: the larger deployments take both nodes",
        arrive_in_order=False,
        want={"a/pool": ["team-a/hopper#0"], "b/pool": ["team-c/any-eight#0"]},
    ),
    Case(
        name="created one at a time, the one-GPU model came first and took the H100 node; with nowhere to move it, "
        "the Hopper deployment stays unplaced",
        arrive_in_order=True,
        want={"a/pool": ["team-b/small#0"], "b/pool": ["team-c/any-eight#0"]},
    ),
    Case(
        name="created one at a time with room to spare, the one-GPU model moves off the H100 node once the Hopper "
        "deployment arrives: its successor is Ready by the next round, and it leaves",
        arrive_in_order=True,
        want={"a/pool": ["team-a/hopper#0"], "b/pool": ["team-b/small#0"]},
        deployments=(DEPLOYMENTS[0], DEPLOYMENTS[2]),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_arrival_in_order_previews_the_fleet_a_platform_grows_into(tmp_path: Path, case: Case) -> None:
    (tmp_path / "fleet.yaml").write_text(
        yaml.safe_dump_all([*FLEET, *(namespace(n) for n in ("team-a", "team-b", "team-c"))])
    )
    (tmp_path / "deployments.yaml").write_text(yaml.safe_dump_all(case.deployments))
    got = plan([tmp_path], arrive_in_order=case.arrive_in_order).view
    pools = {
        f"{c.name}/{p.name}": [f"{chip.owner}#{chip.index}" for chip in p.chips] for c in got.clusters for p in c.pools
    }
    assert (pools, got.converged) == (case.want, True)
