"""Modelplane v0.3.1's published manifests apply here unchanged: our XRDs and parsers accept every
InferenceCluster, ModelDeployment and ModelReplica of its docs and e2e suite (tests/api/modelplane),
each InferenceCluster publishes its pools from the InferenceClasses it names, and the fields that have
no effect here are the ones the FieldsIgnored condition names."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane import api

from tests.validator import run_validator

MANIFESTS = Path(__file__).parent / "modelplane"
OURS = ("InferenceCluster", "ModelDeployment", "ModelReplica")


@dataclass(frozen=True)
class Doc:
    source: str  # path under MANIFESTS, '#' and the document's position in the file
    obj: dict[str, Any]


def documents() -> list[Doc]:
    out: list[Doc] = []
    for path in sorted(MANIFESTS.rglob("*.yaml")):
        for i, obj in enumerate(yaml.safe_load_all(path.read_text()), start=1):
            if isinstance(obj, dict):
                out.append(Doc(f"{path.relative_to(MANIFESTS)}#{i}", obj))
    return out


DOCS = documents()
CLASSES = {d.obj["metadata"]["name"]: d.obj for d in DOCS if d.obj["kind"] == "InferenceClass"}


def test_the_copies_are_modelplanes_files_byte_for_byte_and_hold_every_example() -> None:
    recorded = dict(line.split()[::-1] for line in (MANIFESTS / "SHA256SUMS").read_text().splitlines())
    actual = {
        f"./{p.relative_to(MANIFESTS)}": hashlib.sha256(p.read_bytes()).hexdigest() for p in MANIFESTS.rglob("*.yaml")
    }
    kinds = Counter(d.obj["kind"] for d in DOCS)
    assert (actual, kinds) == (
        recorded,
        Counter(
            {"InferenceCluster": 32, "InferenceClass": 30, "ModelDeployment": 26, "ModelCache": 7, "ModelReplica": 1}
        ),
    )


_VERDICT = re.compile(r"^(OK|FAIL)\s+\S+ \[(?P<file>[^#\]]+)#\d+\]")


def test_every_document_passes_our_xrds(tmp_path: Path) -> None:
    ours = {f"{i:03d}.yaml": d for i, d in enumerate(d for d in DOCS if d.obj["kind"] in OURS)}
    for name, d in ours.items():
        (tmp_path / name).write_text(yaml.safe_dump(d.obj))
    out = run_validator(*(tmp_path / name for name in ours))
    verdicts = {Path(m["file"]).name: m[1] for line in out.stdout.splitlines() if (m := _VERDICT.match(line))}
    got = {d.source: verdicts.get(name, "no verdict") for name, d in ours.items()}
    assert got == {d.source: "OK" for d in ours.values()}, out.stdout


def _parsed(doc: Doc) -> str:
    obj = doc.obj
    match obj["kind"]:
        case "InferenceCluster":
            pools = api.gpu_pools_status(obj, {c: CLASSES.get(c) for c in api.class_names(obj)})
            published = api.parse_cluster({**obj, "status": {"gpuPools": pools}})
            bare = [p.name for p in published.pools if not p.devices]
            return f"pools without devices: {bare}" if bare else "ok"
        case "ModelDeployment":
            api.parse_deployment(obj)
        case "ModelReplica":
            full, ledger = api.parse_replica(obj), api.parse_ledger_replica(obj)
            if full.node_cost_by_pool() != ledger.node_cost_by_pool():
                return "the ledger read disagrees with the full parse"
    return "ok"


def test_every_document_parses_and_every_cluster_publishes_devices_for_every_pool() -> None:
    ours = [d for d in DOCS if d.obj["kind"] in OURS]
    assert {d.source: _parsed(d) for d in ours} == {d.source: "ok" for d in ours}


@dataclass(frozen=True)
class Ignored:
    name: str
    source: str
    want: tuple[str, ...]


CLUSTER = "cluster provisioning; clusters are reached through spec.providerConfigRef"
POOL = "node pool provisioning"

IGNORED = [
    Ignored(
        "an existing cluster's only Modelplane field is its source",
        "e2e/manifests/30-inference-cluster.yaml#1",
        ("spec.cluster",),
    ),
    Ignored(
        "a provisioned pool's autoscaling minimum and zones have no effect",
        "docs/manifests/examples/qwen3-8b/inference-cluster.yaml#1",
        ("spec.cluster", "spec.nodePools[gpu-l4].minNodeCount", "spec.nodePools[gpu-l4].zones"),
    ),
    Ignored(
        "a pool's fabric and capacity block have no effect",
        "docs/manifests/examples/kimi-k2/inference-cluster.yaml#1",
        (
            "spec.cluster",
            "spec.nodePools[gpu-h200].minNodeCount",
            "spec.nodePools[gpu-h200].zones",
            "spec.nodePools[gpu-h200].fabric",
            "spec.nodePools[gpu-h200].capacityBlock",
        ),
    ),
    Ignored(
        "a deployment's model cache takes effect",
        "docs/manifests/examples/kimi-k2/model-deployment.yaml#1",
        (),
    ),
    Ignored(
        "a deployment without Modelplane-only fields", "docs/manifests/examples/qwen3-8b/model-deployment.yaml#1", ()
    ),
    Ignored("the reference ModelReplica", "docs/manifests/reference/modelreplicas.yaml#1", ()),
]


@pytest.mark.parametrize("case", IGNORED, ids=lambda c: c.name)
def test_the_fields_without_effect_are_named(case: Ignored) -> None:
    (doc,) = [d for d in DOCS if d.source == case.source]
    assert tuple(f.path for f in api.ignored_fields(doc.obj)) == case.want


def test_the_ignored_fields_message_groups_them_by_reason() -> None:
    (doc,) = [d for d in DOCS if d.source == "docs/manifests/examples/kimi-k2/inference-cluster.yaml#1"]
    assert api.ignored_message(api.ignored_fields(doc.obj)) == (
        f"Accepted for Modelplane compatibility, no effect here: spec.cluster ({CLUSTER}); "
        "spec.nodePools[gpu-h200].minNodeCount, spec.nodePools[gpu-h200].zones, spec.nodePools[gpu-h200].fabric, "
        f"spec.nodePools[gpu-h200].capacityBlock ({POOL})."
    )
