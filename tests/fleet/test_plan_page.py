"""The fleet plan's HTML page: a legend, replicas named by cluster and index, long names kept whole, the gap."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser

import pytest
from modelplane.fleet import DeploymentOutcome, blockers, build, build_plan, plan_page
from modelplane.fleet.page import CSS
from modelplane.model import Cluster, Deployment, ModelReplica, PoolPacking

from tests.fleet.factories import result
from tests.scheduler.factories import cluster, deployment, engine, is_model, member, observed, pool, request

LONG_NAME = "qwen3-235b-a22b-instruct-2507-fp8-long-context-evaluation"
CHAT = deployment("chat", namespace="team-a", replicas=2)
LONG = deployment(LONG_NAME, namespace="team-research", replicas=1)
LEGACY = deployment("legacy", namespace="team-old")
CHAT_A0 = observed(CHAT, cluster="a", index=0, pools="h100")
CHAT_B0 = observed(CHAT, cluster="b", index=0, pools="h100")
LONG_A1 = observed(LONG, cluster="a", index=1, pools="h100")
LEGACY_B1 = observed(LEGACY, cluster="b", index=1, pools="h100")
CLUSTERS = [cluster("a"), cluster("b")]


def _page() -> str:
    chat = build(CHAT, CLUSTERS, [], result(desired=2, created=[CHAT_A0, CHAT_B0], total_clusters=2))
    long = build(LONG, CLUSTERS, [], result(desired=1, replicas=[LONG_A1], total_clusters=2))
    plan = build_plan(
        CLUSTERS,
        [CHAT_A0, CHAT_B0, LONG_A1, LEGACY_B1],
        [
            DeploymentOutcome(view=chat, reason="Scheduled", message="Scheduled 2 of 2 replicas."),
            DeploymentOutcome(view=long, reason="Scheduled", message="Scheduled 1 of 1 replicas."),
        ],
        created=frozenset({CHAT_A0.name, CHAT_B0.name}),
        rounds=1,
        converged=True,
    )
    return plan_page(plan)


@dataclass
class _Texts(HTMLParser):
    """The text of every element with a given class, and of each <li> of the legend."""

    wanted: str
    found: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    legend: list[str] = field(default_factory=list)
    _depth: int = 0  # > 0 inside a wanted element
    _in_legend: int = 0
    _li: list[str] | None = None

    def __post_init__(self) -> None:
        super().__init__()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "ul" and "legend" in classes:
            self._in_legend = 1
        elif self._in_legend and tag == "li":
            self._li = []
        if self._depth:
            self._depth += 1
        elif self.wanted in classes:
            self._depth = 1
            self.found.append("")
            self.titles.append(dict(attrs).get("title") or "")

    def handle_endtag(self, tag: str) -> None:
        if self._depth:
            self._depth -= 1
        if self._in_legend and tag == "li" and self._li is not None:
            self.legend.append("".join(self._li))
            self._li = None
        elif self._in_legend and tag == "ul":
            self._in_legend = 0

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.found[-1] += data
        if self._li is not None:
            self._li.append(data)


def _texts(page: str, wanted: str) -> _Texts:
    parser = _Texts(wanted=wanted)
    parser.feed(page)
    return parser


def test_the_legend_names_every_deployment_and_every_mark() -> None:
    assert _texts(_page(), "chip").legend == [
        "team-a/chat",
        f"team-research/{LONG_NAME}",
        "team-old/legacy (not in the plan: its nodes are charged)",
        "newplaced by this plan",
        "retainedkept where it was",
        "othera replica of a deployment outside the plan",
        "chip: deployment, cluster#index, engines (nodes)",
        "free node",
        "not Readytakes no new replica",
        "taintonly tolerating deployments land there",
    ]


def test_each_replica_is_named_by_its_cluster_and_index_and_the_tip_holds_its_name() -> None:
    chips = _texts(_page().split('<table class="fleet">', 1)[1], "chip")
    assert list(zip(chips.found, chips.titles, strict=True)) == [
        ("team-a/chat a#0 main (new, 1 node)", f"team-a/chat a#0 main (new, 1 node): ModelReplica {CHAT_A0.name}"),
        (
            f"team-research/{LONG_NAME} a#1 main (retained, 1 node)",
            f"team-research/{LONG_NAME} a#1 main (retained, 1 node): ModelReplica {LONG_A1.name}",
        ),
        ("team-a/chat b#0 main (new, 1 node)", f"team-a/chat b#0 main (new, 1 node): ModelReplica {CHAT_B0.name}"),
        (
            "team-old/legacy b#1 main (1 node)",
            f"team-old/legacy b#1 main (1 node): ModelReplica {LEGACY_B1.name}",
        ),
    ]


def test_a_deployment_name_breaks_only_after_its_namespace_and_a_cluster_entry_never() -> None:
    # Each unbreakable part in its own span: a browser breaks "team-research/deepseek-v3" at its hyphens.
    assert _texts(_page(), "nowrap").found == ["team-a/", "chat", "a", "b", "team-research/", LONG_NAME, "a"]


def _rule(css: str, selector: str) -> set[str]:
    match = re.search(r"(?:^|[}\n])" + re.escape(selector) + r"\{([^}]*)\}", css)
    return set(match[1].replace("\n", "").split(";")) if match else set()


def test_a_chip_keeps_to_one_line_cut_short_rather_than_broken_over_two() -> None:
    assert {"white-space:nowrap", "overflow:hidden", "text-overflow:ellipsis", "max-width:100%"} - _rule(
        CSS, ".chip"
    ) == set()


# The gap: GPUs claimed and idle on held nodes, and for a deployment left short the replicas that
# hold the pools it could use (the same figures as the text plan).
SMALL = deployment("small", namespace="team-b", engines=[engine(members=[member(requests=[request(count=1)])])])
BIG = deployment(
    "big",
    namespace="team-a",
    replicas=2,
    engines=[engine(members=[member(requests=[request(selectors=[is_model("H200")])])])],
)
H200 = pool("h200", nodes=2, model="H200")
SHARED_H200 = replace(H200, packing=PoolPacking.DEVICES)


@dataclass(frozen=True, kw_only=True)
class GapCase:
    name: str
    clusters: Sequence[Cluster]
    placed: Sequence[tuple[Deployment, Sequence[ModelReplica]]]  # each planned deployment and its replicas
    others: Sequence[ModelReplica] = ()  # replicas of deployments outside the plan
    want: tuple[list[str], list[str], list[str]]  # the GPU line, the blocked headings, the blockers


GAP_CASES = [
    GapCase(
        name="a fully placed plan shows its GPUs and no blockers",
        clusters=[cluster("a", pools=[H200])],
        placed=[
            (
                BIG,
                [observed(BIG, cluster="a", index=0, pools="h200"), observed(BIG, cluster="a", index=1, pools="h200")],
            )
        ],
        want=(["GPUs: 16 claimed (100% of the fleet's 16); 0 more idle on the nodes replicas hold."], [], []),
    ),
    GapCase(
        name="a deployment left short names the replicas holding the pools it could use, and only those",
        clusters=[cluster("a", pools=[pool("h100", nodes=1), H200])],
        placed=[
            (BIG, [observed(BIG, cluster="a", index=0, pools="h200")]),
            (SMALL, [observed(SMALL, cluster="a", index=0, pools="h200")]),  # placed in full: nothing listed
        ],
        others=[observed(deployment("chat", namespace="team-c"), cluster="a", index=0, pools="h100")],
        want=(
            ["GPUs: 17 claimed (70% of the fleet's 24); 7 more idle on the nodes replicas hold."],
            ["Held by other deployments' replicas on the pools it could use:"],
            ["team-b/small#0 on a/h200 (1 node)"],
        ),
    ),
    GapCase(
        name="on a shared pool a blocker is counted in devices and fills nodes by them",
        clusters=[cluster("a", pools=[SHARED_H200])],
        placed=[(BIG, [observed(BIG, cluster="a", index=0, pools="h200")])],
        others=[observed(SMALL, cluster="a", index=0, pools="h200")],
        want=(
            ["GPUs: 9 claimed (56% of the fleet's 16); 7 more idle on the nodes replicas hold."],
            ["Held by other deployments' replicas on the pools it could use:"],
            ["team-b/small#0 on a/h200 (1 device)"],
        ),
    ),
]


def _gap_page(case: GapCase) -> str:
    fleet = [*case.others, *(r for _, replicas in case.placed for r in replicas)]
    outcomes: list[DeploymentOutcome] = []
    for dep, replicas in case.placed:
        view = build(dep, case.clusters, [], result(desired=dep.replicas, created=replicas))
        short = view.placed < view.desired
        outcomes.append(
            DeploymentOutcome(
                view=view,
                reason="InsufficientCapacity" if short else "Scheduled",
                message=f"Scheduled {view.placed} of {view.desired} replicas.",
                blocked_by=blockers(dep, case.clusters, fleet) if short else (),
            )
        )
    created = frozenset(r.name for _, replicas in case.placed for r in replicas)
    return plan_page(build_plan(case.clusters, fleet, outcomes, created=created, rounds=2, converged=True))


@pytest.mark.parametrize("case", GAP_CASES, ids=lambda c: c.name)
def test_the_page_shows_the_gap(case: GapCase) -> None:
    page = _gap_page(case)
    got = (_texts(page, "gpus").found, _texts(page, "blocked").found, _texts(page, "blocker").found)
    assert got == case.want
