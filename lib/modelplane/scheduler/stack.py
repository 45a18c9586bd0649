"""What a cluster's serving stack lets this function render (Modelplane's InferenceCluster.spec.stack).

On a `Standard` cluster KServe runs every engine: a single-node one as a Deployment, a multi-node
one (a Leader and Workers) as a LeaderWorkerSet. Modelplane's `Dynamo` stack runs multi-node
engines as Grove PodCliqueSets gang-scheduled by KAI and installs no LeaderWorkerSet (its
compose-model-replica `select_backend`; its ServingStack pins LeaderWorkerSet for Standard only),
while single-node engines stay what they are on Standard: those render here as anywhere.

A PodCliqueSet is not rendered here. Its pods would be ours to write, where KServe writes a gang's
pods from its presets, and they could not carry what a gang's pods are promised: the
MODELPLANE_LEADER_ADDRESS and MODELPLANE_RANK of `render.gangenv` alias variables the orchestrator
puts ahead of the container's env, and every Grove release (v0.1.0-alpha.11, and
v0.1.0-alpha.12-rc1) appends its GROVE_* variables after it (operator `AddEnvVarsToContainers`) and
has no gang-wide pod index; ai-dynamo/grove#753 (prepends them) is merged but unreleased, #755 (the
index) is open. Modelplane has commands name GROVE_* variables meanwhile. So a multi-node engine is
refused on a Dynamo cluster: by the scheduler before placement, and by the ModelReplica handler for
a replica written by hand or composed by Modelplane.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from modelplane.model import Cluster, Role, Stack


class _Member(Protocol):
    @property
    def role(self) -> Role: ...


class _Engine(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def members(self) -> Sequence[_Member]: ...


GANG_ON_DYNAMO = (
    "runs multi-node engines as Grove PodCliqueSets, not rendered here: no Grove release "
    "(newest v0.1.0-alpha.11) can back MODELPLANE_LEADER_ADDRESS and MODELPLANE_RANK "
    "(it appends its GROVE_* variables after the container's env and has no gang-wide pod index)"
)


DYNAMO_NOTE = (
    "Stack Dynamo: deployments with a multi-node engine are not placed here, as its Grove PodCliqueSets "
    "are not rendered; single-node engines are."
)


def note(stack: Stack) -> str | None:
    """What a cluster's stack means for the deployments placed on it, for its own condition."""
    return DYNAMO_NOTE if stack is Stack.DYNAMO else None


def refusal(cluster: Cluster, engines: Iterable[_Engine]) -> str | None:
    """Why `cluster`'s stack cannot run these engines as rendered here, or None."""
    if cluster.stack is not Stack.DYNAMO:
        return None
    gangs = [e.name for e in engines if any(m.role is not Role.STANDALONE for m in e.members)]
    if not gangs:
        return None
    which = "engine" if len(gangs) == 1 else "engines"
    return f"{which} {', '.join(gangs)}: InferenceCluster {cluster.name} has stack Dynamo, which {GANG_ON_DYNAMO}"
