"""`modelplane render --explain` previews a rollout under way round by round, as `modelplane plan` does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelplane_function.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rolling-update"
REVISION = "1924947e5f"  # the example's template revision
HEAD = f"Rollout of team-chat/qwen3-8b to revision {REVISION} (maxSurge 1, maxUnavailable 1), one reconcile a round:"
ASSUMES = """\
  Assumes each round's replicas become Ready before the next, except on clusters that are not Ready,
  and the rest of the fleet stays as observed; new replicas go only where the scheduler finds room.
"""

Edit = Callable[[list[dict[str, Any]]], None]


def _untouched(_: list[dict[str, Any]]) -> None:
    pass


def _paused(docs: list[dict[str, Any]]) -> None:
    docs[0]["spec"]["rollout"] = {"paused": True}


def _halted(docs: list[dict[str, Any]]) -> None:
    # What the function wrote when the deadline passed with these replicas as they are.
    docs[0]["status"] = {
        "revision": REVISION,
        "replicas": {"total": 4, "ready": 3, "updated": 2, "available": 3},
        "conditions": [
            {
                "type": "Progressing",
                "status": "False",
                "reason": "ProgressDeadlineExceeded",
                "message": "Revision made no progress.",
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        ],
    }


def _surge_two(docs: list[dict[str, Any]]) -> None:
    docs[0]["spec"]["rollout"] = {"maxSurge": 2}


def _drained(docs: list[dict[str, Any]]) -> None:
    us_east = next(d for d in docs if d["metadata"]["name"] == "us-east-1")
    us_east["spec"]["taints"] = [{"key": "drain", "value": "maintenance", "effect": "NoExecute"}]


def _full(docs: list[dict[str, Any]]) -> None:
    # Each pool holds exactly the replicas on it: there is no free node anywhere for a surge.
    for d in (d for d in docs if d["kind"] == "InferenceCluster"):
        for pool in d["spec"]["nodePools"]:
            pool["nodes"] = {"a100": 2, "h100": 1}.get(pool["name"], 0)


@dataclass(frozen=True)
class Case:
    name: str
    want: str  # stderr from the preview's heading on
    xr: Edit = _untouched
    fleet: Edit = _untouched


CASES = [
    Case(
        "the example: the last old replica renamed beside its old LLMInferenceService, none goes down",
        want=f"""\
{HEAD}
{ASSUMES}\
  ROUND  NEW  UPDATED IN PLACE               REMOVED  AVAILABLE  TOTAL  AT REVISION
  1      -    qwen3-8b-us-east-1-0-697fc206  -        3 of 3     3      3
  Complete after 1 round; at least 3 of 3 replicas available in every round.
""",
    ),
    Case(
        "us-east-1 drained: a successor on eu-west-1's free node first, then its replica leaves",
        fleet=_drained,
        want=f"""\
{HEAD}
{ASSUMES}\
  ROUND  NEW                            UPDATED IN PLACE  REMOVED                                                      AVAILABLE  TOTAL  AT REVISION
  1      qwen3-8b-eu-west-1-2-004faf88  -                 -                                                            3 of 3     4      3
  2      -                              -                 qwen3-8b-us-east-1-0-697fc206 (untolerated NoExecute taint)  3 of 3     3      3
  Complete after 2 rounds; at least 3 of 3 replicas available in every round.
""",
    ),
    Case(
        "maxSurge 2 and free nodes: still one rename beside the old objects, no surge replica",
        xr=_surge_two,
        want=f"""\
{HEAD.replace("maxSurge 1", "maxSurge 2")}
{ASSUMES}\
  ROUND  NEW  UPDATED IN PLACE               REMOVED  AVAILABLE  TOTAL  AT REVISION
  1      -    qwen3-8b-us-east-1-0-697fc206  -        3 of 3     3      3
  Complete after 1 round; at least 3 of 3 replicas available in every round.
""",
    ),
    Case(
        "maxSurge 2 and no free node anywhere: no surge replica, the old one updates in place",
        xr=_surge_two,
        fleet=_full,
        want=f"""\
{HEAD.replace("maxSurge 1", "maxSurge 2")}
{ASSUMES}\
  ROUND  NEW  UPDATED IN PLACE               REMOVED  AVAILABLE  TOTAL  AT REVISION
  1      -    qwen3-8b-us-east-1-0-697fc206  -        2 of 3     3      3
  Complete after 1 round; at least 2 of 3 replicas available in every round.
""",
    ),
    Case(
        "paused: said, no rounds",
        xr=_paused,
        want=f"""\
{HEAD}
  Paused (spec.rollout.paused): no round changes anything until it is unpaused.
""",
    ),
    Case(
        "halted past its progress deadline: said, no rounds",
        xr=_halted,
        want=f"""\
{HEAD}
  Halted (ProgressDeadlineExceeded): no round changes anything until spec.template is fixed or reverted.
""",
    ),
]


def _edited(tmp_path: Path, name: str, edit: Edit) -> Path:
    docs = list(yaml.safe_load_all((EXAMPLE / name).read_text()))
    edit(docs)
    out = tmp_path / name
    out.write_text(yaml.safe_dump_all(docs))
    return out


def _explain(tmp_path: Path, case: Case) -> str:
    xr = _edited(tmp_path, "xr.yaml", case.xr)
    fleet = _edited(tmp_path, "required-resources.yaml", case.fleet)
    observed = EXAMPLE / "observed-resources.yaml"
    args = ["render", str(xr), "-e", str(fleet), "--observed-resources", str(observed), "--explain"]
    got = CliRunner().invoke(main, args)
    assert got.exit_code == 0, got.stderr
    return got.stderr


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_explain_ends_with_the_rollout_preview(tmp_path: Path, case: Case) -> None:
    stderr = _explain(tmp_path, case)
    before, heading, preview = stderr.partition(case.want.splitlines()[0])
    assert (before.splitlines()[-1].startswith("  "), heading + preview) == (True, case.want)


def test_explain_and_plan_print_the_same_preview(tmp_path: Path) -> None:
    files = [str(EXAMPLE / f) for f in ("xr.yaml", "required-resources.yaml", "observed-resources.yaml")]
    planned = CliRunner().invoke(main, ["plan", *files]).stdout
    explained = _explain(tmp_path, CASES[0])
    assert planned[planned.index(HEAD) :] == explained[explained.index(HEAD) :]


def test_explain_of_a_deployment_at_rest_previews_nothing() -> None:
    quickstart = EXAMPLE.parent / "quickstart"
    args = ["render", str(quickstart / "xr.yaml"), "-e", str(quickstart / "required-resources.yaml"), "--explain"]
    got = CliRunner().invoke(main, args)
    assert (got.exit_code, "Rollout of" in got.stderr) == (0, False)
