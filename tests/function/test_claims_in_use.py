"""A ResourceClaimTemplate outlives a device change while the workload may still use it (real gRPC).

The template's name carries a digest of its immutable spec, so a device change renders a new one.
The old one stays composed while an observed LLMInferenceService names it or has not settled on
the new one, and goes after.
"""

from typing import Any

import pytest
from modelplane_function.handlers.keep import minimal

from .conftest import as_dict
from .factories import Case, replica_resolved, request
from .test_replica_cluster import rendered
from .wants import condition, rendered_replica, replica

# Replicas without a revision, whose LLMIS a device change updates in place (a new revision replaces it).
BEFORE = rendered(replica("a", gpus=2, revision=None))  # what the replica composed before its device count changed
AFTER = rendered(replica("a", gpus=1, revision=None))
(OLD_CLAIM,) = (k for k in BEFORE if k.startswith("claim-") and k not in AFTER)
(LLMIS,) = (k for k in AFTER if k.startswith("llmis-"))
assert LLMIS in BEFORE  # the same LLMIS, updated in place to name the new template


def observed_llmis(manifest_of: dict[str, Any], *, ready: str = "True", generation: int = 2, seen: int = 2) -> dict:
    """The LLMIS Object: last applied `manifest_of`'s manifest; the cluster shows it at `generation`."""
    obj, _ = manifest_of[LLMIS]
    on_cluster = obj["spec"]["forProvider"]["manifest"]
    status = {
        "conditions": [{"type": "Ready", "status": ready, "reason": "Test"}],
        "atProvider": {
            "manifest": {
                **on_cluster,
                "metadata": {**on_cluster["metadata"], "generation": generation},
                "status": {"observedGeneration": seen},
            }
        },
    }
    return {**obj, "status": status}


def ready_obj(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Test"}]}}


def observed(llmis: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The old objects Ready, the LLMIS as given, and the new claim template already created."""
    out = {k: ready_obj(o) for k, (o, _) in BEFORE.items()}
    out.update({k: ready_obj(o) for k, (o, _) in AFTER.items() if k.startswith("claim-")})
    return {**out, LLMIS: llmis}


def want(*, kept: bool, llmis_ready: bool) -> dict[str, Any]:
    resources = {k: (o, k != LLMIS or llmis_ready) for k, (o, _) in AFTER.items()}
    message = f"Rendered {len(AFTER)} objects."
    if kept:
        resources[OLD_CLAIM] = (minimal(BEFORE[OLD_CLAIM][0]), True)
        message += f" Kept {OLD_CLAIM} (no longer rendered) while the workload may still use it."
    ready = (
        condition("ReplicaReady", "True", "Ready", "1 of 1 serving objects are ready.")
        if llmis_ready
        else condition("ReplicaReady", "False", "NotReady", f"0 of 1 serving objects are ready; waiting for {LLMIS}.")
    )
    return rendered_replica(resources, message, ready)


CASES = [
    Case(
        "the old template stays while the LLMIS last applied still names it",
        request(replica("a", revision=None), observed=observed(observed_llmis(BEFORE)), required=replica_resolved()),
        want(kept=True, llmis_ready=True),
    ),
    Case(
        "the old template stays while KServe has not observed the LLMIS's new generation",
        request(
            replica("a", revision=None), observed=observed(observed_llmis(AFTER, seen=1)), required=replica_resolved()
        ),
        want(kept=True, llmis_ready=True),
    ),
    Case(
        "the old template stays while the LLMIS that moved to the new one is not ready",
        request(
            replica("a", revision=None),
            observed=observed(observed_llmis(AFTER, ready="False")),
            required=replica_resolved(),
        ),
        want(kept=True, llmis_ready=False),
    ),
    Case(
        "the old template stays while a replaced LLMIS that names it is still observed",
        request(
            replica("a", revision=None),
            observed={**observed(observed_llmis(AFTER)), "llmis-main-0ld5hape": observed_llmis(BEFORE)},
            required=replica_resolved(),
        ),
        want(kept=True, llmis_ready=True),
    ),
    Case(
        "the old template goes once the LLMIS has settled on the new one",
        request(replica("a", revision=None), observed=observed(observed_llmis(AFTER)), required=replica_resolved()),
        want(kept=False, llmis_ready=True),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_claim_templates_in_use(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want
