"""Other deployments' ModelReplicas, read for the ledger straight from their Structs (modelplane.api.ledger).

Only identity, spec.clusterName and spec.engines (names, copies, members' roles, pools and device
requests) are converted; templates, model and status never are. Walking Values is most of the
read, and replicas of one deployment mostly share their engines (the benchmark's 10,000 replicas
of ~900 deployments hold ~500 distinct engine lists), so the engines are also memoised on their
own, by the digest of their serialization, like whole objects in memo.py, bounded by the memory
they keep alive.
"""

from __future__ import annotations

import hashlib

from google.protobuf import struct_pb2
from modelplane import api
from modelplane.devices.memo import BytesLRU, footprint
from modelplane.model import ModelReplica, PlacedEngine

from modelplane_function.handlers.convert import from_value, project

# The benchmark's 10,000 replicas hold ~500 distinct engine lists, charged ~5 MiB.
ENGINES_BYTES = 16 * 2**20
# The parsed engines mirror the projected data they come from; their objects cost about as much again.
_PARSED_PER_PROJECTED = 2

_ENGINES: BytesLRU[bytes, tuple[PlacedEngine, ...]] = BytesLRU(max_bytes=ENGINES_BYTES)


def _engines(struct: struct_pb2.Struct) -> tuple[PlacedEngine, ...] | None:
    """spec.engines read (memoised), or None when spec has no engines for the parser to find missing."""
    spec = struct.fields.get("spec")  # .get: bracket access would insert the key
    if spec is None or spec.WhichOneof("kind") != "struct_value" or "engines" not in spec.struct_value.fields:
        return None
    value = spec.struct_value.fields["engines"]
    key = hashlib.blake2b(value.SerializeToString(deterministic=True), digest_size=16).digest()
    engines = _ENGINES.get(key)
    if engines is not None:
        return engines
    projected = _project_items(value)
    engines = api.ledger_engines(projected)
    _ENGINES.put(key, engines, _PARSED_PER_PROJECTED * footprint(projected))
    return engines


def _project_items(value: struct_pb2.Value) -> object:
    """spec.engines converted as far as ENGINE_FIELDS reach."""
    if value.WhichOneof("kind") != "list_value":
        return from_value(value)
    return [
        project(v.struct_value, api.ENGINE_FIELDS) if v.WhichOneof("kind") == "struct_value" else from_value(v)
        for v in value.list_value.values
    ]


def read_ledger_replica(struct: struct_pb2.Struct) -> ModelReplica:
    """The ledger's ModelReplica of a Struct; SpecError names a bad field of those it reads."""
    engines = _engines(struct)
    return api.parse_ledger_replica(project(struct, api.IDENTITY_FIELDS), engines=engines)
