"""`modelplane plan` previews a rollout under way, round by round, after the fleet plan."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from modelplane.fleet import plan_text
from modelplane_function.cli.main import main
from modelplane_function.cli.plan import plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rolling-update"
FILES = [EXAMPLE / f for f in ("xr.yaml", "required-resources.yaml", "observed-resources.yaml")]

# Two reconciles into the example's change: 2 of 3 replicas at the new revision and Ready, one old.
# The preview counts the surge as a new replica (it does not model renames beside old objects).
PREVIEW = """\
Rollout of team-chat/qwen3-8b to revision 1924947e5f (maxSurge 1, maxUnavailable 1), each change Ready by the next round:
  ROUND  NEW  UPDATED IN PLACE  REMOVED                        AVAILABLE  TOTAL  AT REVISION
  1      1    -                 -                              3 of 3     4      3
  2      0    -                 qwen3-8b-us-east-1-0-697fc206  3 of 3     3      3
  Complete after 2 rounds; at least 3 of 3 replicas available in every round.
"""


def test_the_plan_of_a_rollout_under_way_ends_with_its_rounds() -> None:
    got = CliRunner().invoke(main, ["plan", *map(str, FILES)])
    assert (got.exit_code, got.stdout, got.stderr) == (0, plan_text(plan(FILES).view) + PREVIEW, "")


def test_a_plan_without_old_replicas_previews_no_rollout() -> None:
    got = CliRunner().invoke(main, ["plan", *map(str, FILES[:2])])
    assert (got.exit_code, got.stdout) == (0, plan_text(plan(FILES[:2]).view))
