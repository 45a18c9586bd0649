"""InferenceCluster spec.stack cannot change once set: its rules evaluated with real CEL on an update."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from tests.kubeschema.cel import Outcome, Verdict, evaluate_update
from tests.validator import ROOT

XRD = ROOT / "apis" / "inferencecluster" / "definition.yaml"
IMMUTABLE = "spec.stack is immutable; recreate the cluster to change its serving stack."


def _stack_rules() -> list[dict[str, Any]]:
    xrd = yaml.safe_load(XRD.read_text())
    stack = xrd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["stack"]
    return stack["x-kubernetes-validations"]


@dataclass(frozen=True)
class Case:
    name: str
    old: str
    new: str
    want: tuple[Verdict, ...]


CASES = [
    Case("an update keeping Standard passes", "Standard", "Standard", (Verdict(Outcome.PASSED),)),
    Case("an update keeping Dynamo passes", "Dynamo", "Dynamo", (Verdict(Outcome.PASSED),)),
    Case(
        "moving a cluster from Standard to Dynamo is refused",
        "Standard",
        "Dynamo",
        (Verdict(Outcome.FAILED, IMMUTABLE),),
    ),
    Case(
        "moving a cluster from Dynamo to Standard is refused",
        "Dynamo",
        "Standard",
        (Verdict(Outcome.FAILED, IMMUTABLE),),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_stack_is_immutable(case: Case) -> None:
    assert tuple(evaluate_update(rule, case.new, case.old) for rule in _stack_rules()) == case.want
