"""docs/reference/api.md is generated from the XRDs: it is current, and the generator says what the schema says."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gen_api_reference.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_api_reference", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


gen = _load()


def test_committed_reference_is_current() -> None:
    committed = (REPO / "docs" / "reference" / "api.md").read_text()
    assert committed == gen.generate(), "stale: run .venv/bin/python scripts/gen_api_reference.py"


def test_check_mode_fails_on_a_stale_file_and_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "api-reference.md"
    stale.write_text("# API reference\n\nout of date\n")
    monkeypatch.setattr(gen, "OUTPUT", stale)
    monkeypatch.setattr(gen, "REPO", tmp_path)
    assert gen.main(["--check"]) == 1
    assert stale.read_text() == "# API reference\n\nout of date\n"
    assert gen.main([]) == 0
    assert gen.main(["--check"]) == 0


def test_check_mode_passes_on_the_committed_file_from_the_command_line() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stderr) == (0, "")


def _xrd(schema: dict[str, Any], **version: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"], "categories": ["things"]},
            "scope": "Cluster",
            "versions": [
                {"name": "v1", "served": True, "referenceable": True, "schema": {"openAPIV3Schema": schema}, **version}
            ],
        },
    }


def _spec(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": properties, **extra}}}


def row(path: str, typ: str, *, required: bool = False, default: str = "", bounds: str = "", description: str = ""):
    return gen.Field(path=path, type=typ, required=required, default=default, bounds=bounds, description=description)


SPEC = row("spec", "object")


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    schema: dict[str, Any]
    fields: list[Any]
    rules: list[Any] = field(default_factory=list)


CASES = [
    Case(
        name="an integer shows its default and its closed range",
        schema=_spec(
            {"size": {"type": "integer", "minimum": 0, "maximum": 9, "default": 3, "description": "How big."}}
        ),
        fields=[SPEC, row("spec.size", "integer", default="`3`", bounds="0..9", description="How big.")],
    ),
    Case(
        name="a required string shows its length, pattern and a description folded onto one line",
        schema=_spec(
            {
                "id": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 63,
                    "pattern": "^[a-z]+$",
                    "description": "An\n id.",
                }
            },
            required=["id"],
        ),
        fields=[
            SPEC,
            row("spec.id", "string", required=True, bounds="length 1..63; pattern `^[a-z]+$`", description="An id."),
        ],
    ),
    Case(
        name="an enum lists its values as JSON, the empty string included",
        schema=_spec({"effect": {"type": "string", "enum": ["NoSchedule", ""], "default": ""}}),
        fields=[SPEC, row("spec.effect", "string", default='`""`', bounds='one of `"NoSchedule"`, `""`')],
    ),
    Case(
        name="a list-map of objects gets a row per element property, sorted by name",
        schema=_spec(
            {
                "pools": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 8,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"nodes": {"type": "integer", "minimum": 0}, "name": {"type": "string"}},
                    },
                }
            }
        ),
        fields=[
            SPEC,
            row("spec.pools", "[]object", bounds="items 1..8; list-map keyed by `name`"),
            row("spec.pools[].name", "string", required=True),
            row("spec.pools[].nodes", "integer", bounds=">= 0"),
        ],
    ),
    Case(
        name="a map and a list of scalars carry their elements' bounds on their own row",
        schema=_spec(
            {
                "labels": {
                    "type": "object",
                    "maxProperties": 4,
                    "additionalProperties": {"type": "string", "maxLength": 63},
                },
                "args": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 1}},
            }
        ),
        fields=[
            SPEC,
            row("spec.args", "[]string", bounds="each: length exactly 1"),
            row("spec.labels", "map[string]string", bounds="keys <= 4; each: length <= 63"),
        ],
    ),
    Case(
        name="int-or-string values, formats and atomic maps are named as Kubernetes names them",
        schema=_spec(
            {
                "limits": {
                    "type": "object",
                    "additionalProperties": {
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                        "x-kubernetes-int-or-string": True,
                    },
                },
                "memory": {"type": "integer", "format": "int64"},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
            }
        ),
        fields=[
            SPEC,
            row("spec.limits", "map[string]int-or-string"),
            row("spec.memory", "integer (int64)"),
            row("spec.selector", "object", bounds="atomic map"),
        ],
    ),
    Case(
        name="CEL rules are listed at the path of the schema that holds them, list elements included",
        schema=_spec(
            {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "x-kubernetes-validations": [{"rule": "self.a != self.b", "message": "a and b differ"}],
                        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                    },
                }
            },
            **{"x-kubernetes-validations": [{"rule": "has(self.items)", "messageExpression": "'needs items'"}]},
        ),
        fields=[SPEC, row("spec.items", "[]object"), row("spec.items[].a", "string"), row("spec.items[].b", "string")],
        rules=[
            gen.Rule(path="spec", rule="has(self.items)", message="'needs items'"),
            gen.Rule(path="spec.items[]", rule="self.a != self.b", message="a and b differ"),
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_walk(case: Case) -> None:
    assert gen.walk(case.schema) == (case.fields, case.rules)


def test_a_whole_section_for_a_small_xrd() -> None:
    schema = _spec(
        {"size": {"type": "integer", "default": 1, "description": "A | B."}},
        **{"x-kubernetes-validations": [{"rule": "self.size > 0", "message": "size is positive"}]},
    )
    columns = [{"name": "SIZE", "type": "integer", "jsonPath": ".spec.size"}]
    got = gen.reference([_xrd(schema, additionalPrinterColumns=columns)])
    want = (
        gen.HEADER
        + "\n"
        + "\n".join(
            [
                "Kinds: [Widget](#widget).",
                "",
                "## Widget",
                "",
                "| Property | Value |",
                "|---|---|",
                "| API versions | example.org/v1 |",
                "| Scope | Cluster |",
                "| Plural | widgets |",
                "| Short names | wd |",
                "| Categories | things |",
                "| XRD | widgets.example.org |",
                "",
                "### Widget v1",
                "",
                "Served: yes; referenceable: yes.",
                "",
                "Printer columns (`kubectl get`):",
                "",
                "| Column | Type | JSONPath | Priority |",
                "|---|---|---|---|",
                "| SIZE | integer | `.spec.size` | 0 |",
                "",
                "#### Fields",
                "",
                "| Path | Type | Required | Default | Bounds | Description |",
                "|---|---|---|---|---|---|",
                '| <code class="field-path">spec</code> | object | no | - | - | - |',
                '| <code class="field-path">spec.<wbr>size</code> | integer | no | `1` | - | A \\| B. |',
                "",
                "#### Validation rules",
                "",
                "Enforced at admission by the API server (CEL, `x-kubernetes-validations`).",
                "",
                "- `spec`",
                "  - size is positive: `self.size > 0`",
                "",
            ]
        )
    )
    assert got == want


def test_kinds_come_in_reading_order_whatever_the_file_order() -> None:
    def named(kind: str) -> dict[str, Any]:
        xrd = _xrd({"type": "object"})
        xrd["spec"]["names"] = {"kind": kind, "plural": kind.lower() + "s"}
        return xrd

    kinds = ["InferenceCluster", "Zebra", "ModelReplica", "Aardvark", "ModelDeployment"]
    got = gen.reference([named(k) for k in kinds])
    headings = [line[3:] for line in got.splitlines() if line.startswith("## ")]
    assert headings == ["ModelDeployment", "ModelReplica", "InferenceCluster", "Aardvark", "Zebra"]
    assert got == gen.reference([named(k) for k in reversed(kinds)])
