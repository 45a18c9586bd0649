"""The main cause of a deployment's unplaced replicas, for the one line stderr gives its failure.

The condition message counts the reasons clusters turned the deployment down ("3 had no pool
matching an engine's devices") but has no room for the numbers behind them, which --explain shows.
Re-running the scheduler on the request the function last received (see explain.py) recovers each
cluster's failures, and the line names the nearest miss: the cluster that, with its failures
removed, would place the replica, and the fewest and most fixable of them. The most common reason
is often a cluster that could never host the deployment, while one full cluster is the real cause.
Nearest, in order: a cluster the clusterSelector picks; fewer failing filters; only failures that
may pass later (capacity, readiness) before one that needs the deployment or cluster changed; a
cluster short of free nodes alone; then by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence, Set

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import names
from modelplane.scheduler.result import NODE_CAPACITY, Code, Status

from modelplane_function.cli.render.explain import scheduled
from modelplane_function.cli.render.unmatched import unmatched
from modelplane_function.cli.render.verdict import Failure, Finding
from modelplane_function.cli.render.xr import name_of, namespace_of
from modelplane_function.handlers.convert import to_dict

_SELECTOR = "ClusterSelector"  # the filter's name (modelplane.scheduler.filters)


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
        found = nearest_miss(result.schedule.diagnosis.statuses)
        if found is not None:
            cluster, status = found
            said = " and ".join(f"{s.reason} ({s.detail})" for s in status.every)
            out[(namespace_of(xr), name_of(xr))] = f"{cluster} {said}"
    return out


def _distance(cluster: str, status: Status) -> tuple[bool, int, bool, bool, str]:
    every = status.every
    return (
        any(s.filter == _SELECTOR for s in every),  # the user's own choice not to use it
        len(every),
        any(s.code is Code.UNRESOLVABLE for s in every),
        status.filter != NODE_CAPACITY,
        cluster,
    )


def nearest_miss(statuses: Mapping[str, Status]) -> tuple[str, Status] | None:
    """The rejected cluster nearest to placing the replica and its failures; None when none was rejected."""
    rejected = [(c, s) for c, s in statuses.items() if not s.fits]
    return min(rejected, key=lambda cs: _distance(*cs)) if rejected else None


def selector_causes(requests: Iterable[bytes], wanted: Set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(namespace, name) of each `wanted` deployment whose clusterSelector matches no cluster -> what it wants
    and the nearest cluster's labels."""
    out: dict[tuple[str, str], str] = {}
    for wire in requests:
        req = fnv1.RunFunctionRequest.FromString(wire)
        xr = to_dict(req.observed.composite.resource)
        if (namespace_of(xr), name_of(xr)) in wanted and (found := unmatched(req)) is not None:
            out[(namespace_of(xr), name_of(xr))] = found.cause()
    return out


def with_causes(found: Sequence[Finding], requests: Iterable[bytes], rest: str) -> list[Finding]:
    """`found`, each deployment's unplaced-replicas or NoClusters failure naming its main cause and where
    `rest` is."""
    requests = list(requests)
    unplaced = {(f.namespace, f.name) for f in found if isinstance(f, Failure) and _unplaced(f)}
    no_clusters = {(f.namespace, f.name) for f in found if isinstance(f, Failure) and _no_clusters(f)}
    causes = {
        **(main_causes(requests, unplaced) if unplaced else {}),
        **(selector_causes(requests, no_clusters) if no_clusters else {}),
    }
    out: list[Finding] = []
    for f in found:
        wanted = isinstance(f, Failure) and (_unplaced(f) or _no_clusters(f))
        cause = causes.get((f.namespace, f.name)) if isinstance(f, Failure) and wanted else None
        out.append(dataclasses.replace(f, cause=f"{cause}; {rest}") if isinstance(f, Failure) and cause else f)
    return out


def _unplaced(f: Failure) -> bool:
    return f.kind == names.KIND_DEPLOYMENT and f.partial


def _no_clusters(f: Failure) -> bool:
    return f.kind == names.KIND_DEPLOYMENT and f.reason == names.REASON_NO_CLUSTERS
