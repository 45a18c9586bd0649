"""One home for names: API identity, label and annotation keys, condition types and reasons, and
deterministic derivation of object names.

Every generated name is a DNS label (<= 63 characters, lowercase alphanumerics and '-'), the same
for the same inputs, and hash-suffixed when it has to be truncated, so distinct inputs keep
distinct names.
"""

from __future__ import annotations

import hashlib
import re

GROUP = "modelplane.ai"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND_DEPLOYMENT = "ModelDeployment"
KIND_REPLICA = "ModelReplica"
KIND_CLUSTER = "InferenceCluster"
KIND_DEMAND = "ModelDemand"  # what a ModelDeployment states of its demand for the others (stated.py)
KIND_QUOTA = "FleetQuota"  # the platform's fleet-wide GPU quota for the namespaces it selects (quota.py)
KIND_MODEL_CACHE = "ModelCache"  # Modelplane's kind, read where a deployment names one (modelplane.cache)

LABEL_DEPLOYMENT = "modelplane.ai/deployment"
LABEL_CLUSTER = "modelplane.ai/cluster"
LABEL_REPLICA_INDEX = "modelplane.ai/replica-index"
LABEL_POOL = "modelplane.ai/pool"
LABEL_ENGINE = "modelplane.ai/engine"
LABEL_REPLICA = "modelplane.ai/replica"
LABEL_DEPLOYMENT_NAMESPACE = "modelplane.ai/deployment-namespace"
LABEL_REVISION = "modelplane.ai/revision"  # the deployment template revision a ModelReplica renders
RESERVED_LABEL_PREFIX = "modelplane.ai/"

# What a standard KAI install creates (KAI-Scheduler v0.15.0, deployments/kai-scheduler): the queue
# `default-queue` (values.yaml:226 defaultQueue.childName; a PodGroup naming a queue that does not
# exist is never scheduled, pkg/scheduler/cache/cluster_info/cluster_info.go:399 QueueDoesNotExist)
# and the PriorityClass `inference`, value 125 (templates/priorityclasses/inference.yaml:7-8): not
# preemptible, as priority < 100 is (pkg/common/podgroup/preemptible.go:10), and the class KAI's own
# grouper gives serving workloads (pkg/podgrouper/podgrouper/plugins/constants/constants.go:15),
# which `skip-podgrouper` bypasses.
KAI_DEFAULT_QUEUE = "default-queue"
KAI_DEFAULT_PRIORITY_CLASS = "inference"
# PriorityClass names Kubernetes keeps for itself (system-node-critical, system-cluster-critical).
SYSTEM_PRIORITY_PREFIX = "system-"

# Conditions on the ModelDeployment.
CONDITION_REPLICAS_SCHEDULED = "ReplicasScheduled"
CONDITION_REPLICAS_READY = "ReplicasReady"
CONDITION_PROGRESSING = "Progressing"
# Conditions on the ModelReplica.
CONDITION_REPLICA_RENDERED = "ReplicaRendered"
CONDITION_REPLICA_READY = "ReplicaReady"
# Conditions on the ModelDemand.
CONDITION_DEMAND_STATED = "DemandStated"
REASON_STATED = "Stated"
CONDITION_QUOTA_ACCEPTED = "QuotaAccepted"  # a FleetQuota every deployment can read
REASON_ACCEPTED = "Accepted"
# Conditions on the InferenceCluster.
CONDITION_POOLS_PUBLISHED = "GPUPoolsPublished"
# On every kind: Modelplane fields set that have no effect here (modelplane.api.compat).
CONDITION_FIELDS_IGNORED = "FieldsIgnored"
REASON_NO_EFFECT_HERE = "NoEffectHere"
REASON_ALL_FIELDS_USED = "AllFieldsUsed"

