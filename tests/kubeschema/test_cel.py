"""CEL rules on create: what `self` looks like, which libraries exist, and how each outcome is reported."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pytest

from tests.kubeschema.catalog import UPSTREAM, load_yaml, sources
from tests.kubeschema.cel import Outcome, Verdict, compile_problem, escape, evaluate, re2_search, to_cel
from tests.validator import APIS


@dataclass(frozen=True)
class Case:
    name: str
    rule: dict[str, Any]
    self_value: Any
    want: Verdict


PASSED = Verdict(Outcome.PASSED)

CASES = [
    Case("a true rule passes", {"rule": "self.a == 1"}, {"a": 1}, PASSED),
    Case("a false rule reports its message", {"rule": "self.a == 2", "message": "a is 2"}, {"a": 1},
         Verdict(Outcome.FAILED, "a is 2")),
    Case("without a message, the rule is the message", {"rule": "self.a == 2"}, {"a": 1},
         Verdict(Outcome.FAILED, "failed rule: self.a == 2")),
    Case("messageExpression wins over message", {"rule": "false", "message": "m", "messageExpression": "'a=' + string(self.a)"},
         {"a": 1}, Verdict(Outcome.FAILED, "a=1")),
    Case("a messageExpression that fails falls back to message", {"rule": "false", "message": "m", "messageExpression": "self.b"},
         {"a": 1}, Verdict(Outcome.FAILED, "m")),
    Case("a missing key is a runtime error, not a failure", {"rule": "self.b == 1", "message": "b is 1"}, {"a": 1},
         Verdict(Outcome.ERROR, 'NOT_FOUND: Key not found in map : "b" evaluating rule: b is 1')),
    Case("has() tests presence", {"rule": "!has(self.b)"}, {"a": 1}, PASSED),
    Case("oldSelf makes a transition rule, skipped on create", {"rule": "self == oldSelf"}, 1, Verdict(Outcome.TRANSITION)),
    Case("optionalOldSelf cannot be honoured here, so it is an error", {"rule": "self == oldSelf.orValue(self)", "optionalOldSelf": True},
         1, Verdict(Outcome.ERROR, "rule 'self == oldSelf.orValue(self)' sets optionalOldSelf, which is not evaluated here")),
    Case("a rule must return a bool", {"rule": "self.a"}, {"a": 1},
         Verdict(Outcome.ERROR, "rule 'self.a' returned INT, not a bool")),
    Case("the strings extension", {"rule": "self.lowerAscii() == 'abc' && self.split('B').size() == 2"}, "aBc", PASSED),
    Case("optional field selection", {"rule": "self.?b.orValue(0) == 0"}, {"a": 1}, PASSED),
    Case("RE2 matches", {"rule": "self.matches('^\\\\p{Lu}[a-z]+\\\\z')"}, "Abc", PASSED),
    Case("isQuantity", {"rule": "isQuantity(self[0]) && !isQuantity(self[1])"}, ["1.5Gi", "1.5GB"], PASSED),
    Case("isSorted (a Kubernetes list function) is not declared here: an error, never a pass", {"rule": "self.isSorted()"},
         [1, 2], Verdict(Outcome.ERROR, "rule 'self.isSorted()' does not compile here: <input>:1:14: "
                                        "undeclared reference to 'isSorted' (in container '')")),
    Case("division by zero is a runtime error", {"rule": "1 / self == 1"}, 0,
         Verdict(Outcome.ERROR, "divide by zero evaluating rule: 1 / self == 1")),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_evaluate(case: Case) -> None:
    assert evaluate(case.rule, case.self_value) == case.want


@dataclass(frozen=True)
class Value:
    name: str
    value: Any
    schema: dict[str, Any]
    want: Any


OBJECT = {
    "type": "object",
    "properties": {
        "x-port": {"type": "integer"},
        "namespace": {"type": "string"},
        "data": {"type": "string", "format": "byte"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "__priv": {"type": "string"},
    },
}
EMBEDDED = {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}

VALUES = [
    Value(
        "property names are escaped, map keys are not, undeclared fields are invisible",
        {"x-port": 1, "namespace": "n", "labels": {"a-b": "c"}, "other": 1, "__priv": "p"},
        OBJECT,
        {"x__dash__port": 1, "__namespace__": "n", "labels": {"a-b": "c"}, "__underscores__priv": "p"},
    ),
    Value("a byte-format string is bytes", {"data": "aGk="}, OBJECT, {"data": b"hi"}),
    Value(
        "an embedded resource shows its type, name and generateName only",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {}},
        EMBEDDED,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
    ),
]


@pytest.mark.parametrize("case", VALUES, ids=lambda c: c.name)
def test_self_value(case: Value) -> None:
    assert to_cel(case.value, case.schema) == case.want


def test_names_cel_cannot_address() -> None:
    assert [escape(n) for n in ("in", "a.b", "a/b", "9lives", "a b", "ok")] == [
        "__in__",
        "a__dot__b",
        "a__slash__b",
        None,
        None,
        "ok",
    ]


def test_re2_patterns() -> None:
    got = [re2_search(p, t) for p, t in [("^a\\z", "a"), ("^\\p{Lu}", "Ab"), ("^\\p{Lu}", "ab"), ('"', 'a"b')]]
    assert got == [True, True, False, True]


def _rules(node: Any) -> list[str]:
    if isinstance(node, list):
        return [e for v in cast("list[Any]", node) for e in _rules(v)]
    if not isinstance(node, dict):
        return []
    node = cast("dict[str, Any]", node)
    entries = cast("list[dict[str, str]]", node.get("x-kubernetes-validations", []))
    own = [r[k] for r in entries for k in ("rule", "messageExpression") if k in r]
    return own + [e for k, v in node.items() if k != "x-kubernetes-validations" for e in _rules(v)]


def test_every_rule_we_can_meet_compiles_here() -> None:
    """Every rule of the vendored CRDs and of our XRDs is in this environment (transition rules compile too)."""
    files = [UPSTREAM / s.file for s in sources() if s.crd] + sorted(APIS.glob("*/definition.yaml"))
    expressions = sorted({e for f in files for e in _rules(load_yaml(f))})
    assert len(expressions) > 90
    assert {e: compile_problem(e) for e in expressions if compile_problem(e)} == {}
