"""Serving from a Modelplane ModelCache: where its volume is, and whether a cluster can mount it.

The contract is Modelplane's (v0.3.1): its ModelCache composition stages the model onto a
ReadWriteMany PersistentVolumeClaim named `child_name("modelcache", <namespace>, <cache>)` in the
namespace `default` of every InferenceCluster its clusterSelector matches (compose-model-cache
`_pvc_name`, `REMOTE_NS`), and every engine pod of a replica naming the cache mounts that claim
read-write at /mnt/models (compose-model-replica backends/base.py `cache_mounts`: engines write
tokenizer, compile and lock files beside the weights, and a read-only mount fails them).

A pod mounts only a claim of its own namespace, so a cluster serves from the cache only when its
workloadNamespace is that namespace; and the weights are all there only once the cache reports the
cluster `Ready` (a pod started during hydration would read a partial model). Placement checks both
(scheduler/filters.py, `ModelCache`); rendering mounts the claim (render/pod.py).
"""

from __future__ import annotations

import hashlib

from modelplane.model import ModelRef

VOLUME_NAMESPACE = "default"
MOUNT_PATH = "/mnt/models"
_DNS_LABEL_MAX = 63
_HASH_LENGTH = 5


def child_name(*parts: str) -> str:
    """Crossplane's Python SDK `resource.child_name`: the parts joined by "-", cut to fit a DNS label
    with a 5-character sha256 suffix of the whole. Modelplane names the cache's claim with it."""
    full = "-".join(parts)
    suffix = hashlib.sha256(full.encode()).hexdigest()[:_HASH_LENGTH]
    return f"{full[: _DNS_LABEL_MAX - _HASH_LENGTH - 1].rstrip('-')}-{suffix}"


def claim_name(namespace: str, cache: str) -> str:
    """The PersistentVolumeClaim holding ModelCache `namespace/cache` on every cluster it stages to."""
    return child_name("modelcache", namespace, cache)


def served_from_cache(model: ModelRef | None, *, namespace: str, cache: str, served_name: str | None) -> ModelRef:
    """The model as served from ModelCache `namespace/cache`: KServe's `pvc://` URI of its claim.

    Clients keep requesting the name they would without the cache: the model's own name, else
    what its URI names, else the engines' --served-model-name, else the cache's name. No Secret
    is read: nothing is downloaded.
    """
    name = (model.name or model.uri.partition("://")[2]) if model is not None else None
    return ModelRef(uri=f"pvc://{claim_name(namespace, cache)}", name=name or served_name or cache)
