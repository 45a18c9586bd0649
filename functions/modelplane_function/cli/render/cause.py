"""The main cause of a deployment's unplaced replicas, for the one line stderr gives its failure.

The condition message counts the reasons clusters turned the deployment down ("3 had no pool
matching an engine's devices") but has no room for the numbers behind them, which --explain shows.
Re-running the scheduler on the request the function last received (see explain.py) recovers the
most common reason's first cluster and its specifics, so the line alone says what to fix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence, Set

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import names

from modelplane_function.cli.render.explain import scheduled
from modelplane_function.cli.render.verdict import Failure, Finding
from modelplane_function.cli.render.xr import name_of, namespace_of
from modelplane_function.handlers.convert import to_dict


def main_causes(requests: Iterable[bytes], wanted: Set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(namespace, name) of each `wanted` deployment whose clusters turned it down -> its main cause, in words."""
    out: dict[tuple[str, str], str] = {}
    for wire in requests:
        req = fnv1.RunFunctionRequest.FromString(wire)
        xr = to_dict(req.observed.composite.resource)
        if (namespace_of(xr), name_of(xr)) not in wanted:
            continue  # scheduling a 1,000-cluster fleet again costs a second: only where a line needs it
        _, inputs, result = scheduled(req)
        if inputs is None or isinstance(result, str):
            continue  # not scheduled: the condition says why
        found = result.schedule.diagnosis.main_cause()
        if found is not None:
            cluster, status = found
            out[(namespace_of(xr), name_of(xr))] = f"{cluster} {status.reason} ({status.detail})"
    return out


def with_causes(found: Sequence[Finding], requests: Iterable[bytes], rest: str) -> list[Finding]:
    """`found`, each deployment's unplaced-replicas failure naming its main cause and where `rest` is."""
    wanted = {(f.namespace, f.name) for f in found if isinstance(f, Failure) and _unplaced(f)}
    causes = main_causes(requests, wanted) if wanted else {}
    out: list[Finding] = []
    for f in found:
        cause = causes.get((f.namespace, f.name)) if isinstance(f, Failure) and _unplaced(f) else None
        out.append(dataclasses.replace(f, cause=f"{cause}; {rest}") if isinstance(f, Failure) and cause else f)
    return out


def _unplaced(f: Failure) -> bool:
    return f.kind == names.KIND_DEPLOYMENT and f.partial
