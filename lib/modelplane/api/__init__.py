"""The API edge: wire models of the XRs (pydantic, mirroring apis/*/definition.yaml) and converters
into the domain values of `modelplane.model`. Invalid input raises `modelplane.errors.SpecError`."""

from modelplane.api.cluster import parse_cluster
from modelplane.api.compat import IgnoredField, ignored_fields, ignored_message
from modelplane.api.demand import demand_manifest, parse_demand
from modelplane.api.deployment import parse_deployment
from modelplane.api.ledger import ENGINE_FIELDS, IDENTITY_FIELDS, LEDGER_FIELDS, ledger_engines, parse_ledger_replica
from modelplane.api.model_cache import parse_model_cache, with_model_cache
from modelplane.api.publish import (
    MissingInferenceClassError,
    class_names,
    gpu_pools_status,
    kserve_version,
    relayed_status,
    stack,
)
from modelplane.api.quota import parse_quota, priority_classes
from modelplane.api.replica import parse_replica, replica_manifest
from modelplane.api.status import deployment_status

__all__ = [
    "ENGINE_FIELDS",
    "IDENTITY_FIELDS",
    "LEDGER_FIELDS",
    "IgnoredField",
    "MissingInferenceClassError",
    "class_names",
    "demand_manifest",
    "deployment_status",
    "gpu_pools_status",
    "ignored_fields",
    "ignored_message",
    "kserve_version",
    "ledger_engines",
    "parse_cluster",
    "parse_demand",
    "parse_deployment",
    "parse_ledger_replica",
    "parse_model_cache",
    "parse_quota",
    "parse_replica",
    "priority_classes",
    "relayed_status",
    "replica_manifest",
    "stack",
    "with_model_cache",
]
