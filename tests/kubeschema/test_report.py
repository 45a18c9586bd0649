"""Streams in, verdicts out: YAML read as Kubernetes reads it, the text report, and the command's exit status."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.kubeschema.report import validate_files
from tests.kubeschema.test_validate import SAMPLES, validator

ROOT = Path(__file__).resolve().parents[2]

WIDGET = "apiVersion: example.org/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2}\n"


@dataclass(frozen=True)
class Case:
    name: str
    stream: str
    want: str  # the whole report


CASES = [
    Case(
        "every object gets a line and the summary counts them",
        f"{WIDGET}---\n{WIDGET.replace('size: 2', 'size: 0')}",
        "OK   Widget/w [s.yaml#1] (CEL: 4 rules passed)\n"
        "FAIL Widget/w [s.yaml#2] (CEL: 4 rules passed): 1 error(s)\n"
        "    error: spec.size: 0 is less than the minimum of 1\n"
        "summary: 2 object(s): 1 OK, 1 FAIL, 0 without a schema; CEL rules: 8 passed, 0 not applicable on create\n",
    ),
    Case(
        "a duplicate key is refused, as the API server's strict decoding does, without hiding what follows",
        f"apiVersion: v1\nkind: ConfigMap\nkind: Secret\n---\n{WIDGET}",
        "FAIL (unparsable) [s.yaml#1]: 1 error(s)\n"
        "    error: duplicate key 'kind' at line 3\n"
        "OK   Widget/w [s.yaml#2] (CEL: 4 rules passed)\n"
        "summary: 2 object(s): 1 OK, 1 FAIL, 0 without a schema; CEL rules: 4 passed, 0 not applicable on create\n",
    ),
    Case(
        "an unquoted date stays a string, as sigs.k8s.io/yaml reads it",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {day: 2026-01-31}\n",
        "OK   ConfigMap/c [s.yaml#1]\n"
        "summary: 1 object(s): 1 OK, 0 FAIL, 0 without a schema; CEL rules: 0 passed, 0 not applicable on create\n",
    ),
    Case(
        "a List stands for its items; an unknown kind has no schema and fails",
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: example.org/v1, kind: Sprocket, metadata: {name: s}}\n",
        "NO SCHEMA Sprocket/s [s.yaml#1.items[0]]: no vendored schema or XRD defines this apiVersion and kind\n"
        "summary: 1 object(s): 0 OK, 0 FAIL, 1 without a schema; CEL rules: 0 passed, 0 not applicable on create\n",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_report(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(case.stream)
    assert validate_files(validator(), [Path("s.yaml")]).stdout == case.want


@dataclass(frozen=True)
class Exit:
    name: str
    stream: str
    args: tuple[str, ...]
    want: int


EXITS = [
    Exit("every object valid: 0", WIDGET, (), 0),
    Exit("an object fails: 1", WIDGET.replace("size: 2", "size: 0"), (), 1),
    Exit("an XRD Crossplane cannot render: 2", WIDGET, ("--xrd", "broken.yaml"), 2),
]


@pytest.mark.parametrize("case", EXITS, ids=lambda c: c.name)
def test_exit_status(case: Exit, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(case.stream)
    broken = (
        "apiVersion: apiextensions.crossplane.io/v2\nkind: CompositeResourceDefinition\nmetadata: {name: x}\nspec: {}\n"
    )
    (tmp_path / "broken.yaml").write_text(broken)
    args = ["--xrd", str(SAMPLES / "xrds.yaml"), *case.args, "s.yaml"]
    run = subprocess.run(
        [sys.executable, "-m", "tests.kubeschema", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert run.returncode == case.want, run.stdout + run.stderr
