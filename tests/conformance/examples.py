"""Test-only: the objects every example renders, read from its golden expected.yaml.

tests/examples proves each expected.yaml is exactly what the function renders today, so the
conformance tests read the goldens instead of rendering every example again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from modelplane import api
from modelplane.model import ModelReplica

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "expected.yaml").is_file())


@dataclass(frozen=True)
class Rendered:
    """One ModelReplica of an example and the workload manifests its Objects carry."""

    example: str
    replica: ModelReplica
    manifests: tuple[dict[str, Any], ...]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.manifests if m["kind"] == kind]


@cache
def rendered(example: str) -> tuple[Rendered, ...]:
    docs = [d for d in yaml.safe_load_all((EXAMPLES / example / "expected.yaml").read_text()) if d]
    out: list[Rendered] = []
    for doc in docs:
        if doc["kind"] != "ModelReplica":
            continue
        name = doc["metadata"]["name"]
        manifests = tuple(
            d["spec"]["forProvider"]["manifest"]
            for d in docs
            if d["kind"] == "Object" and d["metadata"]["labels"].get("modelplane.ai/replica") == name
        )
        out.append(Rendered(example=example, replica=api.parse_replica(doc), manifests=manifests))
    return tuple(out)


def every_replica() -> Iterator[Rendered]:
    for name in NAMES:
        yield from rendered(name)


def llmis_ids() -> list[tuple[str, int]]:
    """(example, index of its rendered LLMIS) for parametrizing over every rendered LLMIS."""
    out: list[tuple[str, int]] = []
    for name in NAMES:
        count = sum(len(r.of_kind("LLMInferenceService")) for r in rendered(name))
        out += [(name, i) for i in range(count)]
    return out


def llmis(example: str, index: int) -> dict[str, Any]:
    return [m for r in rendered(example) for m in r.of_kind("LLMInferenceService")][index]


def replica_of(example: str, manifest: dict[str, Any]) -> ModelReplica:
    return next(r.replica for r in rendered(example) if manifest in r.manifests)
