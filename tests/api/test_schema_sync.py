"""The pydantic wire models and the XRD schemas declare the same fields, so neither drifts alone."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane.api.cluster import ClusterSpec, PublishedPool
from modelplane.api.demand import DemandSpec
from modelplane.api.deployment import DeploymentSpec
from modelplane.api.quota import QuotaSpec
from modelplane.api.replica import ReplicaSpec
from pydantic import BaseModel

APIS = Path(__file__).resolve().parents[2] / "apis"
CROSSPLANE_OWNED = {"crossplane"}  # spec.crossplane is added by Crossplane, not declared in our XRDs


def _schema(kind: str) -> dict[str, Any]:
    xrd = yaml.safe_load((APIS / kind / "definition.yaml").read_text())
    return xrd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (through Optional, tuple[...], dict[str, ...], Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is dict:
        args = args[1:]
    return [m for a in args if a is not Ellipsis for m in _models(a)]


def _item(schema: dict[str, Any]) -> dict[str, Any]:
    while schema.get("type") == "array" or "additionalProperties" in schema:
        schema = schema["items"] if schema.get("type") == "array" else schema["additionalProperties"]
    return schema


def _differences(schema: dict[str, Any], model: type[BaseModel], path: str) -> list[str]:
    declared = set(schema.get("properties", {}))
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    out = [f"{path}.{k}: in the XRD only" for k in sorted(declared - fields.keys())]
    out += [f"{path}.{k}: in {model.__name__} only" for k in sorted(fields.keys() - declared - CROSSPLANE_OWNED)]
    for key in sorted(declared & fields.keys()):
        for sub in _models(fields[key].annotation):
            out += _differences(_item(schema["properties"][key]), sub, f"{path}.{key}")
    return out


@dataclass(frozen=True)
class Case:
    name: str
    kind: str
    path: tuple[str, ...]
    model: type[BaseModel]


CASES = [
    Case("ModelDeployment spec matches DeploymentSpec", "modeldeployment", ("spec",), DeploymentSpec),
    Case("ModelReplica spec matches ReplicaSpec", "modelreplica", ("spec",), ReplicaSpec),
    Case("InferenceCluster spec matches ClusterSpec", "inferencecluster", ("spec",), ClusterSpec),
    Case("ModelDemand spec matches DemandSpec", "modeldemand", ("spec",), DemandSpec),
    Case("FleetQuota spec matches QuotaSpec", "fleetquota", ("spec",), QuotaSpec),
    Case(
        "InferenceCluster gpuPools items match PublishedPool", "inferencecluster", ("status", "gpuPools"), PublishedPool
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_xrd_and_wire_model_declare_the_same_fields(case: Case) -> None:
    schema = _schema(case.kind)
    for key in case.path:
        schema = _item(schema["properties"][key])
    assert _differences(schema, case.model, ".".join(case.path)) == []


def test_deployment_and_replica_share_the_pod_template_schema() -> None:
    def template(kind: str, *path: str) -> dict[str, Any]:
        schema = _schema(kind)
        for key in path:
            schema = _item(schema["properties"][key])
        return schema

    md = template("modeldeployment", "spec", "template", "spec", "engines", "members", "template")
    mr = template("modelreplica", "spec", "engines", "members", "template")
    assert md == mr


def test_a_field_missing_deep_in_the_model_is_reported() -> None:
    # guards the sync test against passing vacuously: the walk reaches device attributes
    schema = _schema("inferencecluster")["properties"]["status"]["properties"]["gpuPools"]["items"]
    attribute = schema["properties"]["devices"]["items"]["properties"]["attributes"]["additionalProperties"]
    attribute["properties"]["float"] = {"type": "number"}
    assert _differences(schema, PublishedPool, "gpuPools") == ["gpuPools.devices.attributes.float: in the XRD only"]
