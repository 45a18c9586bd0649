"""InferenceCluster wire models, their conversion into a `model.Cluster`, and the published gpuPools.

Pools come from `status.gpuPools` when the cluster publishes it (Modelplane-compatible: that is
the schedulable view), else from `spec.nodePools`. A cluster is ready unless it carries a Ready
condition whose status is "False": a cluster nobody has reported on yet is usable, one that is
known to be down is not.

A pool is written either our way (`nodes` and `devices`) or Modelplane's (`className` naming an
InferenceClass that lists the devices, `nodeCount`/`maxNodeCount`). Published, a Modelplane pool
has `maxNodeCount`, else `nodeCount`, else 1 node, and its class's devices, as Modelplane
publishes it. A published device `count: 0` (Modelplane's XRD allows it) means none available.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from typing import Annotated, Any, Literal, Self, cast

from pydantic import (
    Field,
    PrivateAttr,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)

from modelplane import model as m
from modelplane.api._wire import Count, Int, Observed, Quantity, Wire, unique, validate
from modelplane.api.common import LabelSelector, NameRef, Taint
from modelplane.api.deployment import DNS_LABEL, metadata
from modelplane.api.kai import Kai
from modelplane.api.provisioning import CapacityBlock, ClusterSource, Fabric
from modelplane.devices.quantity import QuantityError, parse_quantity
from modelplane.devices.semver import is_semver
from modelplane.errors import SpecError


class Attribute(Wire):
    # the XRD's bounds: a value it would reject must not reach the published gpuPools
    string: str | None = Field(default=None, max_length=253)
    version: str | None = Field(default=None, max_length=64)
    bool_: bool | None = Field(default=None, alias="bool")
    int_: Int | None = Field(default=None, alias="int", ge=-(2**63), le=2**63 - 1)  # format: int64

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if sum(v is not None for v in (self.string, self.version, self.bool_, self.int_)) != 1:
            msg = "an attribute needs exactly one of string, version, bool, int"
            raise ValueError(msg)
        # A version DRA cannot parse would silently make the whole device match nothing.
        if self.version is not None and not is_semver(self.version):
            msg = f"version {self.version!r} is not a semantic version (semver.org 2.0.0, e.g. 560.35.3)"
            raise ValueError(msg)
        return self

    def to_domain(self) -> m.Attribute:
        if self.string is not None:
            return m.Attribute(type=m.AttributeType.STRING, value=self.string)
        if self.version is not None:
            return m.Attribute(type=m.AttributeType.VERSION, value=self.version)
        if self.bool_ is not None:
            return m.Attribute(type=m.AttributeType.BOOL, value=self.bool_)
        assert self.int_ is not None  # guaranteed by _exactly_one
        return m.Attribute(type=m.AttributeType.INT, value=self.int_)


class Capacity(Wire):
    value: Quantity = Field(max_length=64)  # as the XRD bounds it: a huge float must not reach gpuPools

    @field_validator("value")
    @classmethod
    def _is_quantity(cls, value: str) -> str:
        # A capacity that does not parse would silently make its device match nothing.
        try:
            parse_quantity(value)
        except QuantityError as error:
            raise ValueError(str(error)) from None
        return value


class Device(Wire):
    name: str = Field(min_length=1, max_length=63)
    driver: str = Field(min_length=1, max_length=253)
    claim: Literal["DRA", "Synthetic"] = "DRA"
    device_class_name: str | None = Field(default=None, max_length=253)
    count: Count = Field(default=1, le=1024)  # the XRD maximum
    attributes: dict[str, Attribute] | None = Field(default=None, max_length=32)
    capacity: dict[str, Capacity] | None = Field(default=None, max_length=32)

    _domain: m.Device | None = PrivateAttr(default=None)  # to_domain's result: memoised devices are shared

    @model_validator(mode="after")
    def _class_for_dra(self) -> Self:
        if self.claim == "DRA" and not self.device_class_name:
            msg = "a DRA device needs a deviceClassName"
            raise ValueError(msg)
        return self

    def to_domain(self) -> m.Device:
        if self._domain is None:
            self._domain = self._convert()
        return self._domain

    def _convert(self) -> m.Device:
        return m.Device(
            name=self.name,
            driver=self.driver,
            claim=m.ClaimKind(self.claim),
            device_class_name=self.device_class_name,
            count=self.count,
            attributes={k: a.to_domain() for k, a in sorted((self.attributes or {}).items())},
            capacity={k: c.value for k, c in sorted((self.capacity or {}).items())},
        )


class PublishedDevice(Device):
    """A device of status.gpuPools: a count of 0 is allowed and means none available."""

    count: Int = Field(default=1, ge=0, le=1024)


DEVICES = "devices"  # the validation context key of a device memo (see parse_cluster)


def _memoised(kind: str) -> WrapValidator:
    """A device validated once per content when the caller passes a memo: fleets repeat a few device kinds.

    `kind` keeps spec and status devices apart: they differ in what they allow (a count of 0).
    """

    def validate_once(value: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> object:
        context = cast("dict[str, Any] | None", info.context)
        memo = cast("MutableMapping[str, Device] | None", context.get(DEVICES) if context is not None else None)
        if memo is None or not isinstance(value, Mapping):
            return handler(value)
        try:
            key = f"{kind}:{json.dumps(value, sort_keys=True)}"
        except (TypeError, ValueError):  # not JSON-shaped: validation says why
            return handler(value)
        device = memo.get(key)
        if device is None:
            device = handler(value)
            memo[key] = device
        return device

    return WrapValidator(validate_once)


def _unique_devices(devices: tuple[Device, ...] | None) -> tuple[Device, ...] | None:
    unique("device names", [d.name for d in devices or ()])
    return devices


def _domain_pool(name: str, nodes: int, devices: tuple[Device, ...], packing: str) -> m.NodePool:
    converted = tuple(d.to_domain() for d in sorted(devices, key=lambda d: d.name))
    return m.NodePool(name=name, nodes=nodes, devices=converted, packing=m.PoolPacking(packing))


Packing = Literal["Nodes", "Devices"]


MAX_NODES = 100_000  # the XRD maximum


class NodePool(Wire):
    """A pool of spec.nodePools: ours (`nodes`, `devices`) or Modelplane's (`className`, node counts)."""

    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    nodes: Int | None = Field(default=None, ge=0, le=MAX_NODES)
    packing: Packing = "Nodes"
    devices: tuple[Annotated[Device, _memoised("spec")], ...] | None = Field(default=None, max_length=16)
    class_name: str | None = Field(default=None, min_length=1, max_length=253)
    node_count: Int | None = Field(default=None, ge=0, le=MAX_NODES)
    max_node_count: Int | None = Field(default=None, ge=1, le=MAX_NODES)
    # provisioning only (provisioning.py): accepted, no effect here
    min_node_count: Int | None = Field(default=None, ge=0, le=MAX_NODES)
    zones: tuple[str, ...] | None = None
    capacity_block: CapacityBlock | None = None
    fabric: Fabric | None = None

    _unique = field_validator("devices")(_unique_devices)

    @model_validator(mode="after")
    def _one_way(self) -> Self:
        if self.nodes is not None and (self.node_count is not None or self.max_node_count is not None):
            msg = "nodes replaces Modelplane's nodeCount and maxNodeCount: set one or the other"
            raise ValueError(msg)
        if self.devices is not None and self.class_name is not None:
            msg = "a pool lists its devices or names an InferenceClass (className), not both"
            raise ValueError(msg)
        if self.nodes is None and self.node_count is None and self.max_node_count is None and self.class_name is None:
            msg = "a pool needs nodes (or Modelplane's className, nodeCount or maxNodeCount)"
            raise ValueError(msg)
        return self

    @property
    def schedulable_nodes(self) -> int:
        """`nodes`; for a Modelplane pool maxNodeCount, else nodeCount (default 1), as Modelplane publishes it."""
        if self.nodes is not None:
            return self.nodes
        if self.max_node_count is not None:
            return self.max_node_count
        return 1 if self.node_count is None else self.node_count

    def to_domain(self) -> m.NodePool:
        """The pool as spec says it; a className pool's devices are known only once published."""
        return _domain_pool(self.name, self.schedulable_nodes, self.devices or (), self.packing)


