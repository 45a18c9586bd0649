"""The CRD rendered from an XRD, whole, per scope: golden files in samples/xcrd/ (`--update-golden` rewrites them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kubeschema.streams import documents
from tests.kubeschema.xcrd import XrdError, render_crd

SAMPLES = Path(__file__).parent / "samples"
XRDS = [doc for _, doc in documents((SAMPLES / "xrds.yaml").read_text())]

LEGACY = {
    "apiVersion": "apiextensions.crossplane.io/v1",
    "kind": "CompositeResourceDefinition",
    "metadata": {"name": "xbuckets.example.org"},
    "spec": {
        "group": "example.org",
        "names": {"kind": "XBucket", "plural": "xbuckets"},
        "defaultCompositionUpdatePolicy": "Automatic",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "referenceable": True,
                "deprecated": True,
                "deprecationWarning": "use v2",
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}}},
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                                "minProperties": 1,  # dropped: genCrdVersion does not carry it
                                "properties": {"compositionRef": {"type": "string"}},  # replaced by Crossplane's
                            },
                        },
                    }
                },
            }
        ],
    },
}


@dataclass(frozen=True)
class Case:
    name: str
    xrd: dict[str, Any]
    golden: str


CASES = [
    Case("a namespaced XRD nests Crossplane's fields under spec.crossplane", XRDS[0], "namespaced"),
    Case("a cluster XRD's resourceRefs may name a namespace", XRDS[1], "cluster"),
    Case("a v1 LegacyCluster XRD keeps Crossplane's fields at the top of spec", LEGACY, "legacy-cluster"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rendered_crd(case: Case, request: pytest.FixtureRequest) -> None:
    got = yaml.safe_dump(render_crd(case.xrd), sort_keys=True, width=120)
    golden = SAMPLES / "xcrd" / f"{case.golden}.yaml"
    if request.config.getoption("--update-golden"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(got)
    assert got == golden.read_text()


@dataclass(frozen=True)
class Bad:
    name: str
    xrd: dict[str, Any]
    want: str


BAD = [
    Bad("a version without a schema", {**XRDS[1], "spec": {**XRDS[1]["spec"], "versions": [{"name": "v1"}]}},
        "spec.versions[0].schema.openAPIV3Schema is missing: custom resource validation cannot be nil"),
    Bad("no versions", {**XRDS[1], "spec": {**XRDS[1]["spec"], "versions": []}}, "spec.versions is empty"),
    Bad("no kind", {**XRDS[1], "spec": {**XRDS[1]["spec"], "names": {"plural": "gadgets"}}},
        "spec.group, spec.names.kind and spec.names.plural are required"),
]  # fmt: skip


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_xrds_crossplane_cannot_render(case: Bad) -> None:
    with pytest.raises(XrdError) as error:
        render_crd(case.xrd)
    assert str(error.value) == case.want
