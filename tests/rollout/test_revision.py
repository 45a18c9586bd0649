"""A revision changes exactly when what a replica renders from changes."""

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from modelplane import api
from modelplane.rollout import revision

from tests.function.factories import deployment

BASE = deployment()


def edited(path: str, value: Any) -> dict[str, Any]:
    """factories.deployment() with the value at a dotted path under spec replaced."""
    xr = copy.deepcopy(BASE)
    *parents, leaf = path.split(".")
    node: Any = xr["spec"]
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    node[leaf] = value
    return xr


ENGINE = "template.spec.engines.0"
CONTAINER = f"{ENGINE}.members.0.template.spec.containers.0"


@dataclass(frozen=True)
class Case:
    name: str
    xr: dict[str, Any]
    changes: bool


CASES = [
    Case("an image is a new revision", edited(f"{CONTAINER}.image", "vllm/vllm-openai:v0.12.0"), changes=True),
    Case("args are a new revision", edited(f"{CONTAINER}.args", ["--max-model-len=8192"]), changes=True),
    Case("copies are a new revision", edited(f"{ENGINE}.copies", 2), changes=True),
    Case("the model is a new revision", edited("template.spec.model", {"uri": "hf://Qwen/Qwen3-32B"}), changes=True),
    Case(
        "tolerations are a new revision",
        edited("template.spec.tolerations", [{"key": "spot", "operator": "Exists"}]),
        changes=True,
    ),
    Case("the queue is a new revision", edited("template.spec.scheduling", {"queue": "serving"}), changes=True),
    Case(
        "asking for exclusive nodes is a new revision",
        edited("template.spec.scheduling", {"exclusiveNodes": True}),
        changes=True,
    ),
    Case(
        "exclusiveNodes false is the revision of a template without it",
        edited("template.spec.scheduling", {"exclusiveNodes": False}),
        changes=False,
    ),
    Case("spec.replicas is the same revision", edited("replicas", 7), changes=False),
    Case(
        "the clusterSelector is the same revision",
        edited("template.spec.clusterSelector", {"matchLabels": {"a": "b"}}),
        changes=False,
    ),
    Case(
        "template metadata labels are the same revision",
        edited("template.metadata", {"labels": {"team": "x"}}),
        changes=False,
    ),
    Case(
        "the rollout strategy is the same revision", edited("rollout", {"maxSurge": 0, "paused": True}), changes=False
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_revision_changes_with_what_replicas_render(case: Case) -> None:
    before = revision(api.parse_deployment(BASE))
    after = revision(api.parse_deployment(case.xr))
    assert (after != before, len(after)) == (case.changes, 10)


def test_map_key_order_does_not_change_the_revision() -> None:
    xr = edited(f"{CONTAINER}.env", [{"name": "A", "value": "1"}])
    member = xr["spec"]["template"]["spec"]["engines"][0]["members"][0]
    reordered = copy.deepcopy(xr)
    reordered["spec"]["template"]["spec"]["engines"][0]["members"][0] = dict(reversed(list(member.items())))
    assert revision(api.parse_deployment(reordered)) == revision(api.parse_deployment(xr))
