"""Fleet objects the caller could not read, so that one bad object cannot stop every deployment.

An InferenceCluster that cannot be read is no cluster to place on, but the replicas already on it
stay exactly as they are (their pools cannot be checked against a spec nobody can read). A
ModelReplica that cannot be read holds an unknown number of nodes on its cluster: that cluster
takes no new replica until it can be read again, and everything else goes on as usual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from modelplane.scheduler.result import Code, Status

REASON_INVALID_CLUSTER = "had an InferenceCluster that cannot be read"


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class Unreadable:
    clusters: Mapping[str, str] = field(default_factory=_empty)  # cluster name -> why it cannot be read
    replicas_on: Mapping[str, str] = field(default_factory=_empty)  # cluster name -> which replica on it, and why

    def statuses(self, known: frozenset[str]) -> dict[str, Status]:
        """The diagnosis entry of every unreadable cluster that is not also a readable one."""
        return {
            name: Status(code=Code.UNRESOLVABLE, reason=REASON_INVALID_CLUSTER, detail=problem, filter="Readable")
            for name, problem in sorted(self.clusters.items())
            if name not in known
        }
