"""LLMInferenceServices a rename supersedes, kept serving until their successors are Ready.

A change KServe cannot roll in place, and every new template revision, gives an LLMIS a new name
and key (see modelplane.render), so the old Object is no longer rendered. Dropped from the desired
state it is deleted, and with it the LLMIS and the workload KServe made for it: the Deployment
`<name>-kserve` or LeaderWorkerSet `<name>-kserve-mn` carries the LLMIS as its controller owner
reference (KS workload_single_node.go and workload_multi_node.go, `NewControllerRef`, v0.16 to
v0.20), so garbage collection takes its pods. The new LLMIS gets a workload of its own, created
from scratch, and the replica serves nothing until its pods have loaded the model.

When the ModelReplica carries `spec.replacing`, its deployment found room in the replica's pools
for both and charges both, so each observed LLMIS Object no longer rendered is re-emitted exactly
as observed until every rendered one is Ready and KServe has observed its latest generation (the
rule the claim templates follow, `claims.settled`); then they go. The superseded LLMIS still names
its claim templates, so `claims.still_used` keeps those as long. Without `spec.replacing` the old
objects go at once: the deployment counted that replica as down while it is replaced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from modelplane_function.handlers.claims import LLMIS_PREFIX, settled


def superseded(
    observed: Mapping[str, Mapping[str, Any]], rendered: Sequence[str], *, replacing: bool
) -> dict[str, Mapping[str, Any]]:
    """The observed LLMIS Objects, by key, no longer rendered and kept while the rendered ones come up."""
    sources = [k for k in rendered if k.startswith(LLMIS_PREFIX)]
    if not replacing or all(k in observed and settled(observed[k]) for k in sources):
        return {}
    return {k: o for k, o in observed.items() if k.startswith(LLMIS_PREFIX) and k not in rendered}