REASON_SCHEDULED = "Scheduled"
REASON_SCALED_TO_ZERO = "ScaledToZero"
REASON_INSUFFICIENT_CAPACITY = "InsufficientCapacity"
REASON_NO_SUITABLE_CLUSTER = "NoSuitableCluster"
REASON_WAITING_FOR_MODEL_CACHE = "WaitingForModelCache"
REASON_INVALID_NODE_SELECTOR = "InvalidNodeSelector"
REASON_INVALID_SPEC = "InvalidSpec"
REASON_NO_CLUSTERS = "NoClusters"
REASON_ALL_READY = "AllReplicasReady"
REASON_NOT_ALL_READY = "ReplicasNotReady"
REASON_RENDERED = "Rendered"
REASON_CANNOT_RENDER = "CannotRender"
REASON_READY = "Ready"
REASON_NOT_READY = "NotReady"
REASON_REPLACING = "Replacing"  # Ready through superseded LLMInferenceServices while the new ones come up
REASON_OBJECT_FAILING = "ObjectFailing"  # a composed object reports a failing condition
REASON_PUBLISHED = "Published"
REASON_REPLICAS_PLACED = "ReplicasPlaced"
REASON_REPLICAS_REMOVED = "ReplicasRemoved"
REASON_MAKING_ROOM = "MakingRoom"  # a replica moves so another deployment's unplaced demand fits
REASON_WAITING_FOR_ROOM = "WaitingForRoom"  # another deployment moves a replica to make room for this one
REASON_RECLAIMED = "Reclaimed"  # a replica's borrowed GPUs go back to a team within its fleet quota guarantee
REASON_PREEMPTED = "Preempted"  # a replica gives way to demand of strictly higher priority
REASON_QUOTA_EXCEEDED = "QuotaExceeded"  # the namespace's FleetQuota limit leaves replicas unplaced
REASON_REPLICAS_UPDATED = "ReplicasUpdated"
REASON_RESPONSE_TOO_LARGE = "ResponseTooLarge"
REASON_REPLICAS_RELABELLED = "ReplicasRelabelled"
REASON_NAMESPACE_NOT_ADMITTED = "NamespaceNotAdmitted"
REASON_CLUSTER_NOT_FOUND = "ClusterNotFound"
REASON_NAMESPACE_NOT_FOUND = "NamespaceNotFound"
REASON_SCHEDULING_NOT_ALLOWED = "SchedulingNotAllowed"
# Progressing, after a Deployment's (ReplicaSetUpdated, NewReplicaSetAvailable, DeploymentPaused).
REASON_ROLLING_OUT = "RollingOut"
REASON_ROLLOUT_COMPLETE = "RolloutComplete"
REASON_ROLLOUT_PAUSED = "RolloutPaused"
REASON_PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"

MAX_NAME = 63
MAX_LABEL_VALUE = 63
_HASH_LEN = 8
_INVALID = re.compile(r"[^a-z0-9-]+")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


def label_value_problem(value: str) -> str | None:
    """Why `value` cannot be a Kubernetes label value (None when it can).

    Deployment and cluster names travel as label values (modelplane.ai/deployment,
    modelplane.ai/cluster, and Crossplane's own crossplane.io/composite on every XR), so a name the
    API server accepts for an object can still be one no label may carry.
    """
    if len(value) > MAX_LABEL_VALUE:
        return f"{len(value)} characters, but it is used as a label value, which holds at most {MAX_LABEL_VALUE}"
    if not _LABEL_VALUE.match(value):
        return "it is used as a label value, which takes alphanumerics, '-', '_' and '.' between alphanumerics"
    return None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:_HASH_LEN]


def dns_label(*parts: str | int, always_hash: bool = False) -> str:
    """Join parts with '-' into a DNS label; sanitise, and truncate with a hash suffix past 63 chars.

    The hash covers the raw parts (joined with a separator that cannot appear in them), so two
    different part lists never share a name even when sanitising or truncation makes them alike.
    `always_hash` adds it even to a clean short name, for part lists that may themselves contain
    '-' and so be ambiguous when joined.
    """
    raw = [str(p) for p in parts]
    joined = "-".join(raw)
    clean = _INVALID.sub("-", joined.lower()).strip("-")
    clean = re.sub(r"-{2,}", "-", clean)
    if not always_hash and clean == joined and len(clean) <= MAX_NAME:
        return clean
    suffix = _hash("\x00".join(raw))
    head = clean[: MAX_NAME - _HASH_LEN - 1].rstrip("-")
    return f"{head}-{suffix}" if head else suffix


def replica_name(deployment: str, cluster: str, index: int) -> str:
    """Name of the ModelReplica XR (in the deployment's namespace).

    Deployment and cluster names may both contain '-', so "x" on "a-b" and "x-a" on "b" would
    join alike; the hash suffix keeps every (deployment, cluster, index) distinct.
    """
    return dns_label(deployment, cluster, index, always_hash=True)


def workload_name(namespace: str, deployment: str, index: int, *parts: str, max_length: int = MAX_NAME) -> str:
    """Name of an object on a workload cluster, unique per (namespace, deployment, index, parts).

    Deployments of different namespaces share a cluster's workload namespace, so the deployment's
    namespace is part of every name. The hash suffix is always added: joining with '-' alone is
    ambiguous (namespace "team-a" + deployment "llm" vs "team" + "a-llm"). The name starts with a
    letter (a DNS-1035 label), as Service names derived from it must. `max_length` leaves room for
    suffixes that controllers append (KServe: `<name>-kserve-mn-prefill`).
    """
    raw = [namespace, deployment, str(index), *parts]
    clean = re.sub(r"-{2,}", "-", _INVALID.sub("-", "-".join(raw).lower())).strip("-")
    if clean[:1].isdigit():
        clean = f"x{clean}"
    head = clean[: max_length - _HASH_LEN - 1].rstrip("-")
    suffix = _hash("\x00".join(raw))
    return f"{head}-{suffix}" if head else f"x{suffix}"[:max_length]
