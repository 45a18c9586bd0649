"""Every pod KServe creates joins the replica's own KAI PodGroup, in its engine's subgroup, and nothing regroups it.

KAI (kai-scheduler/KAI-Scheduler, v0.15+): pods are scheduled by `schedulerName: kai-scheduler`; they
belong to the PodGroup their annotation `pod-group-name` names and to the subgroup their label
`kai.scheduler/subgroup-name` names (pkg/common/constants); the pod-grouper leaves a pod alone only
when its *annotation* `kai.scheduler/skip-podgrouper` is "true" (pkg/podgrouper/pod_controller.go
`shouldSkipPodGrouper`). The gang is whole when each leaf's minMember equals the pods KServe starts
for it: replicas x group size (`GetSize`).
"""

from typing import Any

import pytest

from tests.conformance import examples, kserve

REPLICAS = [(r.example, r.replica.name) for r in examples.every_replica() if r.of_kind("PodGroup")]


def _wiring(manifests: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    (group,) = [m for m in manifests if m["kind"] == "PodGroup"]
    pods: dict[str, int] = {}
    joined: set[tuple[str, str, str, str]] = set()
    for llmis in (m for m in manifests if m["kind"] == "LLMInferenceService"):
        for spec in (llmis["spec"], llmis["spec"].get("prefill")):
            if spec is None:
                continue
            subgroup = spec["labels"]["kai.scheduler/subgroup-name"]
            pods[subgroup] = pods.get(subgroup, 0) + spec["replicas"] * kserve.group_size(spec.get("parallelism"))
            for pod in (spec["template"], spec.get("worker")):
                if pod is not None:
                    joined.add(
                        (
                            pod["schedulerName"],
                            spec["annotations"]["pod-group-name"],
                            spec["annotations"]["kai.scheduler/skip-podgrouper"],
                            llmis["metadata"]["namespace"],
                        )
                    )
    return {
        "pods join": sorted(joined),
        "subgroups": sorted((s["name"], s["minMember"]) for s in group["spec"]["subGroups"]),
        "minSubGroup": group["spec"]["minSubGroup"],
        "pods per subgroup": sorted(pods.items()),
    }


@pytest.mark.parametrize(("example", "replica"), REPLICAS)
def test_every_pod_joins_its_replicas_podgroup(example: str, replica: str) -> None:
    rendered = next(r for r in examples.rendered(example) if r.replica.name == replica)
    (group,) = rendered.of_kind("PodGroup")
    got = _wiring(rendered.manifests)
    assert got == {
        "pods join": [("kai-scheduler", group["metadata"]["name"], "true", group["metadata"]["namespace"])],
        "subgroups": got["pods per subgroup"],
        "minSubGroup": len(got["pods per subgroup"]),
        "pods per subgroup": got["pods per subgroup"],
    }
