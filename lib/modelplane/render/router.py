"""The LLMInferenceService `router` of a replica.

PrefillDecode needs a scheduler: without `router.scheduler` KServe creates no endpoint picker, so
nothing sends requests to the prefill pods and they sit idle (KS docs/samples/llmisvc: the
disaggregated samples all set `router: {gateway: {}, route: {}, scheduler: {}}`). That is the
default in PrefillDecode mode: KServe manages the Gateway reference, the HTTPRoute and the
scheduler (presets `kserve-config-llm-router-route` and `kserve-config-llm-scheduler`; the
scheduler config gains its prefill/decode profile from the LLMIS having `prefill`). It needs the
Gateway API and Inference Extension CRDs and a default Gateway on the cluster.

Unified mode renders no router by default: the replica is reachable through KServe's workload
Service, with no Gateway dependency. A deployment that wants routing on a Unified replica, or its
own Gateway, sets `serving.router` (passed through as written); in PrefillDecode mode it must keep
a `scheduler`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.model import ServingMode
from modelplane.render.rendered import RenderError

PREFILL_DECODE_ROUTER: Mapping[str, Mapping[str, Any]] = {"gateway": {}, "route": {}, "scheduler": {}}


def router(mode: ServingMode, configured: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The LLMIS `router`, or None for none."""
    if configured is None:
        return {k: dict(v) for k, v in PREFILL_DECODE_ROUTER.items()} if mode is ServingMode.PREFILL_DECODE else None
    if mode is ServingMode.PREFILL_DECODE and "scheduler" not in configured:
        msg = (
            "serving.router has no scheduler: in PrefillDecode mode KServe routes requests to prefill only "
            "through its scheduler; add scheduler: {} or leave router out"
        )
        raise RenderError(msg)
    return dict(configured) or None
