"""A template change over real gRPC: paced by the budget, old replicas untouched, a stalled rollout halts.

Two Ready replicas run revision REV (factories.deployment()); the deployment then changes its image.
Cluster a has a node to spare, so its replica is renamed beside its old objects (`spec.replacing`);
cluster b has none, so its replica is updated in place and is down meanwhile.
Each case compares every composed replica's desired manifest (as observed, or rebuilt at the new
revision), the Progressing condition and the status counts.
"""

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api
from modelplane.names import replica_name
from modelplane.rollout import revision
from modelplane.rollout.reconcile import held
from modelplane_function.handlers.keep import minimal

from .conftest import as_dict
from .factories import cluster, deployment, request, resolved, with_ready
from .wants import REV, replica

NEW_IMAGE = "vllm/vllm-openai:v0.12.0"


def changed(**kw: Any) -> dict[str, Any]:
    xr = deployment(replicas=2, **kw)
    xr["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["image"] = NEW_IMAGE
    return xr


NEW_REV = revision(api.parse_deployment(changed()))


def observed(cluster_name: str, index: int = 0, *, rev: str = REV, ready: str = "True") -> dict[str, Any]:
    obj = with_ready(replica(cluster_name, index, revision=rev), ready)
    if rev == NEW_REV:
        obj["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["image"] = NEW_IMAGE
    obj["metadata"] = {
        **obj["metadata"],
        "annotations": {"crossplane.io/composition-resource-name": f"replica-{cluster_name}-{index}"},
    }
    return obj


def new_replica(cluster_name: str, index: int = 0) -> dict[str, Any]:
    obj = replica(cluster_name, index, revision=NEW_REV)
    obj["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["image"] = NEW_IMAGE
    return obj


def progressing(reason: str, message: str, status: str = "True") -> dict[str, Any]:
    return {"type": "Progressing", "status": status, "reason": reason, "message": message}


@dataclass(frozen=True)
class Case:
    name: str
    req: fnv1.RunFunctionRequest
    resources: dict[str, dict[str, Any]]  # key -> the desired manifest
    progressing: dict[str, Any]
    counts: dict[str, int]


def renaming(cluster_name: str) -> dict[str, Any]:
    """The new-revision replica whose old LLMInferenceServices serve until its new ones are Ready."""
    obj = new_replica(cluster_name)
    old = api.parse_replica(replica(cluster_name)).engines
    obj["spec"]["replacing"] = api.replica_manifest(replace(api.parse_replica(obj), replacing=held(old)))["spec"][
        "replacing"
    ]
    return obj


OLD = {"replica-a-0": observed("a"), "replica-b-0": observed("b")}
# a-0 renamed beside its old objects (Ready through them, ReplicaReady Replacing), b-0 updated and Ready again
RENAMING = {
    "replica-a-0": {
        **renaming("a"),
        "metadata": observed("a")["metadata"] | {"labels": renaming("a")["metadata"]["labels"]},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Available"},
                {"type": "ReplicaReady", "status": "True", "reason": "Replacing"},
            ]
        },
    },
    "replica-b-0": observed("b", rev=NEW_REV),
}
CLUSTERS = [cluster("a", nodes=2), cluster("b", nodes=1)]


def fleet(observed_: dict[str, dict[str, Any]], xr: dict[str, Any] | None = None) -> fnv1.RunFunctionRequest:
    return request(
        xr or changed(),
        observed=observed_,
        required=resolved(clusters=CLUSTERS, replicas=list(observed_.values())),
    )


MID = {
    "replica-a-0": observed("a"),
    "replica-a-1": observed("a", 1, rev=NEW_REV, ready="False"),
    "replica-b-0": observed("b", rev=NEW_REV, ready="False"),
}
MID_MESSAGE = f"Rolling out revision {NEW_REV}: 2 updated, 1 available, 3 in all for 2 replicas."


def stalled(since: datetime) -> dict[str, Any]:
    xr = changed()
    xr["status"] = {
        "revision": NEW_REV,
        "replicas": {"total": 3, "ready": 1, "updated": 2, "available": 1},
        "conditions": [{**progressing("RollingOut", MID_MESSAGE), "lastTransitionTime": since.isoformat()}],
    }
    return xr


NOW = datetime.now(UTC)

CASES = [
    Case(
        name="a new image renames one replica beside its old objects where its pool has room, the other in place",
        req=fleet(OLD),
        resources={"replica-a-0": renaming("a"), "replica-b-0": new_replica("b")},
        progressing=progressing(
            "RollingOut", f"Rolling out revision {NEW_REV}: 2 updated, 1 available, 2 in all for 2 replicas."
        ),
        counts={"total": 2, "ready": 2, "updated": 2, "available": 1},
    ),
    Case(
        name="a replica renamed beside its old objects keeps them while its new ones are not Ready",
        req=fleet(RENAMING),
        resources={"replica-a-0": renaming("a"), "replica-b-0": new_replica("b")},
        progressing=progressing(
            "RollingOut", f"Rolling out revision {NEW_REV}: 2 updated, 2 available, 2 in all for 2 replicas."
        ),
        counts={"total": 2, "ready": 2, "updated": 2, "available": 2},
    ),
    Case(
        name="once its new objects are Ready the old ones are let go and the rollout is complete",
        req=fleet({**RENAMING, "replica-a-0": {**RENAMING["replica-a-0"], "status": observed("a")["status"]}}),
        resources={"replica-a-0": new_replica("a"), "replica-b-0": new_replica("b")},
        progressing=progressing("RolloutComplete", f"All 2 replicas run revision {NEW_REV} and are available."),
        counts={"total": 2, "ready": 2, "updated": 2, "available": 2},
    ),
    Case(
        name="while the new replicas are not Ready nothing more changes",
        req=fleet(MID),
        resources={
            "replica-a-0": minimal(MID["replica-a-0"]),
            "replica-a-1": new_replica("a", 1),
            "replica-b-0": new_replica("b"),
        },
        progressing=progressing("RollingOut", MID_MESSAGE),
        counts={"total": 3, "ready": 1, "updated": 2, "available": 1},
    ),
    Case(
        name="no progress past the deadline halts the rollout, naming the replicas that are not Ready",
        req=fleet(MID, stalled(NOW - timedelta(hours=1))),
        resources={
            "replica-a-0": minimal(MID["replica-a-0"]),
            "replica-a-1": new_replica("a", 1),
            "replica-b-0": new_replica("b"),
        },
        progressing=progressing(
            "ProgressDeadlineExceeded",
            f"Revision {NEW_REV} made no progress for 600s: {replica_name('llama', 'a', 1)}, "
            f"{replica_name('llama', 'b', 0)} did not become "
            "Ready (2 of 2 updated, 1 available). The rollout is halted: the replicas not yet updated keep serving "
            "and nothing more is changed. Fix spec.template and the rollout continues with the new revision, or "
            "revert the change.",
            status="False",
        ),
        counts={"total": 3, "ready": 1, "updated": 2, "available": 1},
    ),
    Case(
        name="within the deadline the same state is still rolling out",
        req=fleet(MID, stalled(NOW - timedelta(seconds=60))),
        resources={
            "replica-a-0": minimal(MID["replica-a-0"]),
            "replica-a-1": new_replica("a", 1),
            "replica-b-0": new_replica("b"),
        },
        progressing=progressing("RollingOut", MID_MESSAGE),
        counts={"total": 3, "ready": 1, "updated": 2, "available": 1},
    ),
    Case(
        name="once the new replicas are Ready the last old one leaves and the rollout is complete",
        req=fleet({**MID, "replica-a-1": observed("a", 1, rev=NEW_REV), "replica-b-0": observed("b", rev=NEW_REV)}),
        resources={"replica-a-1": new_replica("a", 1), "replica-b-0": new_replica("b")},
        progressing=progressing("RolloutComplete", f"All 2 replicas run revision {NEW_REV} and are available."),
        counts={"total": 2, "ready": 2, "updated": 2, "available": 2},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rollout(run_function, case: Case) -> None:
    got = as_dict(run_function(case.req))
    resources = {k: r["resource"] for k, r in got["desired"].get("resources", {}).items()}
    conditions = [
        {k: c[k] for k in ("type", "reason", "message")}
        | {"status": c["status"].removeprefix("STATUS_CONDITION_").title()}
        for c in got["conditions"]
        if c["type"] == "Progressing"
    ]
    counts = got["desired"]["composite"]["resource"]["status"]["replicas"]
    assert (resources, conditions, counts) == (
        case.resources,
        [case.progressing],
        case.counts,
    )
