"""`modelplane render --explain` says when room was held for larger deployments, and which replicas move."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from modelplane_function.cli.main import main

from tests.function.factories import cluster, deployment, namespace, with_ready
from tests.function.wants import replica

ANY_GPU = 'device.driver == "gpu.nvidia.com"'
SMALL = deployment(name="small", namespace="team-b", cel=ANY_GPU)
BIG = deployment(name="big", gpus=8)  # eight H100s: only cluster a has them


def _explain(
    tmp_path: Path, fleet: list[dict[str, Any]], observed: Sequence[dict[str, Any]] = (), *, big: dict[str, Any] = BIG
) -> str:
    xr = tmp_path / "xr.yaml"
    xr.write_text(yaml.safe_dump(SMALL))
    required = tmp_path / "fleet.yaml"
    required.write_text(yaml.safe_dump_all([*fleet, namespace("team-b"), big]))
    args = ["render", str(xr), "-e", str(required), "--explain", "--no-recurse"]
    if observed:
        obs = tmp_path / "observed.yaml"
        obs.write_text(yaml.safe_dump_all(observed))
        args += ["--observed-resources", str(obs)]
    got = CliRunner().invoke(main, args)
    return got.stderr


def test_explain_names_the_room_held_for_a_larger_deployment(tmp_path: Path) -> None:
    # Two H100 clusters alike, the larger deployment confined to the first: only held room tells them apart.
    fleet = [cluster("a", nodes=1, labels={"region": "us"}), cluster("b", nodes=1)]
    text = _explain(tmp_path, fleet, big=deployment(name="big", gpus=8, match_labels={"region": "us"}))
    held = (
        "Room held first for the missing replicas of deployments ranked ahead (fleet quota guarantee, priority, GPUs per replica): team-a/big (1). "
        "The scores below are over what they leave."
    )
    placed = [line.split()[:2] for line in text.splitlines() if line.startswith("  small-")]
    assert (held in text.splitlines(), placed) == (True, [[placed[0][0], "b"]])


def test_explain_shows_what_scarcity_costs_on_the_only_fit_of_larger_demand(tmp_path: Path) -> None:
    text = _explain(tmp_path, [cluster("a", nodes=1), cluster("b", nodes=1, product="A100")])
    lines = text.splitlines()
    at = lines.index("Scores (last bind round, best first):")
    # The H100 node is the larger Hopper deployment's only fit: 4 per device of the node, for its one node wanted.
    assert [line.split() for line in lines[at + 1 : at + 4]] == [
        ["CLUSTER", "TOTAL", "FREE", "IDLE", "PREMIUM", "SCARCE", "SPREAD"],
        ["b", "9993", "0", "7", "0", "100"],
        ["a", "9961", "0", "7", "0", "32", "100"],
    ]


def test_explain_names_the_move_that_makes_room(tmp_path: Path) -> None:
    on_a = with_ready(replica("a", deployment="small", namespace="team-b", cel=ANY_GPU))
    on_a["metadata"]["annotations"] = {"crossplane.io/composition-resource-name": "replica-a-0"}
    text = _explain(tmp_path, [cluster("a", nodes=1), cluster("b", nodes=1, product="A100"), on_a], [on_a])
    move = "Move: team-b/small#0 moves off a/pool to make room for team-a/big; it leaves once its successor is Ready."
    assert move in text.splitlines()


def test_a_given_deployment_is_read_through_the_demand_it_states_and_not_called_left_out(tmp_path: Path) -> None:
    text = _explain(tmp_path, [cluster("a", nodes=1), cluster("b", nodes=1, product="A100")])
    assert [line for line in text.splitlines() if "left out" in line] == []
