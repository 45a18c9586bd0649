"""Modelplane's provisioning fields of an InferenceCluster: accepted, checked, not acted on.

Modelplane creates clusters and node pools (`spec.cluster`, and per pool `minNodeCount`, `zones`,
`fabric`, `capacityBlock`); this function schedules onto clusters that already exist. Its
manifests must still apply unchanged, so these shapes are accepted with Modelplane v0.3.1's field
names, types, enums and required fields (a typo stays an error), and `compat.ignored_fields`
names them on the XR. Cross-field rules that only matter to provisioning (which block each
`source` needs) are not repeated: nothing here reads them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from modelplane.api._wire import Wire


class SecretRef(Wire):
    name: str = Field(min_length=1, max_length=253)
    key: str | None = Field(default=None, min_length=1, max_length=253)


class IdentitySecretRef(SecretRef):
    type: (
        Literal["GoogleApplicationCredentials", "AWSWebIdentityCredentials", "NebiusServiceAccountCredentials"] | None
    ) = None


class ExistingCache(Wire):
    storage_class_name: str | None = Field(default=None, min_length=1, max_length=253)


class ExistingCluster(Wire):
    secret_ref: SecretRef
    identity_secret_ref: IdentitySecretRef | None = None
    cache: ExistingCache | None = None


class Credentials(Wire):
    type: Literal["ProviderConfig", "ClusterProviderConfig"] | None = None
    name: str | None = Field(default=None, min_length=1, max_length=253)


class ManagedCluster(Wire):
    kubernetes_version: str | None = None
    credentials: Credentials | None = None


class RegionalCluster(ManagedCluster):
    region: str = Field(min_length=1, max_length=32)


class AksCluster(ManagedCluster):
    location: str = Field(min_length=1, max_length=32)


class ClusterSource(Wire):
    """`spec.cluster`: how Modelplane provisions (or adopts) the cluster."""

    source: Literal["GKE", "EKS", "AKS", "Nebius", "Vultr", "Existing"]
    existing: ExistingCluster | None = None
    gke: RegionalCluster | None = None
    eks: RegionalCluster | None = None
    aks: AksCluster | None = None
    nebius: ManagedCluster | None = None
    vultr: RegionalCluster | None = None


class CapacityBlock(Wire):
    capacity_reservation_id: str = Field(min_length=4, max_length=64, pattern=r"^cr-[0-9a-f]+$")


class Infiniband(Wire):
    fabric: str = Field(min_length=1, max_length=63)


class Fabric(Wire):
    type: Literal["None", "EFA", "InfiniBand"] | None = None
    infiniband: Infiniband | None = None
