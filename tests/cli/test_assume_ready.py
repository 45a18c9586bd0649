"""A rollout previewed from a previous render's ModelReplicas: said to count them as down, and
`--assume-ready` treats them as Ready, so the preview keeps replicas serving."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from modelplane_function.cli.main import main

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
NOTE = (
    "modelplane: note: 2 given ModelReplicas have no Ready condition (a render's output has none), so they count "
    "as down and a rollout may update every replica at once; --assume-ready treats given ModelReplicas as Ready"
)


def _inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The quickstart's ModelReplicas as a render printed them, and the deployment with one argument changed."""
    clusters = QUICKSTART / "required-resources.yaml"
    before = CliRunner().invoke(main, ["render", str(QUICKSTART / "xr.yaml"), "-e", str(clusters), "--no-recurse"])
    replicas = [d for d in yaml.safe_load_all(before.stdout) if d["kind"] == "ModelReplica"]
    (tmp_path / "replicas.yaml").write_text(yaml.safe_dump_all(replicas, sort_keys=False))
    changed = (QUICKSTART / "xr.yaml").read_text().replace("--enable-prefix-caching", "--enable-chunked-prefill")
    (tmp_path / "changed.yaml").write_text(changed)
    return tmp_path / "changed.yaml", clusters, tmp_path / "replicas.yaml"


@dataclass(frozen=True)
class Case:
    name: str
    command: str
    flags: tuple[str, ...]
    want: list[str]  # the preview's last line and the notes


def _args(command: str, xr: Path, clusters: Path, replicas: Path) -> list[str]:
    if command == "plan":
        return ["plan", str(xr), str(clusters), str(replicas)]
    return ["render", str(xr), "-e", str(clusters), "-o", str(replicas), "--explain"]


CASES = [
    Case(
        name="render without the flag updates both at once and says why",
        command="render",
        flags=(),
        want=["  Complete after 1 round; at least 0 of 2 replicas available in every round.", NOTE],
    ),
    Case(
        name="render with --assume-ready keeps one serving in every round",
        command="render",
        flags=("--assume-ready",),
        want=["  Complete after 2 rounds; at least 2 of 2 replicas available in every round."],
    ),
    Case(
        name="plan without the flag says why",
        command="plan",
        flags=(),
        want=["  Complete after 1 round; at least 0 of 2 replicas available in every round.", NOTE],
    ),
    Case(
        name="plan with --assume-ready keeps one serving in every round",
        command="plan",
        flags=("--assume-ready",),
        want=["  Complete after 2 rounds; at least 2 of 2 replicas available in every round."],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_given_replicas_without_ready(case: Case, tmp_path: Path) -> None:
    got = CliRunner().invoke(main, [*_args(case.command, *_inputs(tmp_path)), *case.flags])
    lines = (got.stdout + got.stderr).splitlines()
    assert [line for line in lines if line.startswith(("  Complete", "modelplane: note"))] == case.want


def test_a_ready_condition_given_is_kept(tmp_path: Path) -> None:
    xr, clusters, replicas = _inputs(tmp_path)
    docs = list(yaml.safe_load_all(replicas.read_text()))
    for doc in docs:
        doc.setdefault("status", {})["conditions"] = [{"type": "Ready", "status": "False", "reason": "Down"}]
    replicas.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    got = CliRunner().invoke(main, [*_args("render", xr, clusters, replicas), "--assume-ready"])
    lines = (got.stdout + got.stderr).splitlines()
    assert [line for line in lines if line.startswith(("  Complete", "modelplane: note"))] == [
        "  Complete after 1 round; at least 0 of 2 replicas available in every round."
    ]


@pytest.mark.parametrize("command", ["render", "fleet"])
def test_replicas_assumed_ready_are_not_said_to_be_left_out(command: str, tmp_path: Path) -> None:
    xr, clusters, replicas = _inputs(tmp_path)
    args = [command, str(xr), "-e", str(clusters), "-e", str(replicas), "--assume-ready"]
    got = CliRunner().invoke(main, args)
    assert [line for line in got.stderr.splitlines() if line.startswith("modelplane: note")] == []
