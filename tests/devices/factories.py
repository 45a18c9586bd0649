"""Keyword-only builders for devices, pools and members."""

from __future__ import annotations

from modelplane.model import (
    Attribute,
    AttributeType,
    ClaimKind,
    Device,
    DeviceRequest,
    Member,
    NodePool,
    Role,
)


def attr(value: str | int | bool, *, version: bool = False) -> Attribute:
    if version:
        return Attribute(type=AttributeType.VERSION, value=value)
    if isinstance(value, bool):
        return Attribute(type=AttributeType.BOOL, value=value)
    if isinstance(value, int):
        return Attribute(type=AttributeType.INT, value=value)
    return Attribute(type=AttributeType.STRING, value=value)


def device(
    name: str = "gpu",
    *,
    driver: str = "gpu.nvidia.com",
    count: int = 8,
    synthetic: bool = False,
    attributes: dict[str, Attribute] | None = None,
    capacity: dict[str, str] | None = None,
) -> Device:
    return Device(
        name=name,
        driver=driver,
        claim=ClaimKind.SYNTHETIC if synthetic else ClaimKind.DRA,
        device_class_name=None if synthetic else f"{name}.class",
        count=count,
        attributes=attributes or {},
        capacity=capacity or {},
    )


def pool(*devices: Device, name: str = "pool", nodes: int = 4) -> NodePool:
    return NodePool(name=name, nodes=nodes, devices=devices)


def request(name: str, *selectors: str, count: int = 1) -> DeviceRequest:
    return DeviceRequest(name=name, count=count, selectors=selectors)


def member(*requests: DeviceRequest, role: Role = Role.STANDALONE) -> Member:
    return Member(role=role, device_requests=requests)
