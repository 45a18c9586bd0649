"""ModelDemand: the wire form of a deployment's stated demand (modelplane.stated), and its conversion.

A ModelDeployment composes one ModelDemand, named after it, in its namespace; every other
deployment's reconcile reads them instead of the deployments themselves. The schema mirrors
apis/modeldemand/definition.yaml, bounds included, so a statement read here is as small as the
XRD allows whatever wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Literal

from pydantic import Field, field_validator

from modelplane import model as m
from modelplane.api._wire import Count, Int, Wire, dump, unique, validate
from modelplane.api.kai import PriorityClassName
from modelplane.errors import SpecError
from modelplane.names import API_VERSION, KIND_DEMAND, LABEL_DEPLOYMENT
from modelplane.stated import KIND_LENGTH, MAX_CLUSTERS, MAX_KINDS, StatedDemand, StatedEngine, StatedOption

MAX_NAME = 63
NAME = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DEPLOYMENT_NAME = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"  # a DNS subdomain short enough to be a label value
_SIZE = r"^[0-9]{1,40}(/[0-9]{1,40})?$"  # a non-negative fraction, as Python's Fraction prints it
_KIND = rf"^[0-9a-f]{{{KIND_LENGTH}}}$"


class Group(Wire):
    pods: Count = Field(le=64)
    devices: Int = Field(ge=0, le=1024)
    whole_nodes: bool | None = None  # an exclusive deployment's pods: each holds a whole node of a shared pool


class Option(Wire):
    """What an engine costs on every pool of the kinds listed (kinds alike in cost are stated together)."""

    pool_kinds: tuple[str, ...] = Field(min_length=1, max_length=MAX_KINDS)
    nodes: Count = Field(le=64 * 64)
    groups: tuple[Group, ...] = Field(default=(), max_length=64)
    claimed_devices: Int = Field(default=0, ge=0)
    idle_devices: Int = Field(default=0, ge=0)
    spare_kinds: Int = Field(default=0, ge=0, le=64)
    device_size: str = Field(default="0", pattern=_SIZE)

    @field_validator("pool_kinds")
    @classmethod
    def _kinds(cls, kinds: tuple[str, ...]) -> tuple[str, ...]:
        bad = [k for k in kinds if not re.match(_KIND, k)]
        if bad:
            msg = f"{bad[0][:20]!r} is not a pool kind ({KIND_LENGTH} hexadecimal digits)"
            raise ValueError(msg)
        unique("pool kinds", list(kinds))
        return tuple(sorted(kinds))

    @field_validator("device_size")
    @classmethod
    def _size(cls, size: str) -> str:
        if "/" in size and not size.split("/", 1)[1].strip("0"):
            msg = "has a zero denominator"
            raise ValueError(msg)
        return size

    def to_domain(self) -> tuple[StatedOption, ...]:
        groups = tuple(
            sorted(m.DeviceGroup(pods=g.pods, devices=g.devices, whole=bool(g.whole_nodes)) for g in self.groups)
        )
        charge = m.PoolCharge(nodes=self.nodes, groups=groups)
        return tuple(
            StatedOption(
                kind=kind,
                cost=self.nodes,
                charge=charge,
                claimed=self.claimed_devices,
                idle=self.idle_devices,
                spare=self.spare_kinds,
                size=Fraction(self.device_size),
            )
            for kind in self.pool_kinds
        )

    @staticmethod
    def from_domain(options: Sequence[StatedOption]) -> tuple[Option, ...]:
        """The options grouped by what they cost, in the order of their first kind."""
        alike: dict[tuple[object, ...], list[StatedOption]] = {}
        for o in sorted(options, key=lambda o: o.kind):
            alike.setdefault((o.cost, o.charge, o.claimed, o.idle, o.spare, o.size), []).append(o)
        return tuple(
            Option(
                pool_kinds=tuple(o.kind for o in group),
                nodes=first.cost,
                groups=tuple(
                    Group(pods=g.pods, devices=g.devices, whole_nodes=True if g.whole else None)
                    for g in first.charge.groups
                ),
                claimed_devices=first.claimed,
                idle_devices=first.idle,
                spare_kinds=first.spare,
                device_size=str(_bounded_size(first.size)),
            )
            for group in alike.values()
            for first in group[:1]
        )


_MAX_SIZE = Fraction(10**39)


def _bounded_size(size: Fraction) -> Fraction:
    """A size the schema can carry (40 digits each side); only the order of sizes matters to readers."""
    size = min(max(size, Fraction(0)), _MAX_SIZE)
    return size if size.denominator < _MAX_SIZE else size.limit_denominator(10**6)


class Engine(Wire):
    name: str = Field(min_length=1, max_length=63, pattern=NAME)
    options: tuple[Option, ...] = Field(default=(), max_length=64)

    @field_validator("options")
    @classmethod
    def _kinds(cls, options: tuple[Option, ...]) -> tuple[Option, ...]:
        kinds = [k for o in options for k in o.pool_kinds]
        unique("pool kinds", kinds)
        if len(kinds) > MAX_KINDS:
            msg = f"states {len(kinds)} pool kinds, more than {MAX_KINDS}"
            raise ValueError(msg)
        return options

    def to_domain(self) -> StatedEngine:
        options = sorted((s for o in self.options for s in o.to_domain()), key=lambda o: o.kind)
        return StatedEngine(name=self.name, options=tuple(options))


class DemandSpec(Wire):
    deployment: str = Field(min_length=1, max_length=63, pattern=DEPLOYMENT_NAME)
    replicas: Int = Field(ge=0, le=1024)
    devices_per_replica: Int = Field(default=0, ge=0)
    movable: bool = False
    spread: Literal["Preferred", "Strict"] = "Preferred"
    cluster_set: Literal["Listed", "AllExcept"] = "Listed"
    clusters: tuple[str, ...] = Field(default=(), max_length=MAX_CLUSTERS)
    truncated: bool = False
    engines: tuple[Engine, ...] = Field(default=(), max_length=8)
    priority_class_name: PriorityClassName | None = None
    crossplane: dict[str, Any] | None = None  # Crossplane's own machinery on observed XRs

    @field_validator("clusters")
    @classmethod
    def _clusters(cls, clusters: tuple[str, ...]) -> tuple[str, ...]:
        for name in clusters:
            if len(name) > MAX_NAME:
                msg = f"cluster name {name[:20]!r}... is longer than {MAX_NAME} characters"
                raise ValueError(msg)
        unique("clusters", list(clusters))
        return tuple(sorted(clusters))

    @field_validator("engines")
    @classmethod
    def _engines(cls, engines: tuple[Engine, ...]) -> tuple[Engine, ...]:
        unique("engine names", [e.name for e in engines])
        return engines


def can_state(name: str) -> bool:
    """Whether a deployment of this name can compose a ModelDemand (its name is the statement's `deployment`)."""
    return len(name) <= MAX_NAME and re.match(DEPLOYMENT_NAME, name) is not None


def parse_demand(obj: Mapping[str, Any]) -> StatedDemand:
    """A ModelDemand object's statement; SpecError when it is not one this schema allows."""
    meta: object = obj.get("metadata")
    namespace: object = None
    if isinstance(meta, Mapping):
        namespace = meta.get("namespace")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(namespace, str) or not namespace:
        msg = f"{KIND_DEMAND}: metadata.namespace is missing"
        raise SpecError(msg)
    spec = validate(DemandSpec, obj.get("spec"), "spec")
    return StatedDemand(
        namespace=namespace,
        name=spec.deployment,
        replicas=spec.replicas,
        devices=spec.devices_per_replica,
        movable=spec.movable,
        strict_spread=spec.spread == "Strict",
        clusters=spec.clusters,
        all_but=spec.cluster_set == "AllExcept",
        engines=tuple(e.to_domain() for e in spec.engines),
        truncated=spec.truncated,
        priority_class=spec.priority_class_name or "",
    )


def demand_manifest(stated: StatedDemand) -> dict[str, Any]:
    """The desired ModelDemand a deployment composes: named after it, in its namespace."""
    spec = DemandSpec(
        deployment=stated.name,
        replicas=stated.replicas,
        devices_per_replica=stated.devices,
        movable=stated.movable,
        spread="Strict" if stated.strict_spread else "Preferred",
        cluster_set="AllExcept" if stated.all_but else "Listed",
        clusters=stated.clusters,
        truncated=stated.truncated,
        engines=tuple(Engine(name=e.name, options=Option.from_domain(e.options)) for e in stated.engines),
        priority_class_name=stated.priority_class or None,
    )
    return {
        "apiVersion": API_VERSION,
        "kind": KIND_DEMAND,
        "metadata": {"name": stated.name, "namespace": stated.namespace, "labels": {LABEL_DEPLOYMENT: stated.name}},
        "spec": dump(spec),
    }
