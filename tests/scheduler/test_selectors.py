"""Label selectors, tolerations and tenant admission with Kubernetes semantics."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.errors import SpecError
from modelplane.model import LabelSelector, Taint, TaintEffect, Toleration
from modelplane.scheduler.selectors import admits_namespace, selector_matches, tolerates

from tests.scheduler.factories import cluster, requirement, selector, taint, toleration

NO_EXECUTE = TaintEffect.NO_EXECUTE
NO_SCHEDULE = TaintEffect.NO_SCHEDULE


@dataclass(frozen=True)
class SelectorCase:
    name: str
    selector: LabelSelector
    labels: dict[str, str]
    want: bool


SELECTOR_CASES = [
    SelectorCase("the empty selector matches any labels", selector(), {"region": "eu"}, want=True),
    SelectorCase(
        "matchLabels matches equal values", selector(labels={"region": "eu"}), {"region": "eu", "x": "y"}, want=True
    ),
    SelectorCase("matchLabels rejects another value", selector(labels={"region": "eu"}), {"region": "us"}, want=False),
    SelectorCase("matchLabels rejects a missing key", selector(labels={"region": "eu"}), {}, want=False),
    SelectorCase(
        "In matches a listed value",
        selector(expressions=[requirement("tier", "In", "a", "b")]),
        {"tier": "b"},
        want=True,
    ),
    SelectorCase("In rejects a missing key", selector(expressions=[requirement("tier", "In", "a")]), {}, want=False),
    SelectorCase(
        "NotIn rejects a listed value",
        selector(expressions=[requirement("tier", "NotIn", "a")]),
        {"tier": "a"},
        want=False,
    ),
    SelectorCase(
        "NotIn matches a missing key", selector(expressions=[requirement("tier", "NotIn", "a")]), {}, want=True
    ),
    SelectorCase(
        "Exists matches any value", selector(expressions=[requirement("gpu", "Exists")]), {"gpu": ""}, want=True
    ),
    SelectorCase("Exists rejects a missing key", selector(expressions=[requirement("gpu", "Exists")]), {}, want=False),
    SelectorCase(
        "DoesNotExist rejects a present key",
        selector(expressions=[requirement("gpu", "DoesNotExist")]),
        {"gpu": "x"},
        want=False,
    ),
    SelectorCase(
        "labels and expressions must all hold",
        selector(labels={"region": "eu"}, expressions=[requirement("tier", "In", "gold")]),
        {"region": "eu", "tier": "silver"},
        want=False,
    ),
]


@pytest.mark.parametrize("case", SELECTOR_CASES, ids=lambda c: c.name)
def test_selector_matches(case: SelectorCase) -> None:
    assert selector_matches(case.selector, case.labels) is case.want


def test_an_unknown_operator_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="'Gt'"):
        selector_matches(selector(expressions=[requirement("n", "Gt", "1")]), {"n": "2"})


@dataclass(frozen=True)
class TolerationCase:
    name: str
    toleration: Toleration
    taint: Taint
    want: bool


TOLERATION_CASES = [
    TolerationCase(
        "Equal with the same key, value and effect tolerates",
        toleration("gpu", value="x", effect=NO_SCHEDULE),
        taint("gpu", value="x"),
        want=True,
    ),
    TolerationCase(
        "Equal with another value does not tolerate", toleration("gpu", value="y"), taint("gpu", value="x"), want=False
    ),
    TolerationCase("Equal with no value tolerates a taint with no value", toleration("gpu"), taint("gpu"), want=True),
    TolerationCase(
        "Exists ignores the value", toleration("gpu", operator="Exists"), taint("gpu", value="x"), want=True
    ),
    TolerationCase(
        "Exists with another key does not tolerate", toleration("gpu", operator="Exists"), taint("spot"), want=False
    ),
    TolerationCase(
        "an empty key with Exists tolerates every taint",
        toleration(operator="Exists"),
        taint("any", value="v", effect=NO_EXECUTE),
        want=True,
    ),
    TolerationCase(
        "an empty effect tolerates NoExecute too",
        toleration("gpu", operator="Exists"),
        taint("gpu", effect=NO_EXECUTE),
        want=True,
    ),
    TolerationCase(
        "a NoSchedule toleration does not tolerate NoExecute",
        toleration("gpu", operator="Exists", effect=NO_SCHEDULE),
        taint("gpu", effect=NO_EXECUTE),
        want=False,
    ),
    TolerationCase(
        "a NoExecute toleration does not tolerate NoSchedule",
        toleration("gpu", operator="Exists", effect=NO_EXECUTE),
        taint("gpu", effect=NO_SCHEDULE),
        want=False,
    ),
]


@pytest.mark.parametrize("case", TOLERATION_CASES, ids=lambda c: c.name)
def test_tolerates(case: TolerationCase) -> None:
    assert tolerates(case.toleration, case.taint) is case.want


@dataclass(frozen=True)
class AdmissionCase:
    name: str
    allowed_namespaces: tuple[str, ...] | None
    allowed_selector: LabelSelector | None
    namespace: str
    namespace_labels: dict[str, str]
    want: bool


ADMISSION_CASES = [
    AdmissionCase("no restriction admits every namespace", None, None, "team-a", {}, want=True),
    AdmissionCase("a listed namespace is admitted", ("team-a",), None, "team-a", {}, want=True),
    AdmissionCase("an unlisted namespace is refused", ("team-b",), None, "team-a", {}, want=False),
    AdmissionCase("an empty list refuses every namespace", (), None, "team-a", {}, want=False),
    AdmissionCase(
        "a namespace whose labels match the selector is admitted",
        None,
        selector(labels={"tenant": "gold"}),
        "team-a",
        {"tenant": "gold"},
        want=True,
    ),
    AdmissionCase(
        "a namespace whose labels miss the selector is refused",
        None,
        selector(labels={"tenant": "gold"}),
        "team-a",
        {"tenant": "free"},
        want=False,
    ),
    AdmissionCase(
        "the selector admits what the list does not",
        ("team-b",),
        selector(labels={"tenant": "gold"}),
        "team-a",
        {"tenant": "gold"},
        want=True,
    ),
    AdmissionCase(
        "the list admits what the selector does not",
        ("team-a",),
        selector(labels={"tenant": "gold"}),
        "team-a",
        {},
        want=True,
    ),
    AdmissionCase(
        "neither admitting refuses", ("team-b",), selector(labels={"tenant": "gold"}), "team-a", {}, want=False
    ),
]


@pytest.mark.parametrize("case", ADMISSION_CASES, ids=lambda c: c.name)
def test_admits_namespace(case: AdmissionCase) -> None:
    c = cluster("a", allowed_namespaces=case.allowed_namespaces, allowed_namespace_selector=case.allowed_selector)
    assert admits_namespace(c, case.namespace, case.namespace_labels) is case.want
