"""Build the ModelReplica decision record from the current deployment spec and chosen pools."""

from __future__ import annotations

from collections.abc import Sequence

from modelplane.model import Cluster, Deployment, ModelReplica, PlacedEngine, PlacedMember
from modelplane.scheduler.engines import EngineOption
from modelplane.scheduler.kai import default_queue


def build_replica(
    *,
    deployment: Deployment,
    cluster: Cluster,
    name: str,
    index: int,
    options: Sequence[EngineOption],
    ready: bool,
) -> ModelReplica:
    """The replica of `deployment` on `cluster` with engine i on options[i] (spec order)."""
    engines = tuple(
        PlacedEngine(
            name=engine.name,
            copies=engine.copies,
            phase=engine.phase,
            parallelism=engine.parallelism,
            members=tuple(
                PlacedMember(
                    role=member.role,
                    worker_nodes=member.worker_nodes,
                    pool=opt.pool_of(j),
                    device_requests=requests,
                    constraints=member.constraints,
                    template=member.template,
                )
                for j, (member, requests) in enumerate(zip(engine.members, opt.requests, strict=True))
            ),
            fabric_level=opt.fabric.topology_level if opt.fabric is not None and cluster.topology else None,
        )
        for engine, opt in zip(deployment.engines, options, strict=True)
    )
    return ModelReplica(
        namespace=deployment.namespace,
        name=name,
        deployment=deployment.name,
        cluster=cluster.name,
        index=index,
        engines=engines,
        provider_config_name=cluster.provider_config_name,
        workload_namespace=cluster.workload_namespace,
        model=deployment.model,
        model_cache=deployment.model_cache,
        serving_mode=deployment.serving_mode,
        router=deployment.router,
        base_refs=deployment.base_refs,
        tolerations=deployment.tolerations,
        queue=deployment.queue or default_queue(cluster, deployment.namespace),
        priority_class_name=deployment.priority_class_name or cluster.default_priority_class_name,
        topology=cluster.topology,
        topology_required_level=cluster.topology_required_level,
        topology_preferred_level=cluster.topology_preferred_level,
        labels=deployment.template_labels,
        ready=ready,
        kserve_version=cluster.kserve_version,
        exclusive_nodes=deployment.exclusive_nodes,
    )
