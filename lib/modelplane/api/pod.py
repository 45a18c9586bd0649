"""The curated pod template of a member: metadata, one container named `engine`, pull secrets.

The image is optional: left out, KServe's serving preset supplies its own (built to run as
non-root under the preset's security context).

Kept closed on purpose: the renderer owns everything else in the pod (scheduler, node selector,
claims, tolerations), so a field the user could set here would be silently overridden there.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Self, cast

from pydantic import Field, ValidationInfo, field_validator, model_validator

from modelplane.api._wire import Int, Quantity, Wire
from modelplane.names import RESERVED_LABEL_PREFIX


class KeyRef(Wire):
    name: str = Field(min_length=1)
    key: str = Field(min_length=1)
    optional: bool | None = None


class FieldRef(Wire):
    field_path: str = Field(min_length=1)
    api_version: str | None = None


class EnvSource(Wire):
    secret_key_ref: KeyRef | None = None
    config_map_key_ref: KeyRef | None = None
    field_ref: FieldRef | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if sum(x is not None for x in (self.secret_key_ref, self.config_map_key_ref, self.field_ref)) != 1:
            msg = "valueFrom needs exactly one of secretKeyRef, configMapKeyRef, fieldRef"
            raise ValueError(msg)
        return self


class EnvVar(Wire):
    name: str = Field(min_length=1)
    value: str | None = None
    value_from: EnvSource | None = None

    @model_validator(mode="after")
    def _value_or_source(self) -> Self:
        if self.value is not None and self.value_from is not None:
            msg = "env var takes value or valueFrom, not both"
            raise ValueError(msg)
        return self


class ContainerPort(Wire):
    name: str | None = None
    container_port: Int = Field(ge=1, le=65535)
    protocol: Literal["TCP", "UDP", "SCTP"] | None = None


# The validation context key that makes Resources refuse extended resources (see below). Set where a
# user's spec enters (parse_deployment); unset where replicas an older version composed are read
# back, so a deployment whose spec was fixed can still read and replace them.
NO_EXTENDED_RESOURCES = "no-extended-resources"

# Every extended resource is refused, not only `*/gpu` names: the placement ledger counts DRA
# devices only, and a device plugin's name does not say whether it hands out accelerators
# (nvidia.com/mig-1g.10gb, habana.ai/gaudi, aws.amazon.com/neuron, google.com/tpu), nor does a
# name a DeviceClass maps to DRA devices (extendedResourceName). Devices, NICs included, are asked
# for as the member's DRA device requests, which the ledger charges.
_NATIVE = frozenset({"cpu", "memory", "ephemeral-storage"})


def _extended(names: dict[str, str]) -> list[str]:
    return sorted(k for k in names if k not in _NATIVE and not k.startswith("hugepages-"))


class Resources(Wire):
    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None

    @field_validator("limits", "requests")
    @classmethod
    def _no_extended(cls, values: dict[str, str] | None, info: ValidationInfo) -> dict[str, str] | None:
        context = cast("dict[str, Any] | None", info.context) or {}
        extended = _extended(values or {})
        if extended and context.get(NO_EXTENDED_RESOURCES):
            msg = (
                f"extended resources are not allowed: {', '.join(extended)} (only cpu, memory, "
                "ephemeral-storage and hugepages-*); ask for GPUs and other devices in the member's "
                "nodeSelector.devices, which placement counts, so a device plugin cannot take a node's "
                "devices promised to other replicas"
            )
            raise ValueError(msg)
        return values


class SecurityContext(Wire):
    """The identity the engine runs as; the rest of the serving preset's hardening is kept."""

    run_as_user: Int | None = Field(default=None, ge=0)
    run_as_group: Int | None = Field(default=None, ge=0)
    run_as_non_root: bool | None = None


class Container(Wire):
    name: Literal["engine"]
    image: str | None = Field(default=None, min_length=1)  # None: the serving preset's image
    security_context: SecurityContext | None = None
    command: tuple[str, ...] | None = None
    args: tuple[str, ...] | None = None
    env: tuple[EnvVar, ...] | None = None
    resources: Resources | None = None
    ports: tuple[ContainerPort, ...] | None = None


class PodSpec(Wire):
    containers: tuple[Container, ...] = Field(min_length=1, max_length=1)  # one container, named engine
    image_pull_secrets: tuple[NameRefItem, ...] | None = None


class NameRefItem(Wire):
    name: str = Field(min_length=1)


class PodMetadata(Wire):
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None

    @field_validator("labels")
    @classmethod
    def _no_reserved(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        return reject_reserved(labels)


class PodTemplate(Wire):
    metadata: PodMetadata | None = None
    spec: PodSpec


# Kubernetes label syntax (apimachinery IsQualifiedName / IsValidLabelValue): the XRD only bounds
# value length, so without this a bad key would pass admission and fail on the emitted objects.
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_MAX_NAME = 63
_MAX_PREFIX = 253
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _valid_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if "/" in key and not (len(prefix) <= _MAX_PREFIX and _DNS_SUBDOMAIN.match(prefix)):
        return False
    return len(name) <= _MAX_NAME and _LABEL_NAME.match(name) is not None


def _valid_value(value: str) -> bool:
    return value == "" or (len(value) <= _MAX_NAME and _LABEL_NAME.match(value) is not None)


def reject_reserved(labels: dict[str, str] | None) -> dict[str, str] | None:
    """Reject reserved and syntactically invalid label keys and values."""
    reserved = sorted(k for k in labels or {} if k.startswith(RESERVED_LABEL_PREFIX))
    if reserved:
        msg = f"label keys under {RESERVED_LABEL_PREFIX} are reserved: {', '.join(reserved)}"
        raise ValueError(msg)
    bad = sorted(repr(k) for k, v in (labels or {}).items() if not (_valid_key(k) and _valid_value(v)))
    if bad:
        msg = f"labels must be Kubernetes label keys with valid values: {', '.join(bad)}"
        raise ValueError(msg)
    return labels


PodSpec.model_rebuild()
