"""ModelDeployment wire models and their conversion into a `model.Deployment`.

The shape rules the XRD enforces with CEL are re-checked here, because `crossplane render` and
tests feed XRs that never went through admission.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import BeforeValidator, Field, field_validator, model_validator

from modelplane import model as m
from modelplane.api._wire import Count, Int, Wire, maybe, unique, validate
from modelplane.api.common import (
    DeviceConstraint,
    LabelSelector,
    ModelSpec,
    NameRef,
    Parallelism,
    Serving,
    Toleration,
    Worker,
)
from modelplane.api.kai import Scheduling
from modelplane.api.model_ref import derive_model, served_name
from modelplane.api.pod import NO_EXTENDED_RESOURCES, PodTemplate, reject_reserved
from modelplane.cache import served_from_cache
from modelplane.errors import SpecError

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_PERCENT = re.compile(r"^(100|[1-9]?[0-9])%$")
MAX_BUDGET = 1024  # as many as spec.replicas may ask


def _int_or_percent(value: object) -> object:
    """maxSurge/maxUnavailable: a whole number (Struct sends floats) or a percent from 0% to 100%."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool):
        msg = "must be an integer or a percent"
        raise ValueError(msg)
    if isinstance(value, int):
        if not 0 <= value <= MAX_BUDGET:
            msg = f"must be from 0 to {MAX_BUDGET}, got {value}"
            raise ValueError(msg)
        return value
    if isinstance(value, str) and _PERCENT.match(value):
        return value
    msg = f"must be an integer or a percent from 0% to 100%, got {str(value)[:40]!r}"
    raise ValueError(msg)


class CelSelector(Wire):
    cel: str = Field(min_length=1)


class DeviceRequest(Wire):
    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    count: Count = Field(default=1, le=64)
    selectors: tuple[CelSelector, ...] = Field(min_length=1, max_length=8)

    def to_domain(self) -> m.DeviceRequest:
        return m.DeviceRequest(name=self.name, count=self.count, selectors=tuple(s.cel for s in self.selectors))


class NodeSelector(Wire):
    devices: tuple[DeviceRequest, ...] = Field(min_length=1, max_length=16)
    constraints: tuple[DeviceConstraint, ...] | None = Field(default=None, max_length=8)

    @field_validator("devices")
    @classmethod
    def _unique(cls, devices: tuple[DeviceRequest, ...]) -> tuple[DeviceRequest, ...]:
        unique("device request names", [d.name for d in devices])
        return devices

    @model_validator(mode="after")
    def _known_requests(self) -> Self:
        names = {d.name for d in self.devices}
        for c in self.constraints or ():
            unknown = sorted(set(c.requests or ()) - names)
            if unknown:
                msg = f"constraint names unknown device requests: {', '.join(unknown)}"
                raise ValueError(msg)
        return self


class Member(Wire):
    role: Literal["Standalone", "Leader", "Worker"] = "Standalone"
    worker: Worker | None = None
    node_selector: NodeSelector | None = None
    template: PodTemplate

    @model_validator(mode="after")
    def _worker_only_on_worker(self) -> Self:
        if self.worker is not None and self.role != "Worker":
            msg = f"worker may only be set on a Worker member, not {self.role}"
            raise ValueError(msg)
        return self

    def to_domain(self) -> m.Member:
        return m.Member(
            role=m.Role(self.role),
            worker_nodes=worker_nodes(self.role, self.worker),
            device_requests=tuple(d.to_domain() for d in self.node_selector.devices) if self.node_selector else (),
            constraints=tuple(c.to_domain() for c in (self.node_selector.constraints or ()))
            if self.node_selector
            else (),
            template=self.template.model_dump(mode="json", by_alias=True, exclude_none=True),
        )


def worker_nodes(role: str, worker: Worker | None) -> int:
    if role != "Worker":
        return 0
    return worker.nodes if worker else Worker().nodes


def check_member_roles(roles: list[str]) -> None:
    """An engine is one Standalone member, or one Leader plus one Worker."""
    if roles == ["Standalone"] or sorted(roles) == ["Leader", "Worker"]:
        return
    msg = f"members must be one Standalone, or one Leader and one Worker; got {', '.join(roles) or 'none'}"
    raise ValueError(msg)


class Engine(Wire):
    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    copies: Count = Field(default=1, le=64)
    phase: Literal["Prefill", "Decode"] | None = None
    parallelism: Parallelism | None = None
    members: tuple[Member, ...] = Field(min_length=1, max_length=2)

    @model_validator(mode="after")
    def _shape(self) -> Self:
        check_member_roles([x.role for x in self.members])
        if not any(x.node_selector for x in self.members):
            msg = "at least one member of an engine needs a nodeSelector"
            raise ValueError(msg)
        return self

    def to_domain(self) -> m.Engine:
        return m.Engine(
            name=self.name,
            copies=self.copies,
            phase=maybe(self.phase, m.Phase),
            parallelism=maybe(self.parallelism, Parallelism.to_domain),
            members=tuple(x.to_domain() for x in self.members),
        )


