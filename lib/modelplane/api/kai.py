"""KAI names on the wire: queues and priority classes, and what a cluster lets each namespace use.

A queue name is rendered into the pod label `kai.scheduler/queue` and names a KAI Queue object, so
it must be both: a DNS subdomain (an object name) of at most 63 characters (a label value). A
priority class name is a PriorityClass's (a DNS subdomain, at most 253). Names starting with
`system-` are Kubernetes' own classes (the API server refuses any other PriorityClass so named):
no tenant may put a workload there, so no XRD field takes one.
"""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import AfterValidator, Field, field_validator, model_validator

from modelplane import model as m
from modelplane.api._wire import Wire, unique
from modelplane.names import KAI_DEFAULT_PRIORITY_CLASS, KAI_DEFAULT_QUEUE, SYSTEM_PRIORITY_PREFIX

DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
NAMESPACE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
MAX_QUEUE = 63
MAX_PRIORITY_CLASS = 253
MAX_NAMESPACES = 256
MAX_NAMES = 32


def _not_system(name: str) -> str:
    if name.startswith(SYSTEM_PRIORITY_PREFIX):
        msg = f"priority classes named {SYSTEM_PRIORITY_PREFIX}* are Kubernetes' own and may not be used"
        raise ValueError(msg)
    return name


QueueName = Annotated[str, Field(min_length=1, max_length=MAX_QUEUE, pattern=DNS_SUBDOMAIN)]
PriorityClassName = Annotated[
    str, Field(min_length=1, max_length=MAX_PRIORITY_CLASS, pattern=DNS_SUBDOMAIN), AfterValidator(_not_system)
]


class NamespaceAllowance(Wire):
    """The queues and priority classes one namespace may use on the cluster beside the defaults."""

    namespace: str = Field(min_length=1, max_length=63, pattern=NAMESPACE)
    queues: tuple[QueueName, ...] | None = Field(default=None, max_length=MAX_NAMES)
    priority_class_names: tuple[PriorityClassName, ...] | None = Field(default=None, max_length=MAX_NAMES)

    def to_domain(self) -> m.KaiAllowance:
        return m.KaiAllowance(
            queues=tuple(sorted(set(self.queues or ()))),
            priority_class_names=tuple(sorted(set(self.priority_class_names or ()))),
        )


class Kai(Wire):
    default_queue: QueueName = KAI_DEFAULT_QUEUE
    default_priority_class_name: PriorityClassName = KAI_DEFAULT_PRIORITY_CLASS
    queue_per_namespace: bool = False
    namespaces: tuple[NamespaceAllowance, ...] | None = Field(default=None, max_length=MAX_NAMESPACES)
    topology: str | None = None
    required_topology_level: str | None = Field(default=None, min_length=1, max_length=317)
    preferred_topology_level: str | None = Field(default=None, min_length=1, max_length=317)

    @field_validator("namespaces")
    @classmethod
    def _unique(cls, namespaces: tuple[NamespaceAllowance, ...] | None) -> tuple[NamespaceAllowance, ...] | None:
        unique("kai.namespaces", [n.namespace for n in namespaces or ()])
        return namespaces

    @model_validator(mode="after")
    def _levels_need_topology(self) -> Self:
        if self.topology is None and (self.required_topology_level or self.preferred_topology_level):
            msg = "topology levels need a topology"
            raise ValueError(msg)
        return self

    def allowances(self) -> dict[str, m.KaiAllowance]:
        return {n.namespace: n.to_domain() for n in sorted(self.namespaces or (), key=lambda n: n.namespace)}


class Scheduling(Wire):
    """A deployment's KAI scheduling: queue and priority class default to what its cluster sets for its
    namespace; `exclusive_nodes` keeps other deployments' pods off the nodes its pods use."""

    queue: QueueName | None = None
    priority_class_name: PriorityClassName | None = None
    exclusive_nodes: bool = False
