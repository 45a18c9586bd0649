"""The Go text/template subset behaves as Go's does on the constructs KServe's presets use."""

from dataclasses import dataclass
from typing import Any

import pytest

from tests.conformance.gotemplate import TemplateError, render, render_json_string

DATA: dict[str, Any] = {
    "Spec": {"Model": {"Name": "qwen"}, "Parallelism": {"Tensor": 4, "Expert": False}, "Prefill": None},
    "ObjectMeta": {"Name": "svc", "Namespace": "ns"},
}
FUNCS = {"ChildName": lambda parent, suffix: parent + suffix, "twice": lambda n: 2 * n}


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    want: str  # the output, or "error: <message part>"
    json: bool = False  # rendered through the JSON encoding, as KServe does


CASES = [
    Case("a field chain prints its value", "--name {{ .Spec.Model.Name }}", "--name qwen"),
    Case("a left trim removes the whitespace before", "a \n  {{- .Spec.Model.Name }}", "aqwen"),
    Case("a right trim removes the whitespace after", "{{ .Spec.Model.Name -}}  \n b", "qwenb"),
    Case(
        "inside JSON a line break is not whitespace, so only the indentation goes",
        "x \\\n    {{- if .Spec.Parallelism.Expert -}}--ep{{- end }} \\\n    {{- if .Spec.Parallelism.Tensor -}}"
        "--tp {{ .Spec.Parallelism.Tensor }}{{- end }} \\\n    y",
        "x \\\n \\\n--tp 4 \\\n    y",
        json=True,
    ),
    Case(
        "outside JSON the same trim joins the lines",
        "x \\\n    {{- if .Spec.Parallelism.Expert -}}--ep{{- end }} \\\n    y",
        "x \\ \\\n    y",
    ),
    Case("if takes its else branch on false", "{{ if .Spec.Parallelism.Expert }}a{{ else }}b{{ end }}", "b"),
    Case("else if chains", "{{ if .Spec.Prefill }}p{{ else if .Spec.Model }}m{{ end }}", "m"),
    Case("a nil field is false", "{{ if .Spec.Prefill }}p{{ end }}.", "."),
    Case("and stops at the first false value", "{{ if and .Spec.Prefill .Spec.Prefill.Tensor }}x{{ end }}.", "."),
    Case("or gives the first true value", "{{ or .Spec.Parallelism.Data 1 }}", "1"),
    Case("or gives the set value", "{{ or .Spec.Parallelism.Tensor 1 }}", "4"),
    Case("functions take fields and raw strings", "{{ ChildName .ObjectMeta.Name `-certs` }}", "svc-certs"),
    Case("a bool prints as Go prints it", "{{ .Spec.Parallelism.Expert }}", "false"),
    Case("a field of nil is Go's nil pointer error", "{{ .Spec.Prefill.Parallelism }}", "error: nil pointer"),
    Case("an unknown function is an error", "{{ nope 1 }}", "error: unknown function"),
    Case("range is not supported, so it fails loudly", "{{ range .Spec }}x{{ end }}", "error: unsupported"),
    Case("a raw-string action prints braces", "a{{`{{`}}b }}", "a{{b }}"),
    Case("JSON quotes survive the round trip", '"{{ .Spec.Model.Name }}"', '"qwen"', json=True),
]


def _render(case: Case) -> str:
    try:
        if case.json:
            return render_json_string(case.source, DATA, FUNCS)
        return render(case.source, DATA, FUNCS)
    except TemplateError as err:
        return f"error: {err}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_render(case: Case) -> None:
    got = _render(case)
    assert got.startswith(case.want) if case.want.startswith("error:") else got == case.want, got
