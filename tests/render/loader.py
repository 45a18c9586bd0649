"""Test-only: a ModelReplica from the YAML shape of tests/render/golden/*/input.yaml.

The shape mirrors the domain value with camelCase keys, so inputs read like the ModelReplica spec.
"""

from collections.abc import Mapping
from typing import Any

from modelplane.model import (
    DeviceConstraint,
    ModelRef,
    ModelReplica,
    Parallelism,
    Phase,
    PlacedEngine,
    PlacedMember,
    ResolvedDeviceRequest,
    Role,
    ServingMode,
)
from modelplane.names import KAI_DEFAULT_PRIORITY_CLASS, KAI_DEFAULT_QUEUE


def _parallelism(raw: Mapping[str, Any] | None) -> Parallelism | None:
    if raw is None:
        return None
    return Parallelism(
        tensor=raw.get("tensor"),
        pipeline=raw.get("pipeline"),
        data=raw.get("data"),
        data_local=raw.get("dataLocal"),
        expert=raw.get("expert"),
    )


def _member(raw: Mapping[str, Any]) -> PlacedMember:
    return PlacedMember(
        role=Role(raw["role"]),
        worker_nodes=raw.get("workerNodes", 0),
        pool=raw["pool"],
        device_requests=tuple(
            ResolvedDeviceRequest(
                name=r["name"],
                device_class_name=r["deviceClassName"],
                count=r.get("count", 1),
                selectors=tuple(r.get("selectors", ())),
            )
            for r in raw.get("deviceRequests", ())
        ),
        constraints=tuple(
            DeviceConstraint(requests=tuple(c.get("requests", ())), match_attribute=c["matchAttribute"])
            for c in raw.get("constraints", ())
        ),
        template=raw.get("template", {}),
    )


def _engine(raw: Mapping[str, Any]) -> PlacedEngine:
    return PlacedEngine(
        name=raw["name"],
        copies=raw.get("copies", 1),
        phase=Phase(raw["phase"]) if "phase" in raw else None,
        parallelism=_parallelism(raw.get("parallelism")),
        members=tuple(_member(m) for m in raw["members"]),
        fabric_level=raw.get("fabricLevel"),
    )


def load_replica(raw: Mapping[str, Any]) -> ModelReplica:
    model = raw.get("model")
    return ModelReplica(
        namespace=raw["namespace"],
        name=raw["name"],
        deployment=raw["deployment"],
        cluster=raw["cluster"],
        index=raw["index"],
        engines=tuple(_engine(e) for e in raw["engines"]),
        provider_config_name=raw.get("providerConfigName", ""),
        workload_namespace=raw.get("workloadNamespace", "modelplane-workloads"),
        model=ModelRef(uri=model["uri"], name=model.get("name")) if model else None,
        serving_mode=ServingMode(raw.get("servingMode", "Unified")),
        queue=raw.get("queue", KAI_DEFAULT_QUEUE),
        priority_class_name=raw.get("priorityClassName", KAI_DEFAULT_PRIORITY_CLASS),
        topology=raw.get("topology"),
        topology_required_level=raw.get("requiredTopologyLevel"),
        topology_preferred_level=raw.get("preferredTopologyLevel"),
        labels=raw.get("labels", {}),
        kserve_version=raw.get("kserveVersion"),
        exclusive_nodes=raw.get("exclusiveNodes", False),
    )
