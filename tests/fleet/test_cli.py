"""`modelplane fleet` and `modelplane render --explain`: the fleet view on the command line."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner
from modelplane.fleet import page, pool_table, text
from modelplane_function.cli.main import fleet_for, main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "taints-drain"  # observed replicas, a removal, taints: the richest fleet
XR = EXAMPLE / "xr.yaml"
REQUIRED = EXAMPLE / "required-resources.yaml"
OBSERVED = EXAMPLE / "observed-resources.yaml"
INPUTS = ["-e", str(REQUIRED), "--observed-resources", str(OBSERVED)]


@cache
def _view():
    view, failures = fleet_for(XR, required=[REQUIRED], observed=[OBSERVED])
    assert failures == []
    return view


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    args: list[str]
    want_stdout: str
    want_file: str | None = None  # what --out receives


CASES = [
    Case(name="text is the default and goes to stdout", args=[], want_stdout=text(_view())),
    Case(name="html goes to stdout without --out", args=["--output", "html"], want_stdout=page(_view())),
    Case(name="-o is the output format, as in kubectl", args=["-o", "html"], want_stdout=page(_view())),
    Case(
        name="html goes to the --out file and nothing is printed",
        args=["--output", "html", "--out", "OUT"],
        want_stdout="",
        want_file=page(_view()),
    ),
    Case(
        name="text can go to a file too",
        args=["--output", "text", "--out", "OUT"],
        want_stdout="",
        want_file=text(_view()),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fleet_command(case: Case, tmp_path: Path) -> None:
    out = tmp_path / "fleet.out"
    args = [str(out) if a == "OUT" else a for a in case.args]
    got = CliRunner().invoke(main, ["fleet", str(XR), *INPUTS, *args])
    written = out.read_text() if out.is_file() else None
    assert (got.exit_code, got.stdout, written) == (0, case.want_stdout, case.want_file)


def test_fleet_refuses_an_xr_that_is_not_a_model_deployment(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("apiVersion: modelplane.ai/v1alpha1\nkind: InferenceCluster\nmetadata: {name: a}\nspec: {}\n")
    got = CliRunner().invoke(main, ["fleet", str(cluster)])
    want = f"Error: {cluster}: fleet takes a ModelDeployment, got kind 'InferenceCluster'\n"
    assert (got.exit_code, got.stdout, got.stderr) == (1, "", want)


def test_fleet_runs_as_an_installed_command(tmp_path: Path) -> None:
    modelplane = str(Path(sys.executable).parent / "modelplane")
    out = tmp_path / "fleet.html"
    run = subprocess.run(
        [modelplane, "fleet", str(XR), *INPUTS, "--output", "html", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (run.returncode, run.stdout, run.stderr, out.read_text()) == (0, "", "", page(_view()))


def test_render_explain_ends_with_the_pool_table() -> None:
    got = CliRunner().invoke(main, ["render", str(XR), "-e", str(REQUIRED), "-o", str(OBSERVED), "--explain"])
    tail = ["Fleet after this placement (nodes per pool):", *pool_table(_view())]
    lines = got.stderr.splitlines()
    assert (got.exit_code, lines[-len(tail) :]) == (0, tail)
