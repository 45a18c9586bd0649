"""The ClusterUsage an InferenceCluster composes while ModelReplicas run on it.

Deleting a cluster under running replicas would strand their workload Objects (they lose the
ProviderConfig they need to finalize) and, here, silently re-place them. Crossplane's usage
webhook refuses to delete an object that a Usage or ClusterUsage names in `spec.of`
(crossplane/crossplane internal/webhook/protection/usage). Why a ClusterUsage from the cluster,
as Modelplane does, rather than a Usage from each replica: a namespaced Usage of a cluster-scoped
object is indexed under the Usage's own namespace (internal/protection/usage/finder.go), so the
webhook, which looks a cluster-scoped object up with an empty namespace, never finds it; and a
namespaced ModelReplica cannot compose a cluster-scoped ClusterUsage. The ClusterUsage carries no
`by` (it cannot name a namespaced replica): it lives exactly while the cluster hosts replicas, and
`replayDeletion` re-issues a refused delete once the last one has gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modelplane.names import API_VERSION, KIND_CLUSTER

USAGE_API_VERSION = "protection.crossplane.io/v1beta1"
KIND_CLUSTER_USAGE = "ClusterUsage"
NAMED = 3  # replicas named in the reason; the rest are counted


def hosted_reason(replicas: Sequence[str]) -> str:
    """Why the cluster may not be deleted, naming the first replicas (sorted `namespace/name`)."""
    shown = ", ".join(replicas[:NAMED])
    more = f" and {len(replicas) - NAMED} more" if len(replicas) > NAMED else ""
    noun = "ModelReplica runs" if len(replicas) == 1 else "ModelReplicas run"
    return (
        f"{len(replicas)} {noun} on this InferenceCluster ({shown}{more}): drain it with a NoExecute taint or "
        "remove them first; a refused delete is replayed once none is left"
    )


def cluster_usage(cluster: str, replicas: Sequence[str]) -> dict[str, Any]:
    """A ClusterUsage that blocks deleting InferenceCluster `cluster` while `replicas` (not empty) run on it."""
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": KIND_CLUSTER_USAGE,
        "spec": {
            "of": {"apiVersion": API_VERSION, "kind": KIND_CLUSTER, "resourceRef": {"name": cluster}},
            "reason": hosted_reason(replicas),
            "replayDeletion": True,
        },
    }
