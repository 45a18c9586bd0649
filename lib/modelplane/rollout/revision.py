"""Template revisions: which version of a deployment's template a replica renders.

Like a Deployment's pod-template-hash, the revision is a digest of what every replica renders
from: engines (members, pod templates, device requests, copies, parallelism), the model, serving,
tolerations and scheduling (exclusive nodes included). Placement (cluster, pools, index),
spec.replicas, the clusterSelector, the rollout strategy and the template's metadata labels are not
part of it: they move or scale replicas, or update labels in place, but never change what a replica
serves. Equal templates give equal revisions whatever the order of map keys in the input.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from enum import Enum

from modelplane.model import Deployment

REVISION_LENGTH = 10


def _plain(value: object) -> object:
    """`value` as JSON data; dataclasses by field, enums by value, maps with sorted keys."""
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        items: Mapping[object, object] = value  # pyright: ignore[reportUnknownVariableType]
        return {str(k): _plain(v) for k, v in sorted(items.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        seq: list[object] | tuple[object, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return [_plain(v) for v in seq]
    return value


def revision(deployment: Deployment) -> str:
    """The deployment's template revision: 10 hex characters."""
    rendered_from: dict[str, object] = {
        "engines": deployment.engines,
        "model": deployment.model,
        "servingMode": deployment.serving_mode,
        "router": deployment.router,
        "baseRefs": deployment.base_refs,
        "tolerations": deployment.tolerations,
        "queue": deployment.queue,
        "priorityClassName": deployment.priority_class_name,
    }
    if deployment.exclusive_nodes:  # only when set, so templates from before the field keep their revisions
        rendered_from["exclusiveNodes"] = True
    if deployment.model_cache is not None:  # only when set: the revisions of deployments without one stand
        rendered_from["modelCache"] = deployment.model_cache
    text = json.dumps(_plain(rendered_from), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:REVISION_LENGTH]
