"""ModelReplica wire models: the observed XR as a `model.ModelReplica`, and the desired XR from one.

`replica_manifest` writes only the fields the scheduler owns (no status, no spec.crossplane), so
`parse_replica(replica_manifest(r)) == r` for every replica whose templates are already in wire
form (what `parse_deployment` produces). Identity lives in the labels: deployment, cluster and
replica index; the remaining labels of an observed replica are the deployment's template labels
(labels under modelplane.ai/ and crossplane.io/ are machinery and not carried over).

Replicas composed by Modelplane read too, so a fleet migrating from it keeps its accounting:
selectors as `cel: <string>` (ours are DRA's `cel: {expression}`), no spec.scheduling (queue
`default`), no replica-index label (index 0, as Modelplane reads it), and `modelCacheRef`
(accepted, no effect). A replica without a deployment label belongs to no deployment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any, Literal, Self

from pydantic import BeforeValidator, Field, StrictBool, field_validator, model_validator

from modelplane import model as m
from modelplane.api._wire import Count, Observed, Wire, dump, maybe, unique, validate
from modelplane.api.cluster import Condition, KServe
from modelplane.api.common import DeviceConstraint, ModelSpec, NameRef, Parallelism, Serving, Toleration, Worker
from modelplane.api.deployment import DNS_LABEL, check_member_roles, check_phases, metadata, worker_nodes
from modelplane.api.kai import PriorityClassName, QueueName
from modelplane.api.pod import PodTemplate
from modelplane.errors import SpecError
from modelplane.names import (
    API_VERSION,
    CONDITION_REPLICA_READY,
    KAI_DEFAULT_PRIORITY_CLASS,
    KAI_DEFAULT_QUEUE,
    KIND_REPLICA,
    LABEL_CLUSTER,
    LABEL_DEPLOYMENT,
    LABEL_REPLICA_INDEX,
    LABEL_REVISION,
    REASON_REPLACING,
    RESERVED_LABEL_PREFIX,
)

MACHINERY_PREFIXES = (RESERVED_LABEL_PREFIX, "crossplane.io/")
MAX_REPLICA_INDEX = 99_999  # indexes are the lowest free per cluster, so below the 1,024 replicas a deployment may ask


class CelExpression(Wire):
    expression: str = Field(min_length=1)


def _cel_string(value: object) -> object:
    """Modelplane's replicas carry a selector as `cel: <string>`, ours as DRA's `cel: {expression}`."""
    return {"expression": value} if isinstance(value, str) else value


class ResolvedSelector(Wire):
    cel: Annotated[CelExpression, BeforeValidator(_cel_string)]


class ResolvedDeviceRequest(Wire):
    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    device_class_name: str = Field(min_length=1, max_length=253)
    count: Count = Field(default=1, le=64)
    selectors: tuple[ResolvedSelector, ...] | None = Field(default=None, max_length=8)

    def to_domain(self) -> m.ResolvedDeviceRequest:
        return m.ResolvedDeviceRequest(
            name=self.name,
            device_class_name=self.device_class_name,
            count=self.count,
            selectors=tuple(s.cel.expression for s in self.selectors or ()),
        )

    @classmethod
    def from_domain(cls, r: m.ResolvedDeviceRequest) -> ResolvedDeviceRequest:
        selectors = tuple(ResolvedSelector(cel=CelExpression(expression=s)) for s in r.selectors)
        return cls(name=r.name, device_class_name=r.device_class_name, count=r.count, selectors=selectors or None)


class HeldMember(Wire):
    """A member as the ledger charges it: its pool and devices, no template (a superseded one, held)."""

    role: Literal["Standalone", "Leader", "Worker"] = "Standalone"
    worker: Worker | None = None
    node_pool_name: str = Field(min_length=1, max_length=63)
    device_requests: tuple[ResolvedDeviceRequest, ...] | None = Field(default=None, max_length=16)

    def to_domain(self) -> m.PlacedMember:
        return m.PlacedMember(
            role=m.Role(self.role),
            worker_nodes=worker_nodes(self.role, self.worker),
            pool=self.node_pool_name,
            device_requests=tuple(r.to_domain() for r in self.device_requests or ()),
        )

    @classmethod
    def from_domain(cls, p: m.PlacedMember) -> HeldMember:
        return cls(**_held_fields(p))


def _held_fields(p: m.PlacedMember) -> dict[str, Any]:
    return {
        "role": p.role.value,
        "worker": Worker(nodes=p.worker_nodes) if p.role is m.Role.WORKER else None,
        "node_pool_name": p.pool,
        "device_requests": tuple(ResolvedDeviceRequest.from_domain(r) for r in p.device_requests) or None,
    }


class ReplicaMember(HeldMember):
    """A placed member in full: what the ledger charges, plus its constraints and pod template."""

    constraints: tuple[DeviceConstraint, ...] | None = Field(default=None, max_length=8)
    template: PodTemplate

    @field_validator("device_requests")
    @classmethod
    def _unique(cls, requests: tuple[ResolvedDeviceRequest, ...] | None) -> tuple[ResolvedDeviceRequest, ...] | None:
        unique("device request names", [r.name for r in requests or ()])
        return requests

    @model_validator(mode="after")
    def _worker_only_on_worker(self) -> Self:
        if self.worker is not None and self.role != "Worker":
            msg = f"worker may only be set on a Worker member, not {self.role}"
            raise ValueError(msg)
        return self

    def to_domain(self) -> m.PlacedMember:
        return replace(
            super().to_domain(),
            constraints=tuple(c.to_domain() for c in self.constraints or ()),
            template=dump(self.template),
        )

    @classmethod
    def from_domain(cls, p: m.PlacedMember) -> ReplicaMember:
        return cls(
            **_held_fields(p),
            constraints=tuple(DeviceConstraint.from_domain(c) for c in p.constraints) or None,
            template=PodTemplate.model_validate(p.template),
        )


class ReplicaEngine(Wire):
    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    copies: Count = Field(default=1, le=64)
    phase: Literal["Prefill", "Decode"] | None = None
    parallelism: Parallelism | None = None
    members: tuple[ReplicaMember, ...] = Field(min_length=1, max_length=2)
    # members on pools of one fabric: the KAI topology level its pods keep within one domain of
    fabric_topology_level: str | None = Field(default=None, min_length=1, max_length=317)

    @model_validator(mode="after")
    def _shape(self) -> Self:
        check_member_roles([x.role for x in self.members])
        return self

    def to_domain(self) -> m.PlacedEngine:
        return m.PlacedEngine(
            name=self.name,
            copies=self.copies,
            phase=maybe(self.phase, m.Phase),
            parallelism=maybe(self.parallelism, Parallelism.to_domain),
            members=tuple(x.to_domain() for x in self.members),
            fabric_level=self.fabric_topology_level,
        )

    @classmethod
    def from_domain(cls, e: m.PlacedEngine) -> ReplicaEngine:
        return cls(
            name=e.name,
            copies=e.copies,
            phase=e.phase.value if e.phase else None,
            parallelism=maybe(e.parallelism, Parallelism.from_domain),
            members=tuple(ReplicaMember.from_domain(x) for x in e.members),
            fabric_topology_level=e.fabric_level,
        )


class HeldEngine(Wire):
    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    copies: Count = Field(default=1, le=64)
    members: tuple[HeldMember, ...] = Field(min_length=1, max_length=2)

    def to_domain(self) -> m.PlacedEngine:
        return m.PlacedEngine(name=self.name, copies=self.copies, members=tuple(x.to_domain() for x in self.members))

    @classmethod
    def from_domain(cls, e: m.PlacedEngine) -> HeldEngine:
        return cls(name=e.name, copies=e.copies, members=tuple(HeldMember.from_domain(x) for x in e.members))


class Replacing(Wire):
    """What the LLMInferenceServices a rename supersedes hold while they serve beside the new ones."""

    engines: tuple[HeldEngine, ...] = Field(min_length=1, max_length=8)


class ReplicaScheduling(Wire):
    queue: QueueName
    priority_class_name: PriorityClassName | None = None
    topology: str | None = None
    required_topology_level: str | None = Field(default=None, min_length=1, max_length=317)
    preferred_topology_level: str | None = Field(default=None, min_length=1, max_length=317)
    # absent (every replica before the field): not exclusive; strict, as the ledger's own read is (api/ledger.py)
    exclusive_nodes: StrictBool | None = None


class ReplicaSpec(Wire):
    cluster_name: str = Field(min_length=1, max_length=253)
    provider_config_ref: NameRef | None = None
    workload_namespace: str = Field(default="modelplane-workloads", min_length=1, max_length=63, pattern=DNS_LABEL)
    model: ModelSpec | None = None
    serving: Serving | None = None
    tolerations: tuple[Toleration, ...] | None = Field(default=None, max_length=32)
    scheduling: ReplicaScheduling = Field(default_factory=lambda: ReplicaScheduling(queue=KAI_DEFAULT_QUEUE))
    kserve: KServe | None = None  # the cluster's, as the scheduler copied it; absent = the newest
    engines: tuple[ReplicaEngine, ...] = Field(min_length=1, max_length=8)
    replacing: Replacing | None = None
    model_cache_ref: NameRef | None = None  # the ModelCache whose volume serves the model (modelplane.cache)
    crossplane: dict[str, Any] | None = None  # Crossplane's own machinery on observed XRs

    @field_validator("engines")
    @classmethod
    def _unique(cls, engines: tuple[ReplicaEngine, ...]) -> tuple[ReplicaEngine, ...]:
        unique("engine names", [e.name for e in engines])
        return engines

    @model_validator(mode="after")
    def _phases(self) -> Self:
        check_phases((self.serving or Serving()).mode, [e.phase for e in self.engines])
        return self


class ReplicaStatus(Observed):
    conditions: tuple[Condition, ...] | None = None
    rendered_revision: str | None = None


def ready_at(revision: str | None, *, ready: bool, rendered: str | None) -> bool:
    """Whether a ModelReplica serves `revision` (its label): Ready, for the revision it last rendered.

    Its Ready condition is written when its handler renders, so after a deployment moves it to a new
    revision the old Ready stands until the handler has rendered the new one. A replica whose handler
    records no revision (older versions) is taken at its Ready condition.
    """
    return ready and (rendered is None or revision is None or rendered == revision)


def parse_replica(obj: Mapping[str, Any]) -> m.ModelReplica:
    """An observed ModelReplica XR (as a dict) as a `model.ModelReplica`; SpecError names the bad field."""
    meta = metadata(obj)
    labels: Mapping[str, str] = meta.get("labels") or {}
    spec = validate(ReplicaSpec, obj.get("spec"), "spec")
    status = validate(ReplicaStatus, obj.get("status") or {}, "status")
    scheduling = spec.scheduling
    serving = spec.serving or Serving()
    return m.ModelReplica(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        deployment=owner(labels),
        cluster=labels.get(LABEL_CLUSTER) or spec.cluster_name,
        index=replica_index(labels.get(LABEL_REPLICA_INDEX)),
        engines=tuple(e.to_domain() for e in spec.engines),
        provider_config_name=spec.provider_config_ref.name if spec.provider_config_ref else "",
        workload_namespace=spec.workload_namespace,
        model=maybe(spec.model, ModelSpec.to_domain),
        model_cache=spec.model_cache_ref.name if spec.model_cache_ref else None,
        serving_mode=m.ServingMode(serving.mode),
        router=serving.router_domain(),
        base_refs=serving.base_refs_domain(),
        tolerations=tuple(t.to_domain() for t in spec.tolerations or ()),
        queue=scheduling.queue,
        priority_class_name=scheduling.priority_class_name or KAI_DEFAULT_PRIORITY_CLASS,
        topology=scheduling.topology or None,
        topology_required_level=scheduling.required_topology_level,
        topology_preferred_level=scheduling.preferred_topology_level,
        exclusive_nodes=bool(scheduling.exclusive_nodes),
        labels={k: v for k, v in sorted(labels.items()) if not k.startswith(MACHINERY_PREFIXES)},
        ready=ready_at(
            labels.get(LABEL_REVISION) or None,
            ready=any(c.type == "Ready" and c.status == "True" for c in status.conditions or ()),
            rendered=status.rendered_revision,
        ),
        kserve_version=spec.kserve.version if spec.kserve else None,
        revision=labels.get(LABEL_REVISION) or None,
        replacing=tuple(e.to_domain() for e in spec.replacing.engines) if spec.replacing else (),
        serving_previous=any(
            c.type == CONDITION_REPLICA_READY and c.reason == REASON_REPLACING for c in status.conditions or ()
        ),
    )


def owner(labels: Mapping[str, str]) -> str:
    """The deployment label; "" when absent: no deployment's replica, charged in every ledger (as in Modelplane)."""
    return str(labels.get(LABEL_DEPLOYMENT) or "")


