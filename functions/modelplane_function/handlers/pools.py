"""InferenceClusters as the scheduler reads them: published pools, each device kind converted and validated once.

A fleet repeats a few device kinds (GPU model, driver version, NIC) across thousands of pools, and
converting and validating the same device Values was most of parsing a cluster on a server's first
call. A devices list is converted once per content (keyed by its serialization, like whole objects
in memo.py; the converted lists are shared, and parsing never mutates them), and each device is
validated once per content through parse_cluster's device memo. spec.nodePools is not converted
when a non-null status.gpuPools replaces it: parse_cluster does not read it then.

Both memos are bounded by the memory their entries keep alive, not by their count: a churn of
clusters with large device attributes filled 50,000 entries each, 207 and 86 MiB after ten calls.
"""

from __future__ import annotations

import hashlib
from typing import Any

from google.protobuf import struct_pb2
from modelplane import api
from modelplane.devices.memo import BytesLRU, footprint
from modelplane.model import Cluster

from modelplane_function.handlers.convert import from_value

# Per memo: the largest benchmark fleet (1,000 clusters, a few hundred distinct device lists and
# kinds) takes a few MiB of each, so a call never evicts what it is about to reuse.
LISTS_BYTES = 16 * 2**20
DEVICES_BYTES = 16 * 2**20
# A validated device: measured at ~1.9 KiB, ~0.6 KiB per attribute or capacity and about its JSON again.
_DEVICE_BYTES, _DEVICE_ENTRY_BYTES = 2048, 640


def _device_size(key: str, device: Any) -> int:
    entries = len(getattr(device, "attributes", None) or {}) + len(getattr(device, "capacity", None) or {})
    return _DEVICE_BYTES + _DEVICE_ENTRY_BYTES * entries + 2 * len(key)


_LISTS: BytesLRU[bytes, Any] = BytesLRU(max_bytes=LISTS_BYTES, size=lambda _, v: footprint(v))
_DEVICES: BytesLRU[str, Any] = BytesLRU(max_bytes=DEVICES_BYTES, size=_device_size)  # parse_cluster's device memo


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
    return api.parse_cluster(cluster_dict(struct), devices=_DEVICES)
