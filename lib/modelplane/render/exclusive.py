"""Exclusive nodes: pod anti-affinity that keeps other deployments' pods off an exclusive deployment's nodes.

Every pod Modelplane renders carries `modelplane.ai/deployment` and `modelplane.ai/deployment-namespace`
(KServe 0.17 and later; see `llmis`). An exclusive deployment's pods get two required anti-affinity
terms per node (`kubernetes.io/hostname`), in every namespace (`namespaceSelector: {}`), since
deployments of several namespaces share a cluster's workload namespace and others may be elsewhere:

- a pod of a deployment of another name;
- a pod of a deployment of the same name in another namespace.

Together they match exactly the pods of every other deployment, and never the deployment's own (its
replicas may share a node). Required anti-affinity holds both ways: kube-scheduler's InterPodAffinity
filter, which KAI runs as its PodAffinity predicate (KAI pkg/scheduler/k8s_internal/predicates,
v0.20.1), also refuses an incoming pod a node whose running pods' anti-affinity matches it. So
other deployments' pods stay off the exclusive pods' nodes and the exclusive pods stay off theirs,
which is what the ledger charges (scheduler/capacity.py: whole nodes).
"""

from __future__ import annotations

from typing import Any

from modelplane import names

HOSTNAME = "kubernetes.io/hostname"


def anti_affinity_terms(namespace: str, deployment: str) -> list[dict[str, Any]]:
    """The required pod anti-affinity terms of an exclusive deployment's pods."""
    terms = [
        [
            {"key": names.LABEL_DEPLOYMENT, "operator": "Exists"},
            {"key": names.LABEL_DEPLOYMENT, "operator": "NotIn", "values": [deployment]},
        ],
        [
            {"key": names.LABEL_DEPLOYMENT, "operator": "In", "values": [deployment]},
            {"key": names.LABEL_DEPLOYMENT_NAMESPACE, "operator": "NotIn", "values": [namespace]},
        ],
    ]
    return [{"labelSelector": {"matchExpressions": e}, "namespaceSelector": {}, "topologyKey": HOSTNAME} for e in terms]


def anti_affinity(namespace: str, deployment: str) -> dict[str, Any]:
    """The PodSpec `affinity` of an exclusive deployment's pods (the curated template has none of its own)."""
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": anti_affinity_terms(namespace, deployment)
        }
    }