# ASCII digits only: str.isdigit() and int() also take other scripts' digits (ARABIC-INDIC DIGIT
# ONE is 1), isdigit() takes superscripts that int() then refuses, and int() refuses 4,300+ digits.
_INDEX = re.compile(r"[0-9]{1,5}")  # up to MAX_REPLICA_INDEX


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:32]}... ({len(text)} characters)"  # noqa: PLR2004


def replica_index(value: object) -> int:
    """The replica-index label as an int; absent is 0 (a Modelplane replica from before the label, as there)."""
    if value is None:
        return 0
    if not isinstance(value, str) or not _INDEX.fullmatch(value):
        msg = (
            f"metadata.labels[{LABEL_REPLICA_INDEX}]: must be a decimal number from 0 to {MAX_REPLICA_INDEX} "
            f"in ASCII digits, got {_shown(value)}"
        )
        raise SpecError(msg)
    return int(value)


def replica_manifest(replica: m.ModelReplica) -> dict[str, Any]:
    """The desired ModelReplica XR: identity labels plus the spec fields the scheduler owns (no status)."""
    spec = ReplicaSpec(
        cluster_name=replica.cluster,
        provider_config_ref=NameRef(name=replica.provider_config_name) if replica.provider_config_name else None,
        workload_namespace=replica.workload_namespace,
        model=maybe(replica.model, ModelSpec.from_domain),
        model_cache_ref=NameRef(name=replica.model_cache) if replica.model_cache else None,
        serving=Serving.from_domain(replica.serving_mode, replica.router, replica.base_refs),
        tolerations=tuple(Toleration.from_domain(t) for t in replica.tolerations) or None,
        scheduling=ReplicaScheduling(
            queue=replica.queue,
            priority_class_name=replica.priority_class_name,
            topology=replica.topology,
            required_topology_level=replica.topology_required_level,
            preferred_topology_level=replica.topology_preferred_level,
            exclusive_nodes=True if replica.exclusive_nodes else None,  # absent otherwise: manifests stay as they were
        ),
        kserve=KServe(version=replica.kserve_version) if replica.kserve_version else None,
        engines=tuple(ReplicaEngine.from_domain(e) for e in replica.engines),
        replacing=Replacing(engines=tuple(HeldEngine.from_domain(e) for e in replica.replacing))
        if replica.replacing
        else None,
    )
    labels = {
        **{k: v for k, v in replica.labels.items() if not k.startswith(MACHINERY_PREFIXES)},
        LABEL_DEPLOYMENT: replica.deployment,
        LABEL_CLUSTER: replica.cluster,
        LABEL_REPLICA_INDEX: str(replica.index),
        **({LABEL_REVISION: replica.revision} if replica.revision else {}),
    }
    return {
        "apiVersion": API_VERSION,
        "kind": KIND_REPLICA,
        "metadata": {"name": replica.name, "namespace": replica.namespace, "labels": dict(sorted(labels.items()))},
        "spec": dump(spec),
    }