class PublishedPool(Wire):
    """A pool of status.gpuPools: what the scheduler matches against."""

    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    nodes: Int = Field(default=0, ge=0, le=MAX_NODES)
    packing: Packing = "Nodes"
    devices: tuple[Annotated[PublishedDevice, _memoised("status")], ...] | None = Field(default=None, max_length=16)

    _unique = field_validator("devices")(_unique_devices)

    def to_domain(self) -> m.NodePool:
        return _domain_pool(self.name, self.nodes, self.devices or (), self.packing)


def _unique_pools(pools: tuple[NodePool, ...] | tuple[PublishedPool, ...] | None) -> object:
    unique("node pool names", [p.name for p in pools or ()])
    return pools


class KServe(Wire):
    """The KServe a cluster runs: its presets decide how the engine's args must be rendered."""

    version: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _quoted(cls, version: object) -> object:
        if isinstance(version, int | float) and not isinstance(version, bool):
            msg = f'{version} is a number (YAML reads 0.20 as 0.2): write the version quoted, e.g. "0.20"'
            raise ValueError(msg)
        return version

    @field_validator("version")
    @classmethod
    def _supported(cls, version: str | None) -> str | None:
        if version is not None and m.kserve_rendered_as(version) is None:
            msg = (
                f"KServe {version!r} is not a version replicas can be rendered for: "
                f"use one of {', '.join(m.KSERVE_VERSIONS)} or a later minor version such as "
                f'"0.{int(m.KSERVE_NEWEST[2:]) + 1}" (rendered as {m.KSERVE_NEWEST}), quoted'
            )
            raise ValueError(msg)
        return version


