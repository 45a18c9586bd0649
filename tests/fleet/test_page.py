"""The fleet HTML page: every input string escaped, nothing loaded from anywhere, stable colours."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from modelplane.fleet import FleetView, build, page
from modelplane.fleet.page import colours
from modelplane.scheduler import RemovedReplica

from tests.fleet.factories import rejected, result, score
from tests.scheduler.factories import cluster, deployment, observed, pool, taint

HOSTILE_NS = 'a&b"c'
HOSTILE_DEP = deployment("<dep>", namespace=HOSTILE_NS, replicas=2)
HOSTILE_CLUSTER = "<img src=x onerror=alert(1)>"
HOSTILE_POOL = "</style><script>alert(2)</script>"
HOSTILE_TAINT = "k'ey"
HOSTILE_REASON = "<script src=https://evil.example/x.js></script>"
HOSTILE_DETAIL = "detail & <b>bold</b>"
HOSTILE_REMOVED = "gone<i>"


def _hostile() -> FleetView:
    ours = observed(HOSTILE_DEP, cluster=HOSTILE_CLUSTER, index=0, pools=HOSTILE_POOL)
    return build(
        HOSTILE_DEP,
        [cluster(HOSTILE_CLUSTER, pools=[pool(HOSTILE_POOL)], taints=[taint(HOSTILE_TAINT, value="<v>")])],
        [],
        result(
            desired=2,
            created=[ours],
            removed=[RemovedReplica(name=HOSTILE_REMOVED, cluster=HOSTILE_CLUSTER, index=1, reason="<why>")],
            statuses={HOSTILE_CLUSTER: rejected(HOSTILE_REASON, HOSTILE_DETAIL)},
            scores=[score(HOSTILE_CLUSTER, 1, **{"<k>": 1})],
        ),
    )


def _plain() -> FleetView:
    dep = deployment("llm", namespace="team-a", replicas=1)
    return build(
        dep,
        [cluster("a"), cluster("b", ready=False, pools=[])],
        [observed(deployment("chat", namespace="team-b"), cluster="a", index=0, pools="h100")],
        result(desired=1, created=[observed(dep, cluster="a", index=0, pools="h100")], total_clusters=2),
    )


@dataclass(frozen=True, kw_only=True)
class Escape:
    name: str
    raw: str
    escaped: str


ESCAPES = [
    Escape(name="the namespace, quotes and ampersand included", raw=HOSTILE_NS, escaped="a&amp;b&quot;c"),
    Escape(name="the deployment name", raw="<dep>", escaped="&lt;dep&gt;"),
    Escape(name="a cluster name", raw=HOSTILE_CLUSTER, escaped="&lt;img src=x onerror=alert(1)&gt;"),
    Escape(name="a pool name", raw=HOSTILE_POOL, escaped="&lt;/style&gt;&lt;script&gt;alert(2)&lt;/script&gt;"),
    Escape(name="a taint", raw="k'ey=<v>:NoSchedule", escaped="k&#x27;ey=&lt;v&gt;:NoSchedule"),
    Escape(
        name="a rejection reason",
        raw=HOSTILE_REASON,
        escaped="&lt;script src=https://evil.example/x.js&gt;&lt;/script&gt;",
    ),
    Escape(name="a rejection detail", raw=HOSTILE_DETAIL, escaped="detail &amp; &lt;b&gt;bold&lt;/b&gt;"),
    Escape(name="a removed replica and its reason", raw="gone<i> from", escaped="gone&lt;i&gt; from"),
    Escape(name="a scorer name", raw="<th><k></th>", escaped="<th>&lt;k&gt;</th>"),
]


@pytest.mark.parametrize("case", ESCAPES, ids=lambda c: c.name)
def test_every_input_string_is_escaped(case: Escape) -> None:
    html = page(_hostile())
    assert (case.raw in html, case.escaped in html) == (False, True)


@dataclass(frozen=True, kw_only=True)
class Contained:
    name: str
    view: FleetView


CONTAINED = [
    Contained(name="a plain fleet", view=_plain()),
    Contained(name="a fleet whose every string is hostile markup", view=_hostile()),
]
# What would make the page load something or run something: the only ones allowed are the
# escaped copies of input strings, which the browser shows as text.
_LOADERS = re.compile(r"https?://|<script|<link|<img|<iframe|<object|<embed|\bsrc=|@import|url\(", re.IGNORECASE)


@pytest.mark.parametrize("case", CONTAINED, ids=lambda c: c.name)
def test_the_page_is_self_contained(case: Contained) -> None:
    html = page(case.view)
    markup = re.sub(r"&lt;.*?&gt;|https?://evil\.example\S*", "", html)  # drop escaped input text
    assert (
        _LOADERS.findall(markup),
        html.startswith("<!DOCTYPE html>\n"),
        html.count("<style>"),
        html.endswith("</html>\n"),
    ) == ([], True, 1, True)


def test_each_deployment_gets_its_own_colour_this_one_first() -> None:
    dep = deployment("llm", namespace="team-a")
    others = [deployment("x", namespace="team-c"), deployment("y", namespace="team-b")]
    view = build(
        dep,
        [cluster("a", pools=[pool("h100", nodes=8)])],
        [observed(o, cluster="a", index=0, pools="h100") for o in others],
        result(desired=1, created=[observed(dep, cluster="a", index=0, pools="h100")]),
    )
    assert colours(view) == {
        "team-a/llm": "hsl(210 55% 40%)",
        "team-b/y": "hsl(347 55% 40%)",
        "team-c/x": "hsl(124 55% 40%)",
    }
