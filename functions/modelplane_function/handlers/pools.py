"""InferenceClusters as the scheduler reads them: published pools, each device kind converted and validated once.

A fleet repeats a few device kinds (GPU model, driver version, NIC) across thousands of pools, and
converting and validating the same device Values was most of parsing a cluster on a server's first
call. A devices list is converted once per content (keyed by its serialization, like whole objects
in memo.py; the converted lists are shared, and parsing never mutates them), and each device is
validated once per content through parse_cluster's device memo. spec.nodePools is not converted
when a non-null status.gpuPools replaces it: parse_cluster does not read it then.
"""

from __future__ import annotations

import hashlib
from typing import Any

from google.protobuf import struct_pb2
from modelplane import api
from modelplane.model import Cluster

from modelplane_function.handlers.convert import from_value
from modelplane_function.handlers.memo import LIMIT

_LISTS: dict[bytes, Any] = {}  # devices Value digest -> converted list
_DEVICES: dict[str, Any] = {}  # parse_cluster's device memo


def _bounded(memo: dict[Any, Any]) -> None:
    if len(memo) > LIMIT:  # coarse, but bounded: a churning fleet refills it at the next call
        memo.clear()


def _devices(v: struct_pb2.Value) -> Any:
    key = hashlib.blake2b(v.SerializeToString(deterministic=True), digest_size=16).digest()
    found = _LISTS.get(key)
    if found is None:
        found = _LISTS[key] = from_value(v)
    return found


def _pools(v: struct_pb2.Value) -> Any:
    """status.gpuPools converted, devices lists through the memo."""
    if v.WhichOneof("kind") != "list_value":
        return from_value(v)
    out: list[Any] = []
    for item in v.list_value.values:
        if item.WhichOneof("kind") != "struct_value":
            out.append(from_value(item))
            continue
        f = item.struct_value.fields
        out.append({k: _devices(f[k]) if k == "devices" else from_value(f[k]) for k in f})
    return out


def cluster_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """An InferenceCluster as a dict, as far as parse_cluster reads it."""
    f = struct.fields
    out = {k: from_value(f[k]) for k in f if k not in ("spec", "status")}
    if "status" in f:
        status = f["status"]
        if status.WhichOneof("kind") == "struct_value":
            sf = status.struct_value.fields
            out["status"] = {k: _pools(sf[k]) if k == "gpuPools" else from_value(sf[k]) for k in sf}
        else:
            out["status"] = from_value(status)
    status = out.get("status")
    published = isinstance(status, dict) and status.get("gpuPools") is not None  # pyright: ignore[reportUnknownMemberType]
    if "spec" in f:
        spec = f["spec"]
        if published and spec.WhichOneof("kind") == "struct_value":
            sf = spec.struct_value.fields
            out["spec"] = {k: from_value(sf[k]) for k in sf if k != "nodePools"}
        else:
            out["spec"] = from_value(spec)
    return out


def read_cluster(struct: struct_pb2.Struct) -> Cluster:
    """The InferenceCluster of a Struct; SpecError names the bad field."""
    _bounded(_LISTS)
    _bounded(_DEVICES)
    return api.parse_cluster(cluster_dict(struct), devices=_DEVICES)
