"""The gang-coordination env every pod of a multi-node engine gets, as Modelplane sets it.

A Leader's or Worker's command finds its peers without naming the orchestrator: it addresses the
leader through `$(MODELPLANE_LEADER_ADDRESS)` and takes its rank in the gang (0 on the leader,
1..worker.nodes on the workers) from `$(MODELPLANE_RANK)`. KServe runs such an engine as a
LeaderWorkerSet, whose controller puts `LWS_LEADER_ADDRESS` and `LWS_WORKER_INDEX` ahead of every
container's env (LWS pkg/utils/pod/pod_utils.go `AddLWSVariables`), so ours alias them through the
kubelet's dependent env expansion, as Modelplane's LWS backend does (compose-model-replica
backends/base.py `leader_address_env`, `rank_env`).

They go ahead of the engine's own env, so its entries (and args) can refer to them: the kubelet
expands an env value against the entries before it. A name the engine sets itself keeps the
engine's entry and value; ours is left out rather than written twice (a container's env is a map
keyed by name: a duplicate name is refused by server-side apply and collapsed by KServe's merge).
Standalone engines run as Deployments, where LWS sets nothing, so they get none of this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

LEADER_ADDRESS_ENV = "MODELPLANE_LEADER_ADDRESS"
RANK_ENV = "MODELPLANE_RANK"
GANG_ENV: tuple[Mapping[str, str], ...] = (
    {"name": LEADER_ADDRESS_ENV, "value": "$(LWS_LEADER_ADDRESS)"},
    {"name": RANK_ENV, "value": "$(LWS_WORKER_INDEX)"},
)


def with_gang_env(env: Sequence[Any]) -> list[Any]:
    """`env` with the gang entries it does not set itself put ahead of it."""
    own = {cast("Mapping[str, Any]", e).get("name") for e in env if isinstance(e, Mapping)}
    return [*(dict(e) for e in GANG_ENV if e["name"] not in own), *env]
