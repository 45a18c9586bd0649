"""Other deployments' ModelReplicas, read for the ledger straight from their Structs (modelplane.api.ledger).

Only identity, spec.clusterName and spec.engines (names, copies, members' roles, pools and device
requests) are converted; templates, model and status never are. Walking Values is most of the
read, and replicas of one deployment mostly share their engines (the benchmark's 10,000 replicas
of ~900 deployments hold ~500 distinct engine lists), so the engines are also memoised on their
own, by the digest of their serialization, like whole objects in memo.py.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from google.protobuf import struct_pb2
from modelplane import api
from modelplane.model import ModelReplica, PlacedEngine

from modelplane_function.handlers.convert import from_value, project
from modelplane_function.handlers.memo import LIMIT

_ENGINES: OrderedDict[bytes, tuple[PlacedEngine, ...]] = OrderedDict()


def _engines(struct: struct_pb2.Struct) -> tuple[PlacedEngine, ...] | None:
    """spec.engines read (memoised), or None when spec has no engines for the parser to find missing."""
    spec = struct.fields.get("spec")  # .get: bracket access would insert the key
    if spec is None or spec.WhichOneof("kind") != "struct_value" or "engines" not in spec.struct_value.fields:
        return None
    value = spec.struct_value.fields["engines"]
    key = hashlib.blake2b(value.SerializeToString(deterministic=True), digest_size=16).digest()
    engines = _ENGINES.get(key)
    if engines is not None:
        _ENGINES.move_to_end(key)
        return engines
    engines = api.ledger_engines(_project_items(value))
    _ENGINES[key] = engines
    if len(_ENGINES) > LIMIT:
        _ENGINES.popitem(last=False)
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
