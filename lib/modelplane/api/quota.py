"""FleetQuota and PriorityClass: the platform's objects that decide who gets contested GPUs (modelplane.quota).

A FleetQuota is cluster-scoped, so only the platform writes it; its schema mirrors
apis/fleetquota/definition.yaml. PriorityClasses are read as Kubernetes stores them: only the
name, `value` and `globalDefault` matter here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from modelplane.api._wire import Count, Int, Observed, Wire, unique, validate
from modelplane.api.common import LabelSelector
from modelplane.devices import MAX_EXPRESSION_LENGTH, CelCompileError, compile_selector
from modelplane.errors import SpecError
from modelplane.names import KIND_QUOTA
from modelplane.quota import FleetQuota, Preemption, PriorityClasses, QuotaResource

MAX_NAMESPACES = 256
MAX_GPU_KINDS = 16
MAX_PUBLISHED = 1024  # namespaces a quota's status lists (the XRD bounds the same)
_NAME = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class Gpus(Wire):
    """One kind of GPU: devices the CEL expression matches, guaranteed fleet-wide and at most `limit`."""

    name: str = Field(min_length=1, max_length=63, pattern=_NAME)
    cel: str = Field(min_length=1, max_length=MAX_EXPRESSION_LENGTH)
    guaranteed: Int = Field(default=0, ge=0)
    limit: Int | None = Field(default=None, ge=0)

    @field_validator("cel")
    @classmethod
    def _compiles(cls, expression: str) -> str:
        try:
            compile_selector(expression)
        except CelCompileError as e:
            msg = f"does not compile: {e.detail}"
            raise ValueError(msg) from None
        return expression

    @model_validator(mode="after")
    def _limit_covers_guarantee(self) -> Self:
        if self.limit is not None and self.limit < self.guaranteed:
            msg = f"limit {self.limit} is below guaranteed {self.guaranteed}"
            raise ValueError(msg)
        return self


class QuotaSpec(Wire):
    namespaces: tuple[str, ...] = Field(default=(), max_length=MAX_NAMESPACES)
    namespace_selector: LabelSelector | None = None
    gpus: tuple[Gpus, ...] = Field(default=(), max_length=MAX_GPU_KINDS)
    preemption: Literal["Never", "WithinQuota", "Any"] = "Never"
    max_evictions: Count = Field(default=1, le=64)
    crossplane: dict[str, Any] | None = None  # Crossplane's own machinery on observed XRs

    @field_validator("namespaces")
    @classmethod
    def _namespaces(cls, namespaces: tuple[str, ...]) -> tuple[str, ...]:
        unique("namespaces", list(namespaces))
        return tuple(sorted(namespaces))

    @field_validator("gpus")
    @classmethod
    def _gpus(cls, gpus: tuple[Gpus, ...]) -> tuple[Gpus, ...]:
        unique("GPU kind names", [g.name for g in gpus])
        return gpus


def parse_quota(obj: Mapping[str, Any]) -> FleetQuota:
    """A FleetQuota object; SpecError when its spec is not one the schema allows."""
    name = _name(obj)
    if not name:
        msg = f"{KIND_QUOTA}: metadata.name is missing"
        raise SpecError(msg)
    spec = validate(QuotaSpec, obj.get("spec"), "spec")
    return FleetQuota(
        name=name,
        namespaces=tuple(sorted({*spec.namespaces, *_published(obj)})),
        namespace_selector=spec.namespace_selector.to_domain() if spec.namespace_selector is not None else None,
        resources=tuple(
            QuotaResource(name=g.name, selector=g.cel, guaranteed=g.guaranteed, limit=g.limit) for g in spec.gpus
        ),
        preemption=Preemption(spec.preemption),
        max_evictions=spec.max_evictions,
    )


class _PriorityClass(Observed):
    value: Int
    global_default: bool = False


def priority_classes(objs: Iterable[Mapping[str, Any]]) -> PriorityClasses:
    """PriorityClass values by name; one that cannot be read is left out (it then ranks at the default)."""
    values: dict[str, int] = {}
    default = 0
    for obj in objs:
        name = _name(obj)
        try:
            pc = validate(_PriorityClass, obj, "PriorityClass")
        except SpecError:
            continue
        if name:
            values[name] = pc.value
            if pc.global_default:
                default = pc.value
    return PriorityClasses(values=dict(sorted(values.items())), global_default=default)


def _published(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """The namespaces its own reconcile found namespaceSelector to select (status.namespaces); () when malformed."""
    status: object = obj.get("status")
    found: object = status.get("namespaces") if isinstance(status, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(found, list):
        return ()
    names = [n for n in found if isinstance(n, str)]  # pyright: ignore[reportUnknownVariableType]
    return tuple(names[:MAX_PUBLISHED])


def _name(obj: Mapping[str, Any]) -> str:
    meta: object = obj.get("metadata")
    name: object = meta.get("name") if isinstance(meta, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return name if isinstance(name, str) else ""
