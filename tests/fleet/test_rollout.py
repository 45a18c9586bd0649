"""The fleet view during a rollout: each replica's revision, old ones marked, and the rollout's progress."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import pytest
from modelplane.fleet import DeploymentOutcome, FleetView, Origin, Rollout, build, build_plan, page, plan_page, text
from modelplane.model import ModelReplica
from modelplane_function.cli.main import fleet_for

from tests.fleet.factories import result
from tests.scheduler.factories import cluster, deployment, observed

DEP = deployment("llm", namespace="team-a", replicas=2)
OTHER = deployment("chat", namespace="team-b")
ROLLING = Rollout(
    revision="new",
    desired=2,
    updated=1,
    available=1,
    total=2,
    status="True",
    reason="RollingOut",
    message="Rolling out revision new: 1 updated, 1 available, 2 in all for 2 replicas.",
)


def _at(replica: ModelReplica, revision: str | None) -> ModelReplica:
    return replace(replica, revision=revision)


OURS_0 = observed(DEP, cluster="a", index=0, pools="h100")
OURS_1 = observed(DEP, cluster="a", index=1, pools="h100")
THEIRS = _at(observed(OTHER, cluster="a", index=0, pools="h100"), "old")


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    ours: tuple[ModelReplica, ...]
    rollout: Rollout | None
    want: tuple[tuple[str, str, bool], ...]  # (replica, revision, outdated) per chip, pool order


CASES = [
    Case(
        name="mid-rollout: the old-revision replica is outdated, another deployment's never is",
        ours=(_at(OURS_0, "old"), _at(OURS_1, "new")),
        rollout=ROLLING,
        want=(
            ("team-a/llm a#0", "old", True),
            ("team-a/llm a#1", "new", False),
            ("team-b/chat a#0", "old", False),
        ),
    ),
    Case(
        name="a replica without a revision label counts as current, as the rollout counts it",
        ours=(_at(OURS_0, None), _at(OURS_1, "new")),
        rollout=ROLLING,
        want=(
            ("team-a/llm a#0", "", False),
            ("team-a/llm a#1", "new", False),
            ("team-b/chat a#0", "old", False),
        ),
    ),
    Case(
        name="no rollout computed: revisions shown, none marked outdated",
        ours=(_at(OURS_0, "old"), _at(OURS_1, "new")),
        rollout=None,
        want=(
            ("team-a/llm a#0", "old", False),
            ("team-a/llm a#1", "new", False),
            ("team-b/chat a#0", "old", False),
        ),
    ),
]


def _view(case: Case) -> FleetView:
    return build(DEP, [cluster("a")], [THEIRS], result(desired=2, replicas=case.ours), rollout=case.rollout)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_chips_carry_revision_and_whether_it_is_outdated(case: Case) -> None:
    view = _view(case)
    chips = tuple((c.replica, c.revision, c.outdated) for cl in view.clusters for p in cl.pools for c in p.chips)
    assert (chips, view.rollout) == (case.want, case.rollout)


def test_page_marks_old_chips_and_states_the_progress() -> None:
    html = page(_view(CASES[0]))
    chips = re.findall(r'<li class="(chip [^"]*)"[^>]*>([^<]*)</li>', html)
    assert chips == [
        ("chip retained outdated", "team-a/llm a#0 main (retained, 1 node) rev old (old)"),
        ("chip retained", "team-a/llm a#1 main (retained, 1 node) rev new"),
        ("chip other", "team-b/chat a#0 main (1 node) rev old"),
    ]
    progress = "Rollout to revision new: 1 of 2 updated, 1 available, 2 in all. Progressing True: RollingOut."
    assert f'<p class="rollout True">{progress}</p>' in html
    assert "old</span>on an older revision, replaced as the rollout proceeds</li>" in html


NONE: frozenset[str] = frozenset()
ORIGINS = [
    pytest.param(NONE, NONE, NONE, (Origin.RETAINED, Origin.RETAINED), id="nothing done to either"),
    pytest.param(frozenset({OURS_0.name}), NONE, NONE, (Origin.UPDATED, Origin.RETAINED), id="one updated in place"),
    pytest.param(NONE, frozenset({OURS_1.name}), NONE, (Origin.RETAINED, Origin.LEAVING), id="one leaving"),
    pytest.param(
        frozenset({OURS_0.name}), frozenset({OURS_1.name}), NONE, (Origin.UPDATED, Origin.LEAVING), id="one of each"
    ),
    pytest.param(
        frozenset({OURS_0.name}),
        NONE,
        frozenset({OURS_0.name}),
        (Origin.REPLACING, Origin.RETAINED),
        id="one renamed beside its old objects",
    ),
]


@pytest.mark.parametrize(("updated", "leaving", "replacing", "want"), ORIGINS)
def test_chips_say_what_the_reconcile_does_as_explain_does(
    updated: frozenset[str], leaving: frozenset[str], replacing: frozenset[str], want: tuple[Origin, ...]
) -> None:
    ours = (_at(OURS_0, "new"), _at(OURS_1, "old"))
    view = build(
        DEP,
        [cluster("a")],
        [],
        result(desired=2, replicas=ours),
        rollout=ROLLING,
        updated=updated,
        leaving=leaving,
        replacing=replacing,
    )
    assert tuple(c.origin for cl in view.clusters for p in cl.pools for c in p.chips) == want


def test_page_without_a_rollout_has_no_rollout_line_nor_legend_entry() -> None:
    html = page(_view(CASES[2]))
    assert ('class="rollout' in html, "on an older revision" in html) == (False, False)


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rolling-update"


@cache
def _example() -> FleetView:
    view, failures = fleet_for(
        EXAMPLE / "xr.yaml",
        required=[EXAMPLE / "required-resources.yaml"],
        observed=[EXAMPLE / "observed-resources.yaml"],
    )
    assert failures == []
    return view


def test_rolling_update_example_view() -> None:
    view = _example()
    assert view.rollout is not None
    rev = view.rollout.revision
    chips = tuple(
        (c.replica, c.origin, c.revision == rev, c.outdated, c.nodes)
        for cl in view.clusters
        for p in cl.pools
        for c in p.chips
    )
    assert (chips, replace(view.rollout, revision="", message="")) == (
        (
            ("team-chat/qwen3-8b eu-west-1#0", Origin.RETAINED, True, False, 1),  # its rename done: old objects go
            ("team-chat/qwen3-8b eu-west-1#1", Origin.RETAINED, True, False, 1),
            ("team-chat/qwen3-8b us-east-1#0", Origin.REPLACING, True, False, 2),  # renamed beside its old objects
        ),
        Rollout(
            revision="",
            desired=3,
            updated=3,
            available=3,
            total=3,
            status="True",
            reason="RollingOut",
            message="",
            renaming=1,
        ),
    )
    assert view.rollout.message == f"Rolling out revision {rev}: 3 updated, 3 available, 3 in all for 3 replicas."


def test_rolling_update_example_page() -> None:
    view = _example()
    assert view.rollout is not None
    html = page(view)
    chips = re.findall(r'<li class="(chip [^"]*)"[^>]*>([^<]*)</li>', html)
    assert chips == [
        ("chip retained", "team-chat/qwen3-8b eu-west-1#0 main (retained, 1 node) rev 1924947e5f"),
        ("chip retained", "team-chat/qwen3-8b eu-west-1#1 main (retained, 1 node) rev 1924947e5f"),
        ("chip replacing", "team-chat/qwen3-8b us-east-1#0 main (replacing, 2 nodes) rev 1924947e5f"),
    ]
    assert f"Rollout to revision {view.rollout.revision}: 3 of 3 updated, 3 available, 3 in all." in html


def test_text_states_a_rename_under_way() -> None:
    view = _example()
    assert view.rollout is not None
    lines = text(view).splitlines()
    assert (lines[1], [line for line in lines if "old rev" in line]) == (
        f"Rollout to revision {view.rollout.revision}: 3 of 3 updated, 3 available, 3 in all. "
        "Progressing True: RollingOut.",
        [],
    )


QUIET = [
    pytest.param(replace(ROLLING, updated=2, available=2, reason="RolloutComplete"), id="complete"),
    pytest.param(replace(ROLLING, updated=2, available=0), id="first replicas coming up"),
]


@pytest.mark.parametrize("rollout", QUIET)
def test_text_is_quiet_when_no_old_revision_remains(rollout: Rollout) -> None:
    ours = (_at(OURS_0, "new"), _at(OURS_1, "new"))
    done = build(DEP, [cluster("a")], [THEIRS], result(desired=2, replicas=ours), rollout=rollout)
    without = build(DEP, [cluster("a")], [THEIRS], result(desired=2, replicas=ours))
    assert text(done) == text(without)


def test_text_states_a_halted_rollout_even_with_no_old_replica_left() -> None:
    halted = replace(ROLLING, updated=2, available=1, status="False", reason="ProgressDeadlineExceeded")
    ours = (_at(OURS_0, "new"), _at(OURS_1, "new"))
    view = build(DEP, [cluster("a")], [THEIRS], result(desired=2, replicas=ours), rollout=halted)
    assert text(view).splitlines()[1] == (
        "Rollout to revision new: 2 of 2 updated, 1 available, 2 in all. Progressing False: ProgressDeadlineExceeded."
    )


PLAN_CASES = [
    pytest.param(
        ROLLING,
        frozenset({OURS_1.name}),
        [
            ("chip retained outdated", "team-a/llm a#0 main (retained, 1 node) rev old (old)"),
            ("chip updated", "team-a/llm a#1 main (updated, 1 node) rev new"),
            ("chip other", "team-b/chat a#0 main (1 node) rev old"),
        ],
        True,
        id="mid-rollout: old and new revisions, the replica the plan updated in place",
    ),
    pytest.param(
        None,
        frozenset(),
        [
            ("chip retained", "team-a/llm a#0 main (retained, 1 node) rev old"),
            ("chip retained", "team-a/llm a#1 main (retained, 1 node) rev new"),
            ("chip other", "team-b/chat a#0 main (1 node) rev old"),
        ],
        False,
        id="no rollout computed: revisions shown, none old, no rollout legend",
    ),
]


@pytest.mark.parametrize(("rollout", "updated", "want", "legend"), PLAN_CASES)
def test_plan_page_shows_old_and_new_revisions(
    rollout: Rollout | None, updated: frozenset[str], want: list[tuple[str, str]], legend: bool
) -> None:
    ours = (_at(OURS_0, "old"), _at(OURS_1, "new"))
    view = build(DEP, [cluster("a")], [THEIRS], result(desired=2, replicas=ours), rollout=rollout)
    outcome = DeploymentOutcome(view=view, reason="Scheduled", message="Scheduled 2 of 2 replicas.")
    plan = build_plan(
        [cluster("a")], [*ours, THEIRS], [outcome], created=frozenset(), rounds=1, converged=True, updated=updated
    )
    html = plan_page(plan)
    chips = re.findall(r'<li class="(chip [^"]*)"[^>]*>([^<]*)</li>', html)
    assert (chips, "on an older revision, replaced as the rollout proceeds" in html) == (want, legend)
