"""Which KAI queue and priority class a namespace may use on a cluster, and what a refusal says."""

from dataclasses import dataclass

import pytest
from modelplane.model import Cluster, KaiAllowance
from modelplane.scheduler.kai import default_queue, refusal

from tests.scheduler.factories import cluster

ALLOWANCES = {"team-a": KaiAllowance(queues=("team-a-premium",), priority_class_names=("build",))}
WHERE = "(spec.kai: defaultQueue, queuePerNamespace, defaultPriorityClassName, namespaces)"


@dataclass(frozen=True)
class Case:
    name: str
    cluster: Cluster
    namespace: str
    queue: str
    priority_class: str
    want: tuple[str, str | None]  # (the namespace's default queue, the refusal)


CASES = [
    Case(
        "KAI's defaults are always allowed",
        cluster("c"),
        "team-a",
        "default-queue",
        "inference",
        ("default-queue", None),
    ),
    Case(
        "a queue listed for the namespace is allowed beside the default",
        cluster("c", kai_namespaces=ALLOWANCES),
        "team-a",
        "team-a-premium",
        "build",
        ("default-queue", None),
    ),
    Case(
        "another namespace's allowance is not this one's",
        cluster("c", kai_namespaces=ALLOWANCES),
        "team-b",
        "team-a-premium",
        "build",
        (
            "default-queue",
            "Namespace team-b may not use queue team-a-premium or priority class build on InferenceCluster c: "
            f"it may use queue default-queue and priority class inference {WHERE}",
        ),
    ),
    Case(
        "with a queue per namespace the cluster default is no longer everyone's",
        cluster("c", queue_per_namespace=True, kai_namespaces=ALLOWANCES),
        "team-a",
        "default-queue",
        "inference",
        (
            "team-a",
            "Namespace team-a may not use queue default-queue on InferenceCluster c: it may use queue team-a, "
            f"team-a-premium and priority class build, inference {WHERE}",
        ),
    ),
    Case(
        "a system-* class is refused even when a cluster built in code lists it",
        cluster("c", kai_namespaces={"team-a": KaiAllowance(priority_class_names=("system-node-critical",))}),
        "team-a",
        "default-queue",
        "system-node-critical",
        (
            "default-queue",
            "Namespace team-a may not use priority class system-node-critical on InferenceCluster c: it may use "
            f"queue default-queue and priority class inference {WHERE}",
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kai_policy(case: Case) -> None:
    got = (
        default_queue(case.cluster, case.namespace),
        refusal(case.cluster, case.namespace, queue=case.queue, priority_class_name=case.priority_class),
    )
    assert got == case.want
