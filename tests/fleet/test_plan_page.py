"""The fleet plan's HTML page: a legend, replicas named by cluster and index, long names kept whole."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from modelplane.fleet import DeploymentOutcome, build, build_plan, plan_page
from modelplane.fleet.page import CSS

from tests.fleet.factories import result
from tests.scheduler.factories import cluster, deployment, observed

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
