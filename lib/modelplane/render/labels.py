"""Which labels go where on an LLMInferenceService, and why.

KServe builds one label map for a single-node workload and uses that same map as the Deployment's
labels, its pod template's labels and its `spec.selector`, then copies `spec.labels`
(`spec.prefill.labels` for the prefill Deployment) into it (KS workload_single_node.go,
`expectedSingleNodeMainDeployment`, `utils.PropagateMap`). Hence:

- KServe's own keys are never forwarded: the workload Service and InferencePool select
  `app.kubernetes.io/name`, `app.kubernetes.io/part-of` and `kserve.io/component`, prefill and
  decode differ by `app.kubernetes.io/component` and `llm-d.ai/role`. Overwriting one leaves the
  Service without endpoints or the router without a role (`RESERVED_POD_LABELS`).
- Every pod label is part of a Deployment selector, which is immutable: a later change of any key
  or value would make KServe's update fail and the LLMIS stay out of sync. So pod labels are only
  what belongs to the pods (the member templates' labels, our identity, the engine, KAI's queue and
  subgroup), and the LLMIS name carries a digest of them (`digest`): a change replaces the LLMIS.
  The deployment's template labels stay on the manifests' metadata and never reach pods, so
  relabelling a deployment never restarts serving.
- LLMIS metadata labels under `kueue.x-k8s.io/` and KServe's localmodel label are copied onto the
  Deployment and its selector too (`propagateDeploymentMetadata`), and would hand the pods to
  Kueue: they are dropped from the LLMIS metadata (`llmis_metadata_labels`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

RESERVED_POD_LABELS = frozenset(
    {
        "app.kubernetes.io/name",
        "app.kubernetes.io/part-of",
        "app.kubernetes.io/component",
        "kserve.io/component",
        "llm-d.ai/role",
    }
)
# LLMIS metadata labels KServe copies onto the workload and its selector
_PROPAGATED_PREFIXES = ("kueue.x-k8s.io/", "internal.serving.kserve.io/")


def user_pod_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The user's pod labels without the keys KServe reserves."""
    return {k: v for k, v in labels.items() if k not in RESERVED_POD_LABELS}


def llmis_metadata_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """LLMIS metadata labels without those KServe would copy into a workload selector."""
    return {k: v for k, v in labels.items() if not k.startswith(_PROPAGATED_PREFIXES)}


def digest(value: object) -> str:
    """A short, stable digest of a JSON-able value (sorted keys)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]