class SharedFabric(Wire):
    """Pools whose nodes share one interconnect fabric: an engine's members may span them."""

    name: str = Field(min_length=1, max_length=63, pattern=DNS_LABEL)
    node_pools: tuple[Annotated[str, Field(min_length=1, max_length=63)], ...] = Field(min_length=2, max_length=16)
    topology_level: str | None = Field(default=None, min_length=1, max_length=317)

    @field_validator("node_pools")
    @classmethod
    def _unique(cls, pools: tuple[str, ...]) -> tuple[str, ...]:
        unique("fabric node pools", list(pools))
        return pools

    def to_domain(self) -> m.Fabric:
        return m.Fabric(name=self.name, pools=tuple(sorted(self.node_pools)), topology_level=self.topology_level)


def _fabrics(fabrics: tuple[SharedFabric, ...] | None, pools: tuple[m.NodePool, ...], kai: Kai) -> tuple[m.Fabric, ...]:
    """The cluster's fabrics, each pool on at most one and every one named a pool of the cluster."""
    names = {p.name for p in pools}
    seen: dict[str, str] = {}
    for i, f in enumerate(fabrics or ()):
        for pool in f.node_pools:
            if pool not in names:
                msg = f"spec.fabrics[{i}].nodePools: {pool!r} is not a node pool of the cluster"
                raise SpecError(msg)
            if pool in seen:
                msg = f"spec.fabrics[{i}].nodePools: pool {pool!r} is already on fabric {seen[pool]!r}"
                raise SpecError(msg)
            seen[pool] = f.name
        if f.topology_level is not None and kai.topology is None:
            msg = f"spec.fabrics[{i}].topologyLevel: a topology level needs spec.kai.topology"
            raise SpecError(msg)
    return tuple(sorted((f.to_domain() for f in fabrics or ()), key=lambda f: f.name))


