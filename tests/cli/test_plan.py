"""`modelplane plan`: a directory of deployments reconciled against one fleet, golden and invariant."""

from __future__ import annotations

import random
import shutil
from functools import cache
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from modelplane.fleet import plan_page, plan_text
from modelplane_function.cli.main import main
from modelplane_function.cli.plan import Plan, plan
from modelplane_function.cli.render import output

from tests.validator import run_validator

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "fleet-plan"


@cache
def _plan() -> Plan:
    return plan([EXAMPLE])


def test_the_example_plan_is_its_golden_text(request: pytest.FixtureRequest) -> None:
    got = plan_text(_plan().view)
    golden = EXAMPLE / "expected.txt"
    if request.config.getoption("--update-golden"):
        golden.write_text(got)
    assert got == golden.read_text()


# docs/how-to/fleet-plan.md runs the command itself (tests/docs), so only the example's README is read here.
def test_the_readme_shows_the_golden_text() -> None:
    assert f"```text\n{(EXAMPLE / 'expected.txt').read_text()}```" in (EXAMPLE / "README.md").read_text()


def test_the_example_keeps_the_small_model_off_the_h200s_the_large_ones_need() -> None:
    # The 1-GPU qwen3-8b fits the L40S nodes; spreading a replica onto an H200 node would idle seven
    # of the only GPUs qwen3-235b can use.
    got = {
        f"{c.name}/{p.name}": [f"{chip.owner}#{chip.index}" for chip in p.chips]
        for c in _plan().view.clusters
        for p in c.pools
    }
    assert got == {
        "ap-south-1/l40s": ["team-search/embeddings#0", "team-search/embeddings#1"],
        "eu-west-1/a100": ["team-batch/mixtral-batch#0"],
        "us-east-1/h100": ["team-chat/llama-70b#0", "team-chat/llama-70b#1", "team-legacy/legacy#0"],
        "us-east-1/l40s": [
            "team-chat/qwen3-8b#0",
            "team-chat/qwen3-8b#1",
            "team-chat/qwen3-8b#2",
            "team-search/embeddings#0",
            "team-search/embeddings#1",
        ],
        "us-west-2/a100": ["team-batch/mixtral-batch#0", "team-batch/mixtral-batch#1"],
        "us-west-2/h200": [
            "team-research/deepseek-v3#0",
            "team-research/deepseek-v3#1",
            "team-research/qwen3-235b#0",
            "team-research/qwen3-235b#1",
        ],
    }


def test_the_command_prints_the_plan_names_the_shortfall_and_exits_4() -> None:
    got = CliRunner().invoke(main, ["plan", str(EXAMPLE)])
    shortfall = [f.line() for f in _plan().failures]
    assert (got.exit_code, got.stdout, got.stderr.splitlines()) == (
        4,
        plan_text(_plan().view),
        [f"modelplane: {line}" for line in shortfall],
    )


def test_allow_partial_exits_0_and_html_goes_to_the_out_file(tmp_path: Path) -> None:
    out = tmp_path / "plan.html"
    got = CliRunner().invoke(main, ["plan", str(EXAMPLE), "-o", "html", "--out", str(out), "--allow-partial"])
    assert (got.exit_code, got.stdout, got.stderr, out.read_text()) == (0, "", "", plan_page(_plan().view))


def test_a_plan_that_has_not_settled_says_so_and_exits_5() -> None:
    got = CliRunner().invoke(main, ["plan", str(EXAMPLE), "--max-rounds", "1", "--allow-partial"])
    assert (got.exit_code, got.stderr) == (5, "modelplane: the plan did not settle in 1 rounds\n")


def test_every_replica_of_the_plan_fits_its_pool() -> None:
    over = [(c.name, p.name, p.used, p.nodes) for c in _plan().view.clusters for p in c.pools if p.free < 0]
    assert over == []


def test_the_plan_does_not_depend_on_the_order_of_files_or_documents(tmp_path: Path) -> None:
    docs = [d for f in sorted(EXAMPLE.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
    random.Random(7).shuffle(docs)
    shuffled = tmp_path / "all.yaml"
    shuffled.write_text(yaml.safe_dump_all(docs))
    got = plan([shuffled])
    assert (plan_text(got.view), got.stream) == (plan_text(_plan().view), _plan().stream)


def test_existing_replicas_of_a_planned_deployment_are_kept_where_they_are(tmp_path: Path) -> None:
    # Feed the plan's own result back: every replica is retained, nothing moves, one round settles.
    for f in EXAMPLE.glob("*.yaml"):
        shutil.copy(f, tmp_path / f.name)
    replicas = [d for d in _plan().stream if d["kind"] == "ModelReplica" and "deployment" in str(d["metadata"])]
    (tmp_path / "placed.yaml").write_text(output.dump(replicas))
    again = plan([tmp_path])
    placed = sorted((d["metadata"]["name"], d["spec"]["clusterName"]) for d in replicas)
    got = sorted((d["metadata"]["name"], d["spec"]["clusterName"]) for d in again.stream if d["kind"] == "ModelReplica")
    assert (got, again.view.rounds, again.view.placed) == (placed, 2, _plan().view.placed)


def test_the_yaml_output_validates(tmp_path: Path) -> None:
    out = tmp_path / "plan.yaml"
    out.write_text(output.dump(_plan().stream))
    run = run_validator(out)
    assert run.returncode == 0, run.stdout + run.stderr
