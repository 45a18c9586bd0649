"""ModelDemand on the wire: what a deployment composes reads back as it was, and nothing else is read."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest
from modelplane import api
from modelplane.api.demand import can_state
from modelplane.errors import SpecError
from modelplane.model import DeviceGroup, PoolCharge
from modelplane.stated import StatedDemand, StatedEngine, StatedOption, withdrawn

STATED = StatedDemand(
    namespace="team-a",
    name="llama.v2",
    replicas=3,
    devices=16,
    movable=True,
    strict_spread=True,
    clusters=("a", "b"),
    engines=(
        StatedEngine(
            name="decode",
            options=(
                StatedOption(
                    kind="0123456789abcdef",
                    cost=2,
                    charge=PoolCharge(nodes=2, groups=(DeviceGroup(pods=2, devices=8),)),
                    claimed=16,
                    idle=0,
                    spare=1,
                    size=Fraction(171798691840, 3),
                ),
            ),
        ),
    ),
)


EXCLUSIVE = StatedDemand(
    namespace="team-a",
    name="solo",
    replicas=2,
    devices=1,
    clusters=("a",),
    engines=(
        StatedEngine(
            name="main",
            options=(
                StatedOption(
                    kind="0123456789abcdef",
                    cost=1,
                    charge=PoolCharge(nodes=1, groups=(DeviceGroup(pods=1, devices=1, whole=True),)),
                    claimed=1,
                    idle=7,
                ),
            ),
        ),
    ),
)


@pytest.mark.parametrize(
    "statement",
    [STATED, withdrawn("team-a", "llama"), EXCLUSIVE],
    ids=["a demand", "no demand", "an exclusive deployment's demand"],
)
def test_a_composed_statement_reads_back_as_it_was(statement: StatedDemand) -> None:
    assert api.parse_demand(api.demand_manifest(statement)) == statement


@pytest.mark.parametrize(
    ("statement", "want"),
    [
        (STATED, [{"devices": 8, "pods": 2}]),
        (EXCLUSIVE, [{"devices": 1, "pods": 1, "wholeNodes": True}]),
    ],
    ids=["groups of shared devices say nothing more", "an exclusive deployment's groups hold whole nodes"],
)
def test_a_statement_says_which_groups_hold_whole_nodes(statement: StatedDemand, want: list[dict[str, Any]]) -> None:
    assert api.demand_manifest(statement)["spec"]["engines"][0]["options"][0]["groups"] == want


def test_crossplanes_own_spec_field_is_read_past() -> None:
    obj = api.demand_manifest(STATED)
    obj["spec"]["crossplane"] = {"compositionRef": {"name": "modeldemands.modelplane.ai"}}
    assert api.parse_demand(obj) == STATED


def _with(path: str, value: Any) -> dict[str, Any]:
    obj = api.demand_manifest(STATED)
    *parents, last = path.split(".")
    node: Any = obj
    for step in parents:
        node = node[int(step)] if step.isdigit() else node[step]
    node[last] = value
    return obj


@dataclass(frozen=True)
class Bad:
    name: str
    obj: dict[str, Any]
    want: str


BAD = [
    Bad("an unknown field", _with("spec.priority", 1000), "spec.priority: unknown field"),
    Bad(
        "replicas that are not a number",
        _with("spec.replicas", "many"),
        "spec.replicas: Input should be a valid integer",
    ),
    Bad(
        "a size with a zero denominator",
        _with("spec.engines.0.options.0.deviceSize", "1/00"),
        "spec.engines[0].options[0].deviceSize: has a zero denominator",
    ),
    Bad(
        "a pool kind that is not a digest",
        _with("spec.engines.0.options.0.poolKinds", ["h100"]),
        "spec.engines[0].options[0].poolKinds: 'h100' is not a pool kind (16 hexadecimal digits)",
    ),
    Bad(
        "a cluster listed twice",
        _with("spec.clusters", ["a", "a"]),
        "spec.clusters: clusters must be unique, repeated: a",
    ),
    Bad(
        "more clusters than a statement may name",
        _with("spec.clusters", [f"c{j}" for j in range(2049)]),
        "spec.clusters: Tuple should have at most 2048 items",
    ),
    Bad(
        "a cluster set of another kind",
        _with("spec.clusterSet", "Some"),
        "spec.clusterSet: Input should be 'Listed' or 'AllExcept'",
    ),
    Bad(
        "no namespace",
        {**api.demand_manifest(STATED), "metadata": {"name": "llama.v2"}},
        "ModelDemand: metadata.namespace is missing",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_a_statement_the_schema_does_not_allow_is_refused(case: Bad) -> None:
    with pytest.raises(SpecError) as err:
        api.parse_demand(case.obj)
    assert str(err.value).startswith(case.want)


@pytest.mark.parametrize(
    ("name", "can"),
    [("llama", True), ("llama.v2", True), ("x" * 63, True), ("x" * 64, False), ("Llama", False), ("a_b", False)],
)
def test_which_deployment_names_can_state_demand(name: str, can: bool) -> None:
    assert can_state(name) is can
