"""The validator answers every object, however broken, with a verdict: never an exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.kubeschema.streams import documents
from tests.reliability.mutate import mutations
from tests.validator import APIS, ROOT, validator

# One object of every kind we emit or ship: the prefill-decode example's stream and our XRDs.
BASES: list[Any] = [
    doc
    for path in [ROOT / "examples" / "prefill-decode" / "expected.yaml", *sorted(APIS.glob("*/*.yaml"))]
    for _, doc in documents(Path(path).read_text())
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(BASES).flatmap(mutations))
def test_every_mutant_gets_a_verdict(mutant: tuple[list[str], Any]) -> None:
    _, obj = mutant
    reports = validator().validate(obj, "mutant")
    assert all(r.ok or r.errors or r.schema is None for r in reports)
    assert [r.errors for r in validator().validate(obj, "mutant")] == [r.errors for r in reports]
