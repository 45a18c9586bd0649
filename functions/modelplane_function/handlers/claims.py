"""ResourceClaimTemplates a replica no longer renders but its workload may still use.

A template's spec is immutable, so a device change renders a new, digest-named template and points
the LLMInferenceService at it. Dropping the old one from the desired state deletes it while the
old pods' LeaderWorkerSet or Deployment revision still names it: a pod of that revision recreated
before the rollout ends (a restarted LWS group, a replaced node) cannot get its claim. So an old
template is kept while any observed LLMInferenceService Object:

- names it, in what was last applied (`spec.forProvider.manifest`) or in what the workload cluster
  shows (`status.atProvider.manifest`): the update has not reached KServe yet, or an LLMIS being
  replaced still runs; or
- has not settled: its Object is not Ready, or KServe has not yet observed its latest generation
  (`status.observedGeneration` below `metadata.generation`), so its workload is still rolling.

It goes with the next reconcile after every LLMIS settled on the new template. Pods that already
run keep their claims either way: a claim is generated from the template once, when the pod is
created.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from modelplane_function.handlers.conditions import is_ready

CLAIM_PREFIX = "claim-"
LLMIS_PREFIX = "llmis-"
_TEMPLATE_REF = "resourceClaimTemplateName"


def _at(obj: Mapping[str, Any], *path: str) -> Any:
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
    return value


def _references(value: Any) -> Iterator[str]:
    """Every resourceClaimTemplateName in a manifest (pod templates sit at several depths)."""
    if isinstance(value, Mapping):
        for k, v in value.items():  # pyright: ignore[reportUnknownVariableType]
            if k == _TEMPLATE_REF and isinstance(v, str):
                yield v
            else:
                yield from _references(v)
    elif isinstance(value, list):
        for v in value:  # pyright: ignore[reportUnknownVariableType]
            yield from _references(v)


def settled(obj: Mapping[str, Any]) -> bool:
    generation = _at(obj, "status", "atProvider", "manifest", "metadata", "generation")
    observed = _at(obj, "status", "atProvider", "manifest", "status", "observedGeneration")
    behind = isinstance(generation, int) and (not isinstance(observed, int) or observed < generation)
    return is_ready(obj) and not behind


def still_used(observed: Mapping[str, Mapping[str, Any]], rendered: set[str]) -> dict[str, Mapping[str, Any]]:
    """The observed claim templates, by key, that are no longer rendered and must be kept a while."""
    old = {k: o for k, o in observed.items() if k.startswith(CLAIM_PREFIX) and k not in rendered}
    if not old:
        return {}
    services = [o for k, o in observed.items() if k.startswith(LLMIS_PREFIX)]
    if not all(settled(o) for o in services):
        return old
    named = {
        ref
        for o in services
        for manifest in (_at(o, "spec", "forProvider", "manifest"), _at(o, "status", "atProvider", "manifest"))
        for ref in _references(manifest)
    }
    return {k: o for k, o in old.items() if _at(o, "spec", "forProvider", "manifest", "metadata", "name") in named}
