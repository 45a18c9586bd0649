"""Validate YAML streams and write the verdict: one line per object, then its errors.

    OK   Kind/name [file#2] (CEL: 4 rules passed)
    FAIL Kind/name [file#3]: 1 error(s)
        error: spec.replicas: -1 is less than the minimum of 0
    NO SCHEMA Kind/name [file#4]: apiVersion example.org/v1 kind Thing
    summary: 3 object(s): 1 OK, 2 FAIL, 1 without a schema; CEL rules: 4 passed, 0 not applicable on create

A wrapped manifest follows its provider-kubernetes Object as `[file#3 > manifest]`. Exit status
1 when any object fails, has no schema, or a document does not parse (and, with `strict`, has a
warning); 0 otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.kubeschema.streams import YamlError, objects
from tests.kubeschema.validate import ObjectReport, Validator


@dataclass(frozen=True, slots=True)
class Run:
    returncode: int
    stdout: str  # the report
    stderr: str  # the XRDs the validator could not register
    reports: tuple[ObjectReport, ...]


def validate_files(validator: Validator, files: Sequence[Path], *, strict: bool = False) -> Run:
    reports: list[ObjectReport] = []
    for file in files:
        for where, obj in objects(file.read_text()):
            if isinstance(obj, YamlError):
                reports.append(ObjectReport(f"(unparsable) [{file}{where}]", schema="YAML", errors=[str(obj)]))
            else:
                reports += validator.validate(obj, f"{file}{where}")
    lines = [line for report in reports for line in _lines(report, strict=strict)]
    lines.append(_summary(reports))
    failed = any(_failed(r, strict=strict) for r in reports)
    stderr = "".join(f"xrd: {problem}\n" for problem in validator.problems)
    return Run(1 if failed else 0, "\n".join(lines) + "\n", stderr, tuple(reports))


def _failed(report: ObjectReport, *, strict: bool) -> bool:
    return not report.ok or (strict and bool(report.warnings))


def _lines(report: ObjectReport, *, strict: bool) -> list[str]:
    if report.schema is None:
        return [f"NO SCHEMA {report.label}: no vendored schema or XRD defines this apiVersion and kind"]
    rules = f" (CEL: {report.rules_passed} rules passed)" if report.rules_passed else ""
    if _failed(report, strict=strict):
        count = len(report.errors) + (len(report.warnings) if strict else 0)
        head = f"FAIL {report.label}{rules}: {count} error(s)"
    else:
        head = f"OK   {report.label}{rules}"
    return [head, *(f"    error: {e}" for e in report.errors), *(f"    warning: {w}" for w in report.warnings)]


def _summary(reports: Sequence[ObjectReport]) -> str:
    ok = sum(r.ok for r in reports)
    missing = sum(r.schema is None for r in reports)
    passed = sum(r.rules_passed for r in reports)
    transition = sum(r.transition_rules for r in reports)
    return (
        f"summary: {len(reports)} object(s): {ok} OK, {len(reports) - ok - missing} FAIL, "
        f"{missing} without a schema; CEL rules: {passed} passed, {transition} not applicable on create"
    )
