"""The ClusterUsage an InferenceCluster composes: valid against Crossplane's own CRD, and a reason that says why and what to do."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from modelplane.api.usage import cluster_usage, hosted_reason

from tests.validator import run_validator


def test_the_cluster_usage_validates_against_crossplanes_crd(tmp_path: Path) -> None:
    usage = {
        **cluster_usage("eu-west-1", ["team-a/llama-eu-west-1-0-1a2b3c4d"]),
        "metadata": {"name": "eu-west-1-x7k2p"},
    }
    broken = {**usage, "spec": {k: v for k, v in usage["spec"].items() if k != "reason"}}  # neither by nor reason
    path = tmp_path / "usage.yaml"
    path.write_text(yaml.safe_dump_all([usage, broken]))
    out = run_validator(path)
    verdicts = [line.split(" [")[0].split() for line in out.stdout.splitlines() if line.startswith(("OK", "FAIL"))]
    errors = [line.strip() for line in out.stdout.splitlines() if "error:" in line]
    assert (verdicts, errors) == (
        [["OK", "ClusterUsage/eu-west-1-x7k2p"], ["FAIL", "ClusterUsage/eu-west-1-x7k2p"]],
        ['error: spec: CEL validation failed: either "spec.by" or "spec.reason" must be specified.'],
    ), out.stdout + out.stderr


@dataclass(frozen=True)
class Case:
    name: str
    replicas: tuple[str, ...]
    want: str


TAIL = ": drain it with a NoExecute taint or remove them first; a refused delete is replayed once none is left"
CASES = [
    Case("one replica", ("team-a/x",), f"1 ModelReplica runs on this InferenceCluster (team-a/x){TAIL}"),
    Case(
        "three replicas are all named",
        ("a/x", "b/y", "c/z"),
        f"3 ModelReplicas run on this InferenceCluster (a/x, b/y, c/z){TAIL}",
    ),
    Case(
        "beyond three the rest are counted",
        ("a/v", "a/w", "b/x", "c/y", "d/z"),
        f"5 ModelReplicas run on this InferenceCluster (a/v, a/w, b/x and 2 more){TAIL}",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_reason_names_the_replicas_and_the_way_out(case: Case) -> None:
    assert hosted_reason(case.replicas) == case.want
