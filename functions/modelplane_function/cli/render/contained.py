"""Fleet objects the function could not read and left out, as the offline tools report them.

The function contains another deployment's bad object instead of failing: an InferenceCluster that
cannot be read takes no new replica, a ModelReplica that cannot be read closes its cluster to new
ones, and everything else goes on (modelplane.scheduler.unreadable). That is right for a control
plane, but a render that exits 0 having quietly placed everything elsewhere hides a broken input:
each contained object is a finding of its own, named on stderr, that makes the input rejected.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import names

from modelplane_function.handlers import requirements
from modelplane_function.handlers.keep import observed_of_kind


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class Contained:
    kind: str
    cluster: str  # the cluster it closes to new replicas
    problem: str  # "<Kind> <name>: what is wrong", as the function's diagnosis words it

    @property
    def partial(self) -> bool:
        return False  # an input the function could not read is a rejected input

    def line(self) -> str:
        subject, _, detail = self.problem.partition(": ")
        if self.kind == names.KIND_CLUSTER:
            effect = "no new replica is placed on it"
        else:
            effect = f"its cluster {self.cluster} takes no new replica"
        return f"{subject} cannot be read, so {effect}: {detail}"


def contained(requests: Iterable[bytes]) -> list[Contained]:
    """Every fleet object that a deployment's request held and the function left out, each once, sorted.

    `requests` are each ModelDeployment's last request, serialized. A deployment's own ModelReplicas
    are not among them: one it cannot read stops its scheduling, which its condition reports.
    """
    found: set[Contained] = set()
    for wire in requests:
        req = fnv1.RunFunctionRequest.FromString(wire)
        own = observed_of_kind(req, names.KIND_REPLICA).values()
        skip = frozenset(
            (str((r.get("metadata") or {}).get("namespace", "")), str((r.get("metadata") or {}).get("name", "")))
            for r in own
        )
        _, clusters = requirements.clusters(req)
        _, replicas = requirements.replicas(req, skip=skip)
        found.update(Contained(kind=names.KIND_CLUSTER, cluster=c, problem=p) for c, p in clusters.items())
        found.update(Contained(kind=names.KIND_REPLICA, cluster=c, problem=p) for c, p in replicas.items())
    return sorted(found)
