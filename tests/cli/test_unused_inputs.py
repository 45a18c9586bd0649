"""Every input document the function never read is named on stderr with why, by render, fleet and plan."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from modelplane_function.cli.main import main

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
PLAN = REPO / "examples" / "fleet-plan"
CLUSTERS = list(yaml.safe_load_all((QUICKSTART / "required-resources.yaml").read_text()))  # us-east-1, eu-west-1


def _ns(name: str, api_version: str = "v1", kind: str = "Namespace") -> dict[str, object]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}


@dataclass(frozen=True)
class Case:
    name: str
    fleet: list[dict[str, object]]  # written to fleet.yaml, the required resources
    want: list[str]  # the notes on stderr, "{f}" standing for fleet.yaml's path


CASES = [
    Case(
        name="an InferenceCluster under another apiVersion names the one read",
        fleet=[{**CLUSTERS[0], "apiVersion": "modelplane.ai/v1"}, CLUSTERS[1]],
        want=[
            "{f}: InferenceCluster us-east-1 was left out: the function reads InferenceCluster as apiVersion "
            "modelplane.ai/v1alpha1, not 'modelplane.ai/v1'"
        ],
    ),
    Case(
        name="a misspelt kind names the closest kind read and every kind read",
        fleet=[CLUSTERS[0], {**CLUSTERS[1], "kind": "InferenceClusters"}],
        want=[
            "{f}: InferenceClusters eu-west-1 was left out: the function reads no kind 'InferenceClusters' (did you "
            "mean InferenceCluster?), only FleetQuota, InferenceCluster, ModelDemand, ModelDeployment, ModelReplica, "
            "Namespace, PriorityClass"
        ],
    ),
    Case(
        name="a kind nothing resembles lists the kinds read",
        fleet=[*CLUSTERS, _ns("creds", kind="Secret")],
        want=[
            "{f}: Secret creds was left out: the function reads no kind 'Secret', only FleetQuota, InferenceCluster, "
            "ModelDemand, ModelDeployment, ModelReplica, Namespace, PriorityClass"
        ],
    ),
    Case(
        name="a Namespace no deployment lives in is said to be unasked for",
        fleet=[*CLUSTERS, _ns("elsewhere"), _ns("team-chat")],
        want=["{f}: Namespace elsewhere was left out: the function asked for no Namespace of this name or labels"],
    ),
    Case(
        name="a document repeated later is said to be replaced",
        fleet=[CLUSTERS[0], *CLUSTERS],
        want=[
            "{f}: InferenceCluster us-east-1 was left out: a later document with the same apiVersion, kind, "
            "namespace and name replaced it"
        ],
    ),
    Case(name="a fleet the function reads whole gets no note", fleet=CLUSTERS, want=[]),
]


def _notes(stderr: str, fleet: Path) -> list[str]:
    return [
        line.removeprefix("modelplane: note: ").replace(str(fleet), "{f}")
        for line in stderr.splitlines()
        if line.startswith("modelplane: note: ") and "left out" in line
    ]


@pytest.mark.parametrize("command", ["render", "fleet"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_render_and_fleet_name_each_input_left_out(case: Case, command: str, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump_all(case.fleet, sort_keys=False))
    got = CliRunner().invoke(main, [command, str(QUICKSTART / "xr.yaml"), "--required-resources", str(fleet)])
    assert _notes(got.stderr, fleet) == case.want


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_plan_names_each_input_left_out(case: Case, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump_all(case.fleet, sort_keys=False))
    got = CliRunner().invoke(main, ["plan", str(QUICKSTART / "xr.yaml"), str(fleet)])
    assert _notes(got.stderr, fleet) == case.want


def test_plan_names_a_deployment_under_another_apiversion(tmp_path: Path) -> None:
    deployments = tmp_path / "deployments.yaml"
    docs = list(yaml.safe_load_all((PLAN / "deployments.yaml").read_text()))
    docs[0]["apiVersion"] = "modelplane.ai/v1beta1"
    deployments.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    got = CliRunner().invoke(main, ["plan", str(PLAN / "clusters.yaml"), str(deployments)])
    name = f"{docs[0]['metadata']['namespace']}/{docs[0]['metadata']['name']}"
    assert _notes(got.stderr, deployments) == [
        f"{{f}}: ModelDeployment {name} was left out: the function reads ModelDeployment as apiVersion "
        "modelplane.ai/v1alpha1, not 'modelplane.ai/v1beta1'"
    ]
