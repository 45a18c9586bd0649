"""A rename keeps the old LLMInferenceService serving until the new one is Ready (real gRPC).

The replica moves to a new revision with one GPU instead of two, so its LLMIS and its claim template
get new names. With `spec.replacing` (its deployment found room for both) the superseded LLMIS
Object is re-emitted exactly as observed, and the claim template it names with it, until the new
LLMIS is Ready and settled; the replica is Ready meanwhile, with ReplicaReady's reason Replacing.
Without `spec.replacing` the old LLMIS goes at once and the replica is not Ready until the new one is.
"""

from dataclasses import replace
from typing import Any

import pytest
from modelplane import api
from modelplane.rollout.reconcile import held
from modelplane_function.handlers.keep import minimal

from .conftest import as_dict
from .factories import Case, replica_resolved, request
from .test_claims_in_use import ready_obj
from .test_replica_cluster import rendered
from .wants import condition, rendered_replica, replica, revision_of

OLD_MR = replica("a", gpus=2)
NEW_MR = replica("a", gpus=1)
RENAMING = {
    **NEW_MR,
    "spec": {
        **NEW_MR["spec"],
        "replacing": api.replica_manifest(
            replace(api.parse_replica(NEW_MR), replacing=held(api.parse_replica(OLD_MR).engines))
        )["spec"]["replacing"],
    },
}
BEFORE, AFTER = rendered(OLD_MR), rendered(NEW_MR)
(OLD_LLMIS,) = (k for k in BEFORE if k.startswith("llmis-"))
(NEW_LLMIS,) = (k for k in AFTER if k.startswith("llmis-"))
(OLD_CLAIM,) = (k for k in BEFORE if k.startswith("claim-"))
assert {OLD_LLMIS, OLD_CLAIM}.isdisjoint(AFTER)  # a rename: both get new names


def llmis(obj: dict[str, Any], *, ready: str) -> dict[str, Any]:
    """An LLMIS Object as observed: KServe has seen its only generation; Ready as given."""
    manifest = obj["spec"]["forProvider"]["manifest"]
    at = {**manifest, "metadata": {**manifest["metadata"], "generation": 1}, "status": {"observedGeneration": 1}}
    return {
        **obj,
        "status": {
            "conditions": [{"type": "Ready", "status": ready, "reason": "Test"}],
            "atProvider": {"manifest": at},
        },
    }


def observed(new_llmis: str | None) -> dict[str, dict[str, Any]]:
    """The old objects, Ready; the new claim template created; the new LLMIS as given (None: not yet created)."""
    out = {k: llmis(o, ready="True") if k == OLD_LLMIS else ready_obj(o) for k, (o, _) in BEFORE.items()}
    out.update({k: ready_obj(o) for k, (o, _) in AFTER.items() if k.startswith("claim-")})
    if new_llmis is not None:
        out[NEW_LLMIS] = llmis(AFTER[NEW_LLMIS][0], ready=new_llmis)
    return out


def want(*, kept: bool, new_ready: bool) -> dict[str, Any]:
    seen = observed("True" if new_ready else "False")
    resources = {k: (o, k != NEW_LLMIS or new_ready) for k, (o, _) in AFTER.items()}
    message = f"Rendered {len(AFTER)} objects."
    if kept:
        resources[OLD_LLMIS] = (minimal(seen[OLD_LLMIS]), True)
        message += f" Kept {OLD_LLMIS} (superseded) serving until the new LLMInferenceServices are Ready."
    resources[OLD_CLAIM] = (minimal(seen[OLD_CLAIM]), True)  # the superseded LLMIS is observed and names it
    message += f" Kept {OLD_CLAIM} (no longer rendered) while the workload may still use it."
    waiting = f"0 of 1 serving objects are ready; waiting for {NEW_LLMIS}."
    if new_ready:
        ready = condition("ReplicaReady", "True", "Ready", "1 of 1 serving objects are ready.")
    elif kept:
        ready = condition(
            "ReplicaReady", "True", "Replacing", f"Serving through {OLD_LLMIS} while the new objects come up: {waiting}"
        )
    else:
        ready = condition("ReplicaReady", "False", "NotReady", waiting)
    return rendered_replica(resources, message, ready, revision=revision_of(gpus=1))


CASES = [
    Case(
        "before the new LLMIS exists the old one is kept exactly as observed and the replica stays Ready",
        request(RENAMING, observed=observed(None), required=replica_resolved()),
        want(kept=True, new_ready=False),
    ),
    Case(
        "while the new LLMIS is not Ready the old one keeps serving",
        request(RENAMING, observed=observed("False"), required=replica_resolved()),
        want(kept=True, new_ready=False),
    ),
    Case(
        "once the new LLMIS is Ready the old one goes",
        request(RENAMING, observed=observed("True"), required=replica_resolved()),
        want(kept=False, new_ready=True),
    ),
    Case(
        "without spec.replacing the old LLMIS goes at once and the replica is not Ready",
        request(NEW_MR, observed=observed("False"), required=replica_resolved()),
        want(kept=False, new_ready=False),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_rename_keeps_the_old_llmis_until_the_new_one_is_ready(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want
