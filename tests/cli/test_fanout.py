"""A large YAML stream encoded on every core gives exactly the documents the serial reader gives."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import yaml
from modelplane_function.cli.render import fanout, yamlio


@dataclass(frozen=True)
class PartsCase:
    name: str
    text: str
    count: int
    want: list[str] | None


DOC_A, DOC_B, DOC_C = "kind: A\n", "---\nkind: B\n", "--- \nkind: C\n"

PARTS_CASES = [
    PartsCase("three documents, three parts", DOC_A + DOC_B + DOC_C, 3, [DOC_A, DOC_B, DOC_C]),
    PartsCase("more parts asked than documents", DOC_A + DOC_B, 8, [DOC_A, DOC_B]),
    PartsCase("one part asked", DOC_A + DOC_B, 1, None),
    PartsCase("a single document", DOC_A, 4, None),
    PartsCase("a stream opening with a marker keeps it in the first part", "---\n" + DOC_A + DOC_B, 2,
              ["---\n" + DOC_A, DOC_B]),
    PartsCase("'---' inside a line is not a marker", "a: '---'\nb: x---\n" + DOC_B, 2, ["a: '---'\nb: x---\n", DOC_B]),
    PartsCase("'----' is not a marker", "a: |\n  x\n----\n" + DOC_B, 2, ["a: |\n  x\n----\n", DOC_B]),
    PartsCase("CRLF line ends", "kind: A\r\n---\r\nkind: B\r\n", 2, ["kind: A\r\n", "---\r\nkind: B\r\n"]),
    PartsCase("a directive belongs to the next document: not cut", DOC_A + "%YAML 1.1\n" + DOC_B, 2, None),
    PartsCase("an end marker: not cut", DOC_A + "...\n" + DOC_B, 2, None),
]  # fmt: skip


@pytest.mark.parametrize("case", PARTS_CASES, ids=lambda c: c.name)
def test_parts(case: PartsCase) -> None:
    got = fanout.parts(case.text, case.count)
    assert got == case.want
    if got is not None:
        assert "".join(got) == case.text


def _fleet(documents: int) -> str:
    return "".join(
        f"---\napiVersion: modelplane.ai/v1alpha1\nkind: InferenceCluster\nmetadata:\n  name: c{i}\n"
        f"  labels: {{region: r{i % 3}}}\nspec:\n  nodePools:\n  - name: p\n    nodes: {i}\n"
        f"    note: |\n      line one\n      line two\n"
        for i in range(documents)
    )


@pytest.fixture
def parallel_always(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fanout, "PARALLEL_FROM", 0)
    monkeypatch.setattr(fanout, "_cores", lambda: 3)


@pytest.mark.usefixtures("parallel_always")
@pytest.mark.parametrize("documents", [1, 2, 7, 50])
def test_encoded_on_every_core_as_serially(documents: int) -> None:
    text = _fleet(documents)
    assert fanout.encode_all(text) == yamlio.encode_all(text)


@pytest.mark.usefixtures("parallel_always")
def test_a_bad_part_gives_the_serial_error() -> None:
    text = _fleet(5) + "---\nkind: [unclosed\n" + _fleet(5)
    with pytest.raises(yaml.YAMLError) as serial:
        yamlio.encode_all(text)
    with pytest.raises(yaml.YAMLError) as parallel:
        fanout.encode_all(text)
    assert str(parallel.value) == str(serial.value)  # lines counted from the top of the file


@pytest.mark.usefixtures("parallel_always")
def test_a_document_that_is_not_an_object_is_refused_as_serially() -> None:
    with pytest.raises(yamlio.NotAnObjectError):
        fanout.encode_all(_fleet(3) + "---\n- a list\n" + _fleet(3))
