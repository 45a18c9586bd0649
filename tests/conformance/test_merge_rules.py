"""What KServe does with our labels and annotations leaves its Services, router and selectors working.

KServe writes a workload's `labels` over its own pod labels, uses the result as a single-node
Deployment's immutable selector, selects the serving pods for its workload Service and
InferencePool by `app.kubernetes.io/{part-of,name}` + `kserve.io/component`, and gives prefill pods
`spec.prefill.labels`/`annotations` only. Checked on every example and on labels that try to take
KServe's keys.
"""

from dataclasses import dataclass, replace
from typing import Any

import pytest
from modelplane.model import ModelReplica, Phase, PlacedMember, ServingMode
from modelplane.render import render_replica

from tests.conformance import examples, kserve
from tests.render.factories import container_template, engine, gpus, leader_worker, member, replica


def _kinds(llmis: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, role) of every pod shape the LLMIS makes."""
    out: list[tuple[str, str]] = []
    for kind, spec in (("main", llmis["spec"]), ("prefill", llmis["spec"].get("prefill"))):
        if spec is not None:
            out += [(kind, "leader"), (kind, "worker")] if "worker" in spec else [(kind, "single")]
    return out


def _facts(llmis: dict[str, Any]) -> dict[str, Any]:
    """What must hold for every pod shape of an LLMIS, as booleans (all True when conformant)."""
    service = kserve.workload_service_selector(llmis)
    out: dict[str, Any] = {}
    for kind, role in _kinds(llmis):
        labels = kserve.pod_labels(llmis, kind, role)
        annotations = kserve.pod_annotations(llmis, kind)
        engine = labels.get("modelplane.ai/engine")
        out[f"{kind} {role}"] = {
            "KServe's own labels are intact": all(
                labels[k] == v for k, v in kserve.kserve_pod_labels(llmis, kind, role).items()
            ),
            "serving pods are selected by the workload Service": role == "worker" or service.items() <= labels.items(),
            "the pod joins its engine's KAI subgroup": labels.get("kai.scheduler/subgroup-name") == engine is not None,
            "skip-podgrouper is an annotation, not a label": annotations.get("kai.scheduler/skip-podgrouper") == "true"
            and "kai.scheduler/skip-podgrouper" not in labels,
        }
    out["no metadata label KServe copies into a selector"] = not any(
        k.startswith(("kueue.x-k8s.io/", "internal.serving.kserve.io/")) for k in llmis["metadata"]["labels"]
    )
    return out


def _all_true(facts: dict[str, Any]) -> dict[str, Any]:
    return {k: _all_true(v) if isinstance(v, dict) else True for k, v in facts.items()}


@pytest.mark.parametrize(("example", "index"), examples.llmis_ids())
def test_every_example_keeps_kserve_working(example: str, index: int) -> None:
    facts = _facts(examples.llmis(example, index))
    assert facts == _all_true(facts)


HOSTILE_LABELS = {
    "app.kubernetes.io/name": "mine",
    "app.kubernetes.io/part-of": "chat",
    "app.kubernetes.io/component": "x",
    "kserve.io/component": "x",
    "llm-d.ai/role": "x",
    "team": "chat",
}


_TEMPLATE = container_template(labels=HOSTILE_LABELS)


def _member() -> PlacedMember:
    return member(requests=(gpus(),), template=_TEMPLATE)


@dataclass(frozen=True)
class Case:
    name: str
    replica: ModelReplica


CASES = [
    Case("reserved keys on a single-node pod template", replica(engines=(engine(members=(_member(),)),))),
    Case(
        "reserved keys on leader and worker templates",
        replica(engines=(engine(members=tuple(replace(m, template=_TEMPLATE) for m in leader_worker(nodes=1))),)),
    ),
    Case(
        "reserved keys on prefill and decode templates, and on the deployment's labels",
        replica(
            serving_mode=ServingMode.PREFILL_DECODE,
            labels={"app.kubernetes.io/part-of": "chat", "kueue.x-k8s.io/queue-name": "batch"},
            engines=(
                engine("decode", phase=Phase.DECODE, members=(_member(),)),
                engine("prefill", phase=Phase.PREFILL, members=(_member(),)),
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_labels_that_try_kserve_keys_are_not_forwarded(case: Case) -> None:
    llmis = next(o for o in render_replica(case.replica) if o.readiness_source).manifest["spec"]["forProvider"]
    facts = _facts(llmis["manifest"])
    assert facts == _all_true(facts)
