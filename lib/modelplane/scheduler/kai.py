"""Which KAI queues and priority classes a namespace may use on a cluster.

Workload namespaces are shared by every team a cluster admits, and KAI charges a PodGroup to the
queue it names and ranks it by its priority class: a deployment free to name any would spend
another team's GPU quota or outrank others. So a namespace may use its default queue (the queue
named after it when the cluster says `queuePerNamespace`, else the cluster's `defaultQueue`), the
cluster's default priority class, and what the cluster lists for that namespace; nothing else,
and never a `system-*` priority class.
"""

from __future__ import annotations

from modelplane.model import Cluster, KaiAllowance
from modelplane.names import SYSTEM_PRIORITY_PREFIX

_NOTHING_MORE = KaiAllowance()


def default_queue(cluster: Cluster, namespace: str) -> str:
    """The queue a deployment of `namespace` that names none is charged to on `cluster`."""
    return namespace if cluster.queue_per_namespace else cluster.default_queue


def allowed_queues(cluster: Cluster, namespace: str) -> tuple[str, ...]:
    extra = cluster.kai_namespaces.get(namespace, _NOTHING_MORE).queues
    return tuple(sorted({default_queue(cluster, namespace), *extra}))


def allowed_priority_classes(cluster: Cluster, namespace: str) -> tuple[str, ...]:
    extra = cluster.kai_namespaces.get(namespace, _NOTHING_MORE).priority_class_names
    names = {cluster.default_priority_class_name, *extra}
    return tuple(sorted(n for n in names if not n.startswith(SYSTEM_PRIORITY_PREFIX)))


def refusal(cluster: Cluster, namespace: str, *, queue: str, priority_class_name: str) -> str | None:
    """Why `namespace` may not use this queue and priority class on `cluster` (None when it may)."""
    queues = allowed_queues(cluster, namespace)
    classes = allowed_priority_classes(cluster, namespace)
    refused = [f"queue {queue}"] if queue not in queues else []
    refused += [f"priority class {priority_class_name}"] if priority_class_name not in classes else []
    if not refused:
        return None
    return (
        f"Namespace {namespace} may not use {' or '.join(refused)} on InferenceCluster {cluster.name}: "
        f"it may use queue {', '.join(queues)} and priority class {', '.join(classes)} "
        "(spec.kai: defaultQueue, queuePerNamespace, defaultPriorityClassName, namespaces)"
    )
