"""Wire shapes shared by the kinds: label selectors, tolerations, taints, references, the model."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from modelplane import model as m
from modelplane.api._wire import Int, Wire


class LabelSelectorRequirement(Wire):
    key: str = Field(min_length=1)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _values_match_operator(self) -> Self:
        has_values = bool(self.values)
        if self.operator in {"In", "NotIn"} and not has_values:
            msg = f"operator {self.operator} needs at least one value"
            raise ValueError(msg)
        if self.operator in {"Exists", "DoesNotExist"} and has_values:
            msg = f"operator {self.operator} takes no values"
            raise ValueError(msg)
        return self


class LabelSelector(Wire):
    match_labels: dict[str, str] | None = None
    match_expressions: tuple[LabelSelectorRequirement, ...] | None = None

    def to_domain(self) -> m.LabelSelector:
        return m.LabelSelector(
            match_labels=dict(self.match_labels or {}),
            match_expressions=tuple(
                m.LabelSelectorRequirement(key=r.key, operator=r.operator, values=tuple(r.values or ()))
                for r in self.match_expressions or ()
            ),
        )


class Toleration(Wire):
    key: str | None = None
    operator: Literal["Exists", "Equal"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "NoExecute", ""] | None = None

    @model_validator(mode="after")
    def _kubernetes_rules(self) -> Self:
        if self.operator == "Equal" and not self.key:
            msg = "an Equal toleration needs a key (use operator Exists to tolerate every taint)"
            raise ValueError(msg)
        if self.operator == "Exists" and self.value:
            msg = "an Exists toleration takes no value"
            raise ValueError(msg)
        return self

    def to_domain(self) -> m.Toleration:
        return m.Toleration(
            key=self.key or "",
            operator=self.operator,
            value=self.value or "",
            effect=m.TaintEffect(self.effect) if self.effect else None,
        )

    @classmethod
    def from_domain(cls, t: m.Toleration) -> Toleration:
        return cls(
            key=t.key or None,
            operator="Exists" if t.operator == "Exists" else "Equal",
            value=t.value or None,
            effect=t.effect.value if t.effect else None,
        )


class Taint(Wire):
    key: str = Field(min_length=1)
    value: str | None = None
    effect: Literal["NoSchedule", "NoExecute"]

    def to_domain(self) -> m.Taint:
        return m.Taint(key=self.key, value=self.value or "", effect=m.TaintEffect(self.effect))


class NameRef(Wire):
    name: str = Field(min_length=1)


DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


MAX_MODEL_URI = 2048  # the XRDs' bounds on spec.model
MAX_MODEL_NAME = 253


class ModelSpec(Wire):
    uri: str = Field(min_length=1, max_length=MAX_MODEL_URI)
    name: str | None = Field(default=None, max_length=MAX_MODEL_NAME)
    storage_secret_name: str | None = Field(default=None, min_length=1, max_length=253, pattern=DNS_SUBDOMAIN)

    def to_domain(self) -> m.ModelRef:
        return m.ModelRef(uri=self.uri, name=self.name, storage_secret_name=self.storage_secret_name)

    @classmethod
    def from_domain(cls, ref: m.ModelRef) -> ModelSpec:
        return cls(uri=ref.uri, name=ref.name, storage_secret_name=ref.storage_secret_name)


class Router(Wire):
    """The LLMInferenceService `router` parts, passed through as written (KServe validates them)."""

    gateway: dict[str, Any] | None = None
    route: dict[str, Any] | None = None
    scheduler: dict[str, Any] | None = None

    def to_domain(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Serving(Wire):
    mode: Literal["Unified", "PrefillDecode"] = "Unified"
    router: Router | None = None
    base_refs: tuple[NameRef, ...] | None = Field(default=None, max_length=8)

    def router_domain(self) -> dict[str, Any] | None:
        return self.router.to_domain() if self.router is not None else None

    def base_refs_domain(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.base_refs or ())

    @classmethod
    def from_domain(cls, mode: m.ServingMode, router: Any, base_refs: tuple[str, ...]) -> Serving:
        return cls(
            mode=mode.value,
            router=Router.model_validate(router) if router is not None else None,
            base_refs=tuple(NameRef(name=n) for n in base_refs) or None,
        )


class Parallelism(Wire):
    tensor: Int | None = Field(default=None, ge=1)
    pipeline: Int | None = Field(default=None, ge=1)
    data: Int | None = Field(default=None, ge=1)
    data_local: Int | None = Field(default=None, ge=1)
    expert: bool | None = None

    def to_domain(self) -> m.Parallelism:
        return m.Parallelism(
            tensor=self.tensor, pipeline=self.pipeline, data=self.data, data_local=self.data_local, expert=self.expert
        )

    @classmethod
    def from_domain(cls, p: m.Parallelism) -> Parallelism:
        return cls(tensor=p.tensor, pipeline=p.pipeline, data=p.data, data_local=p.data_local, expert=p.expert)


class Worker(Wire):
    nodes: Int = Field(default=1, ge=1, le=63)


class DeviceConstraint(Wire):
    requests: tuple[str, ...] | None = None
    match_attribute: str = Field(min_length=1)

    def to_domain(self) -> m.DeviceConstraint:
        return m.DeviceConstraint(requests=tuple(self.requests or ()), match_attribute=self.match_attribute)

    @classmethod
    def from_domain(cls, c: m.DeviceConstraint) -> DeviceConstraint:
        return cls(requests=c.requests or None, match_attribute=c.match_attribute)
