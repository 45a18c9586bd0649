"""The API edge: wire models of the XRs (pydantic, mirroring apis/*/definition.yaml) and converters
into the domain values of `modelplane.model`. Invalid input raises `modelplane.errors.SpecError`."""

from modelplane.api.cluster import gpu_pools_status, parse_cluster
from modelplane.api.deployment import parse_deployment
from modelplane.api.replica import parse_replica, replica_manifest
from modelplane.api.status import deployment_status

__all__ = [
    "deployment_status",
    "gpu_pools_status",
    "parse_cluster",
    "parse_deployment",
    "parse_replica",
    "replica_manifest",
]