def check_phases(mode: str, phases: list[str | None]) -> None:
    """PrefillDecode: exactly one Prefill and one Decode engine and nothing else; Unified: no phases."""
    if mode == "PrefillDecode":
        if sorted(p or "" for p in phases) != ["Decode", "Prefill"]:
            msg = "PrefillDecode serving needs exactly two engines, one with phase Prefill and one with phase Decode"
            raise ValueError(msg)
    elif any(phases):
        msg = "engine phase may only be set when serving.mode is PrefillDecode"
        raise ValueError(msg)


class Placement(Wire):
    spread: Literal["Preferred", "Strict"] = "Preferred"
    moves: Literal["Allowed", "Never"] = "Allowed"


class TemplateSpec(Wire):
    model: ModelSpec | None = None
    cluster_selector: LabelSelector | None = None
    tolerations: tuple[Toleration, ...] | None = Field(default=None, max_length=32)
    serving: Serving | None = None
    scheduling: Scheduling | None = None
    placement: Placement | None = None
    engines: tuple[Engine, ...] = Field(min_length=1, max_length=8)
    model_cache_ref: NameRef | None = None  # serve from this ModelCache (modelplane.cache)

    @field_validator("engines")
    @classmethod
    def _unique(cls, engines: tuple[Engine, ...]) -> tuple[Engine, ...]:
        unique("engine names", [e.name for e in engines])
        return engines

    @model_validator(mode="after")
    def _phases(self) -> Self:
        check_phases((self.serving or Serving()).mode, [e.phase for e in self.engines])
        return self


class TemplateMetadata(Wire):
    labels: dict[str, str] | None = Field(default=None, max_length=32)

    @field_validator("labels")
    @classmethod
    def _no_reserved(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        return reject_reserved(labels)


class Template(Wire):
    metadata: TemplateMetadata | None = None
    spec: TemplateSpec


IntOrPercent = Annotated[int | str, BeforeValidator(_int_or_percent)]


class Rollout(Wire):
    max_unavailable: IntOrPercent = 1
    max_surge: IntOrPercent = 1
    progress_deadline_seconds: Int = Field(default=600, ge=1, le=86_400)
    paused: bool = False

    def to_domain(self) -> m.RolloutStrategy:
        return m.RolloutStrategy(
            max_unavailable=self.max_unavailable,
            max_surge=self.max_surge,
            progress_deadline_seconds=self.progress_deadline_seconds,
            paused=self.paused,
        )


class DeploymentSpec(Wire):
    replicas: Int = Field(default=1, ge=0, le=1024)  # the XRD maximum: every replica is per-item work
    template: Template
    rollout: Rollout | None = None
    crossplane: dict[str, Any] | None = None  # Crossplane's own machinery on observed XRs


def parse_deployment(obj: Mapping[str, Any], *, namespace_labels: Mapping[str, str] | None = None) -> m.Deployment:
    """A ModelDeployment XR (as a dict) as a `model.Deployment`; raises SpecError naming the bad field."""
    meta = metadata(obj)
    spec = validate(DeploymentSpec, obj.get("spec"), "spec", context={NO_EXTENDED_RESOURCES: True})
    tpl = spec.template.spec
    serving = tpl.serving or Serving()
    scheduling = tpl.scheduling or Scheduling()
    engines = tuple(e.to_domain() for e in tpl.engines)
    mode = m.ServingMode(serving.mode)
    namespace = str(meta.get("namespace") or "default")
    model = tpl.model.to_domain() if tpl.model else derive_model(engines, mode)
    if tpl.model_cache_ref is not None:
        served = served_name(engines, mode)
        model = served_from_cache(model, namespace=namespace, cache=tpl.model_cache_ref.name, served_name=served)
    return m.Deployment(
        namespace=namespace,
        name=str(meta["name"]),
        replicas=spec.replicas,
        engines=engines,
        model=model,
        cluster_selector=maybe(tpl.cluster_selector, LabelSelector.to_domain),
        tolerations=tuple(t.to_domain() for t in tpl.tolerations or ()),
        serving_mode=mode,
        router=serving.router_domain(),
        base_refs=serving.base_refs_domain(),
        queue=scheduling.queue,
        priority_class_name=scheduling.priority_class_name,
        spread=m.SpreadPolicy((tpl.placement or Placement()).spread),
        movable=(tpl.placement or Placement()).moves == "Allowed",
        exclusive_nodes=scheduling.exclusive_nodes,
        template_labels=dict((spec.template.metadata or TemplateMetadata()).labels or {}),
        rollout=spec.rollout.to_domain() if spec.rollout else m.RolloutStrategy(),
        namespace_labels=dict(namespace_labels or {}),
        model_cache=tpl.model_cache_ref.name if tpl.model_cache_ref else None,
    )


def metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object's metadata; a missing name is a SpecError."""
    meta: Any = obj.get("metadata") or {}
    if not isinstance(meta, Mapping) or not meta.get("name"):  # pyright: ignore[reportUnknownMemberType]
        msg = "metadata.name: required"
        raise SpecError(msg)
    return meta  # pyright: ignore[reportUnknownVariableType]
