"""KAI PodGroup (scheduling.run.ai/v2alpha2): the whole replica as one gang.

Shape: one leaf SubGroup per engine, named after the engine, with `minMember` = the engine's pods
across its copies (copies x (1 + worker.nodes), or copies for a Standalone engine); the PodGroup
itself requires every leaf (`minSubGroup` = number of engines) and sets no `minMember` (the two
are exclusive). So a replica starts whole or not at all: no decode without its prefill.

Why per engine and not leader/worker leaves: pods join a SubGroup by the label
`kai.scheduler/subgroup-name`, and the LLMIS only carries pod labels per workload
(`spec.labels`, `spec.prefill.labels`), applied to the leader and the worker pods alike. The engine
is therefore the finest grain whose label every pod can carry truthfully.

Topology: when the cluster names a KAI Topology, the PodGroup carries `topologyConstraint
{topology}` plus the levels (node label keys of that Topology) the cluster's `spec.kai` gives:
`requiredTopologyLevel` keeps every pod of the replica in one domain of that level (one rack),
`preferredTopologyLevel` asks KAI to try. No level is guessed: without one KAI applies no locality.
An engine whose members span pools of one interconnect fabric (the cluster's `spec.fabrics`) whose
domain is a level of that Topology gets `requiredTopologyLevel` at that level on its own leaf, so
KAI keeps its pods within one fabric domain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.model import ModelReplica, PlacedEngine


def engine_pods(engine: PlacedEngine) -> int:
    """Pods of one engine across its copies: its leaf's minMember."""
    return engine.copies * sum(m.pods_per_copy for m in engine.members)


def _sub_group(replica: ModelReplica, engine: PlacedEngine) -> dict[str, Any]:
    """An engine's leaf; one whose members span pools of a fabric is kept within one domain of its level."""
    leaf: dict[str, Any] = {"name": engine.name, "minMember": engine_pods(engine)}
    if engine.fabric_level and replica.topology:
        leaf["topologyConstraint"] = {"topology": replica.topology, "requiredTopologyLevel": engine.fabric_level}
    return leaf


def pod_group(replica: ModelReplica, *, name: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """The replica's PodGroup."""
    engines = sorted(replica.engines, key=lambda e: e.name)
    spec: dict[str, Any] = {
        "queue": replica.queue,
        "minSubGroup": len(engines),
        "subGroups": [_sub_group(replica, e) for e in engines],
        "priorityClassName": replica.priority_class_name,
    }
    if replica.topology:
        constraint = {"topology": replica.topology}
        if replica.topology_required_level:
            constraint["requiredTopologyLevel"] = replica.topology_required_level
        if replica.topology_preferred_level:
            constraint["preferredTopologyLevel"] = replica.topology_preferred_level
        spec["topologyConstraint"] = constraint
    return {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": replica.workload_namespace, "labels": dict(labels)},
        "spec": spec,
    }
