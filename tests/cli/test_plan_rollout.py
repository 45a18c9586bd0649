"""`modelplane plan` previews a rollout under way, round by round, after the fleet plan."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from modelplane.fleet import plan_text
from modelplane_function.cli.main import main
from modelplane_function.cli.plan import plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rolling-update"
FILES = [EXAMPLE / f for f in ("xr.yaml", "required-resources.yaml", "observed-resources.yaml")]

# Two reconciles into the example's change: 2 of 3 replicas at the new revision and Ready, one old
# whose pool has room to run its renamed LLMInferenceService beside the old one.
PREVIEW = """\
Rollout of team-chat/qwen3-8b to revision 1924947e5f (maxSurge 1, maxUnavailable 1), one reconcile a round:
  Assumes each round's replicas become Ready before the next, except on clusters that are not Ready,
  and the rest of the fleet stays as observed; new replicas go only where the scheduler finds room.
  ROUND  NEW  UPDATED IN PLACE               REMOVED  AVAILABLE  TOTAL  AT REVISION
  1      -    qwen3-8b-us-east-1-0-697fc206  -        3 of 3     3      3
  Complete after 1 round; at least 3 of 3 replicas available in every round.
"""


def test_the_plan_of_a_rollout_under_way_ends_with_its_rounds() -> None:
    got = CliRunner().invoke(main, ["plan", *map(str, FILES)])
    assert (got.exit_code, got.stdout, got.stderr) == (0, plan_text(plan(FILES).view) + PREVIEW, "")


def test_a_plan_without_old_replicas_previews_no_rollout() -> None:
    got = CliRunner().invoke(main, ["plan", *map(str, FILES[:2])])
    assert (got.exit_code, got.stdout) == (0, plan_text(plan(FILES[:2]).view))