class ClusterSpec(Wire):
    cluster: ClusterSource | None = None  # Modelplane's provisioning: accepted, no effect here
    taints: tuple[Taint, ...] | None = Field(default=None, max_length=32)
    allowed_namespaces: tuple[str, ...] | None = Field(default=None, max_length=256)
    allowed_namespace_selector: LabelSelector | None = None
    provider_config_ref: NameRef | None = None
    workload_namespace: str = Field(default="modelplane-workloads", min_length=1, max_length=63, pattern=DNS_LABEL)
    kai: Kai | None = None
    kserve: KServe | None = None
    stack: Literal["Standard", "Dynamo"] = "Standard"
    node_pools: tuple[NodePool, ...] | None = Field(default=None, max_length=16)
    fabrics: tuple[SharedFabric, ...] | None = Field(default=None, max_length=16)
    crossplane: dict[str, Any] | None = None  # Crossplane's own machinery on observed XRs

    _pools = field_validator("node_pools")(_unique_pools)

    @field_validator("fabrics")
    @classmethod
    def _unique_fabrics(cls, fabrics: tuple[SharedFabric, ...] | None) -> tuple[SharedFabric, ...] | None:
        unique("fabric names", [f.name for f in fabrics or ()])
        return fabrics

    @field_validator("taints")
    @classmethod
    def _unique_taints(cls, taints: tuple[Taint, ...] | None) -> tuple[Taint, ...] | None:
        unique("taints (key, effect)", [f"{t.key}:{t.effect}" for t in taints or ()])
        return taints


class Condition(Observed):
    type: str
    status: str
    reason: str | None = None


class ClusterStatus(Observed):
    gpu_pools: tuple[PublishedPool, ...] | None = None
    provider_config_ref: NameRef | None = None  # Modelplane publishes the ProviderConfig here
    conditions: tuple[Condition, ...] | None = None

    _pools = field_validator("gpu_pools")(_unique_pools)


def _read_spec(raw_spec: object, raw_status: object) -> object:
    """The spec as parse_cluster validates it: without nodePools when status.gpuPools replaces them.

    spec.nodePools is then never read here (the cluster's own composition checks it when it
    publishes the pools), and validating it was half of parsing a cluster.
    """
    published = isinstance(raw_status, Mapping) and cast("Mapping[str, Any]", raw_status).get("gpuPools") is not None
    if published and isinstance(raw_spec, Mapping):
        return {k: v for k, v in cast("Mapping[str, Any]", raw_spec).items() if k != "nodePools"}
    return raw_spec


def parse_cluster(obj: Mapping[str, Any], *, devices: MutableMapping[str, Any] | None = None) -> m.Cluster:
    """An InferenceCluster XR (as a dict) as a `model.Cluster`; raises SpecError naming the bad field.

    `devices`: a memo the caller keeps across calls, so that a device validated once is not again.
    """
    meta = metadata(obj)
    raw_status: object = obj.get("status") or {}
    context = None if devices is None else {DEVICES: devices}
    spec = validate(ClusterSpec, _read_spec(obj.get("spec") or {}, raw_status), "spec", context=context)
    status = validate(ClusterStatus, raw_status, "status", context=context)
    pools = status.gpu_pools if status.gpu_pools is not None else spec.node_pools
    provider = spec.provider_config_ref or status.provider_config_ref
    kai = spec.kai or Kai()
    allowed = spec.allowed_namespaces
    domain_pools = tuple(p.to_domain() for p in sorted(pools or (), key=lambda p: p.name))
    return m.Cluster(
        name=str(meta["name"]),
        labels=dict(meta.get("labels") or {}),
        taints=tuple(t.to_domain() for t in spec.taints or ()),
        ready=not any(c.type == "Ready" and c.status == "False" for c in status.conditions or ()),
        allowed_namespaces=tuple(sorted(allowed)) if allowed is not None else None,
        allowed_namespace_selector=spec.allowed_namespace_selector.to_domain()
        if spec.allowed_namespace_selector
        else None,
        provider_config_name=provider.name if provider else "",
        workload_namespace=spec.workload_namespace,
        default_queue=kai.default_queue,
        default_priority_class_name=kai.default_priority_class_name,
        queue_per_namespace=kai.queue_per_namespace,
        kai_namespaces=kai.allowances(),
        topology=kai.topology or None,
        topology_required_level=kai.required_topology_level,
        topology_preferred_level=kai.preferred_topology_level,
        pools=domain_pools,
        kserve_version=spec.kserve.version if spec.kserve else None,
        stack=m.Stack(spec.stack),
        fabrics=_fabrics(spec.fabrics, domain_pools, kai),
    )
