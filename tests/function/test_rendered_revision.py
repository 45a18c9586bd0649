"""A replica counts as available at a new revision only once its own reconcile rendered it (real gRPC).

The ModelReplica handler records the revision it rendered in status.renderedRevision; the
ModelDeployment counts a replica Ready only when that is the revision its label names, so a Ready
condition left from the old objects does not let the rollout take the next replica down.
"""

from __future__ import annotations

from typing import Any

from .conftest import as_dict
from .factories import cluster, deployment, replica_resolved, request, resolved, with_ready
from .wants import replica, revision_of


def _rendered(obj: dict[str, Any], revision: str) -> dict[str, Any]:
    return {**obj, "status": {**obj["status"], "renderedRevision": revision}}


def test_a_ready_condition_from_the_revision_before_does_not_count(run_function) -> None:
    current = revision_of()
    a = _rendered(with_ready(replica("a")), current)
    b = _rendered(with_ready(replica("b")), "0ld0ld0ld0")  # moved to the revision, not rendered yet
    req = request(
        deployment(replicas=2),
        observed={"replica-a-0": a, "replica-b-0": b},
        required=resolved(clusters=[cluster("a"), cluster("b")], replicas=[a, b]),
    )
    got = as_dict(run_function(req))
    counts = got["desired"]["composite"]["resource"]["status"]["replicas"]
    ready = {k: r.get("ready") for k, r in got["desired"]["resources"].items()}
    assert ((counts["ready"], counts["available"]), ready) == (
        (1, 1),
        {"replica-a-0": "READY_TRUE", "replica-b-0": None},
    )


def test_the_replica_records_the_revision_it_rendered(run_function) -> None:
    got = as_dict(run_function(request(replica("a"), required=replica_resolved())))
    assert got["desired"]["composite"]["resource"]["status"] == {"renderedRevision": revision_of()}
