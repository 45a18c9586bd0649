"""What a renderer returns, and the one error it raises."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane import names
from modelplane.errors import SpecError


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderedObject:
    """One composed resource of a ModelReplica: a provider-kubernetes Object wrapping a workload manifest."""

    key: str  # composition resource name on the ModelReplica: stable and unique per replica
    manifest: Mapping[str, Any]
    readiness_source: bool  # True for the LLMInferenceService Objects: they drive the replica's readiness


class RenderError(SpecError):
    """The replica's spec cannot be turned into manifests (no model, contradictory parallelism, ...)."""

    reason = names.REASON_CANNOT_RENDER
