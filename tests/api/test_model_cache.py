"""Modelplane's ModelCache as placement reads it: its clusterSelector and each cluster's phase."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane import api
from modelplane.errors import SpecError
from modelplane.model import LabelSelector, ModelCache

MANIFESTS = Path(__file__).parent / "modelplane"


def _cache(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": spec or {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-8B", "sizeGiB": 20}},
    }
    return {**obj, "status": status} if status is not None else obj


@dataclass(frozen=True)
class Case:
    name: str
    obj: dict[str, Any]
    want: ModelCache


CASES = [
    Case(
        "a cache without a selector or status stages everywhere and is Ready nowhere yet",
        _cache(),
        ModelCache(namespace="ml-team", name="qwen"),
    ),
    Case(
        "its selector and each cluster's phase are read, the source is not",
        _cache(
            {"source": "HuggingFace", "huggingFace": {"repo": "x"}, "clusterSelector": {"matchLabels": {"r": "us"}}},
            {
                "summary": {"ready": "1/2"},
                "clusters": [{"name": "b", "phase": "Hydrating"}, {"name": "a", "phase": "Ready", "message": "ok"}],
            },
        ),
        ModelCache(
            namespace="ml-team",
            name="qwen",
            cluster_selector=LabelSelector(match_labels={"r": "us"}),
            phases={"a": "Ready", "b": "Hydrating"},
        ),
    ),
    Case(
        "a cluster listed twice keeps its first phase; one without a phase has none",
        _cache(
            status={"clusters": [{"name": "a", "phase": "Pending"}, {"name": "a", "phase": "Ready"}, {"name": "b"}]}
        ),
        ModelCache(namespace="ml-team", name="qwen", phases={"a": "Pending", "b": ""}),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_model_cache_is_read(case: Case) -> None:
    assert api.parse_model_cache(case.obj) == case.want


def test_a_malformed_selector_is_named() -> None:
    with pytest.raises(SpecError) as err:
        api.parse_model_cache(_cache({"clusterSelector": {"matchLabels": ["r"]}}))
    assert str(err.value) == "spec.clusterSelector.matchLabels: Input should be a valid dictionary"


def test_every_modelplane_cache_is_read() -> None:
    caches = [
        api.parse_model_cache(obj)
        for path in sorted(MANIFESTS.rglob("*.yaml"))
        for obj in yaml.safe_load_all(path.read_text())
        if isinstance(obj, dict) and obj.get("kind") == "ModelCache"
    ]
    assert caches == [
        ModelCache(namespace="ml-team", name=name)
        for name in (
            "qwen3-coder",
            "kimi-k2",
            "laguna",
            "nemotron-lightning",
            "qwen-72b-awq",
            "qwen3-coder",
            "qwen-72b",
        )
    ]
