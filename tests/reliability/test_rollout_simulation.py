"""A rollout driven through the real function over gRPC, round after round, against a model of the clusters.

After each reconcile the composed ModelReplicas are fed back as observed; a seeded model flips a
replica Ready a few rounds after it first appears at its revision (some never do). Each round is
two minutes: the Progressing condition's lastTransitionTime moves when its message changes, as
Crossplane moves it, and is shown to the function that many rounds before its wall clock. Checked every round: at least spec.replicas -
maxUnavailable replicas are Ready; no pool holds more replicas than it has nodes; a replica left
at an old revision has exactly the manifest it had. One-pod replicas run on two small clusters
(room for one surge) over three seeds, and each benchmark shape (Standalone, a Leader/Worker gang,
Prefill/Decode) on a generated 6-cluster fleet. The rollout completes when every replica comes
up, and halts with ProgressDeadlineExceeded, the old replicas still serving, when one never does.
Two changes land mid-rollout on three small clusters: a NoExecute drain taint on the cluster with
the most replicas (the rollout completes with none left there), and a second spec change (every
replica converges to the latest revision; one left at an older one keeps its manifest).

Every change renames each replica's LLMInferenceService. The model plays the ModelReplica handler:
a replica carrying spec.replacing stays Ready through its old objects until its new ones are. With
room for both in every pool, replicas are renamed beside their old objects one at a time (maxSurge
1) and all four serve in every round; with no room, one replica at a time goes down instead.
"""

import copy
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from modelplane import api
from modelplane.rollout import revision
from modelplane_function.handlers.convert import to_dict
from modelplane_function.handlers.deployment import DEMAND_KEY

from tests.benchmarks import fleet, shapes
from tests.benchmarks.shapes import Shape
from tests.function.factories import cluster, deployment, namespace, request

from .conftest import RunFunction

ROUND = timedelta(minutes=2)
SMALL = [cluster("a", nodes=3), cluster("b", nodes=2)]  # 5 nodes for 4 one-node replicas: room for one surge
# 7 nodes: draining the cluster with the most replicas still leaves room for 4 and a surge
THREE = [cluster("a", nodes=3), cluster("b", nodes=2), cluster("c", nodes=2)]
DRAIN = {"key": "drain", "value": "true", "effect": "NoExecute"}


def changed(xr: dict[str, Any], image: str) -> dict[str, Any]:
    out = copy.deepcopy(xr)
    out["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["image"] = image
    return out


@dataclass
class Model:
    """The clusters: when each (replica, revision) becomes Ready; None never."""

    seed: int
    never: frozenset[str] = frozenset()  # revisions that never come up
    delays: dict[tuple[str, str], int | None] = field(default_factory=dict)

    def ready(self, name: str, revision: str, age: int) -> bool:
        key = (name, revision)
        if key not in self.delays:
            rng = random.Random(f"{self.seed}-{name}-{revision}")
            self.delays[key] = None if revision in self.never else rng.randint(1, 3)
        delay = self.delays[key]
        return delay is not None and age >= delay


@dataclass
class Simulation:
    run: RunFunction
    model: Model
    xr: dict[str, Any]
    clusters: list[dict[str, Any]]
    observed: dict[str, dict[str, Any]] = field(default_factory=dict)
    born: dict[tuple[str, str], int] = field(default_factory=dict)  # (name, revision) -> round it appeared
    status: dict[str, Any] = field(default_factory=dict)
    serving: dict[str, bool] = field(default_factory=dict)  # replica -> Ready last round
    moved: dict[str, int] = field(default_factory=dict)  # condition type -> the round it last changed
    rounds: int = 0

    def reconcile(self) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
        # The function reads the wall clock: each transition is stamped as long ago as the model says.
        now = datetime.now(UTC)
        shown = [
            {**c, "lastTransitionTime": (now - ROUND * (self.rounds - self.moved[c["type"]])).isoformat()}
            for c in self.status.get("conditions", [])
        ]
        xr = {**self.xr, "status": {**self.status, "conditions": shown}}
        ns = namespace(self.xr["metadata"]["namespace"])
        required = {"clusters": self.clusters, "replicas": list(self.observed.values()), "namespace": [ns]}
        rsp = self.run(request(xr, observed=self.observed, required=required))
        desired = {k: to_dict(r.resource) for k, r in rsp.desired.resources.items() if k != DEMAND_KEY}
        status = to_dict(rsp.desired.composite.resource).get("status", {})
        conditions = []
        before = {c["type"]: c for c in self.status.get("conditions", [])}
        for c in rsp.conditions:
            typ, message = c.type, c.message
            status_word = {1: "True", 2: "False"}.get(c.status, "Unknown")
            old = before.get(typ)
            same = old is not None and (old["status"], old["reason"], old.get("message", "")) == (
                status_word,
                c.reason,
                message,
            )
            if not same:
                self.moved[typ] = self.rounds
            conditions.append({"type": typ, "status": status_word, "reason": c.reason, "message": message})
        self.status = {**status, "conditions": conditions}
        return desired, self.status

    def step(self) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
        desired, status = self.reconcile()
        self.rounds += 1
        observed: dict[str, dict[str, Any]] = {}
        for key, obj in desired.items():
            name = obj["metadata"]["name"]
            revision = obj["metadata"]["labels"].get("modelplane.ai/revision", "")
            born = self.born.setdefault((name, revision), self.rounds)
            ready = self.model.ready(name, revision, self.rounds - born)
            # As the ModelReplica handler does: with spec.replacing the old objects serve (if they did)
            # until the new ones are Ready, and the replica says so with ReplicaReady's reason.
            replacing = "replacing" in obj["spec"] and not ready and self.serving.get(name, False)
            ready = ready or replacing
            self.serving[name] = ready
            seen = copy.deepcopy(obj)
            seen["metadata"]["annotations"] = {"crossplane.io/composition-resource-name": key}
            seen["status"] = {
                "conditions": [
                    {"type": "Ready", "status": "True" if ready else "False", "reason": "Test"},
                    {"type": "ReplicaReady", "status": "True", "reason": "Replacing" if replacing else "Test"},
                ]
            }
            observed[key] = seen
        self.observed = observed
        return desired, status


def ready_count(observed: dict[str, dict[str, Any]]) -> int:
    return sum(o["status"]["conditions"][0]["status"] == "True" for o in observed.values())


def overcommitted(clusters: list[dict[str, Any]], observed: dict[str, dict[str, Any]]) -> dict[tuple[str, str], int]:
    nodes = {(c.name, p.name): p.nodes for c in map(api.parse_cluster, clusters) for p in c.pools}
    used: Counter[tuple[str, str]] = Counter()
    for o in observed.values():
        r = api.parse_replica(o)
        for pool, n in r.node_cost_by_pool().items():
            used[(r.cluster, pool)] += n
    return {k: n for k, n in used.items() if n > nodes.get(k, 0)}


def progressing(status: dict[str, Any]) -> tuple[str, str]:
    (c,) = [c for c in status["conditions"] if c["type"] == "Progressing"]
    return c["reason"], c["message"]


def most_replicas(observed: dict[str, dict[str, Any]]) -> str:
    held = Counter(api.parse_replica(o).cluster for o in observed.values())
    return min(held, key=lambda name: (-held[name], name))


def drained(clusters: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    out = copy.deepcopy(clusters)
    for c in out:
        if c["metadata"]["name"] == name:
            c["spec"]["taints"] = [DRAIN]
    return out


# Every change renames each replica's LLMInferenceService. ROOMY pools hold a replica's new one beside
# its old one; FULL pools hold exactly the four replicas, with no room for anything more.
ROOMY = [cluster("a", nodes=4), cluster("b", nodes=4)]
FULL = [cluster("a", nodes=2), cluster("b", nodes=2)]


def renaming(observed: dict[str, dict[str, Any]]) -> int:
    """Replicas whose old objects serve beside their new ones."""
    return sum("replacing" in o["spec"] for o in observed.values())


def serving_old(observed: dict[str, dict[str, Any]], revision_: str) -> int:
    """Ready replicas serving through old objects: at an old revision, or renamed with the old ones serving."""
    return sum(
        o["status"]["conditions"][0]["status"] == "True"
        and (
            o["metadata"]["labels"].get("modelplane.ai/revision") != revision_
            or o["status"]["conditions"][1]["reason"] == "Replacing"
        )
        for o in observed.values()
    )


@dataclass(frozen=True)
class Case:
    name: str
    seed: int
    stuck: bool  # the new revision never becomes Ready
    shape: Shape | None = None  # None: one 8-GPU pod per replica on small clusters
    event: str | None = None  # "drain" or "respec", two rounds into the rollout
    pools: list[dict[str, Any]] | None = None  # ROOMY or FULL: the rename cases


def _cases() -> list[Case]:
    out = [Case(f"seed {n}{', never Ready' if stuck else ''}", n, stuck) for n in range(3) for stuck in (False, True)]
    for shape in Shape:
        out += [Case(f"{shape}{', never Ready' if stuck else ''}", 1, stuck, shape) for stuck in (False, True)]
    out += [Case(f"seed {n}, drained mid-rollout", n, stuck=False, event="drain") for n in range(3)]
    out += [Case(f"seed {n}, changed again mid-rollout", n, stuck=False, event="respec") for n in range(3)]
    out += [Case(f"seed {n}, renamed with room for both", n, stuck=False, pools=ROOMY) for n in range(3)]
    out += [Case(f"seed {n}, renamed with no room", n, stuck=False, pools=FULL) for n in range(3)]
    return out


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_rollout_over_many_rounds(grpc_function: RunFunction, case: Case) -> None:
    if case.pools is not None:
        base, clusters = deployment(replicas=4, gpus=8), case.pools
    elif case.shape is None:
        base, clusters = deployment(replicas=4, gpus=8), THREE if case.event else SMALL
    else:
        base = shapes.deployment(case.shape, replicas=4)
        clusters = list(fleet.generate(clusters=6, pools=8, existing=0, seed=case.seed).clusters)
    sim = Simulation(grpc_function, Model(seed=case.seed), base, clusters)
    for _ in range(6):  # the first revision comes up
        sim.step()
    assert (ready_count(sim.observed), progressing(sim.status)[0]) == (4, "RolloutComplete")

    sim.xr = changed(base, "vllm/vllm-openai:v0.12.0")
    new_revision = revision(api.parse_deployment(sim.xr))
    if case.stuck:
        sim.model.never = frozenset({new_revision})
    floor_held, overcommit, changed_old, ready_seen, renames_seen = True, [], [], set[int](), set[int]()
    previous = dict(sim.observed)
    drained_cluster, revisions_then = None, set[str | None]()
    for n in range(30):
        if n == 2:  # the event lands mid-rollout: old and new revisions both run
            revisions_then = {api.parse_replica(o).revision for o in sim.observed.values()}
        if n == 2 and case.event == "drain":
            drained_cluster = most_replicas(sim.observed)
            sim.clusters = clusters = drained(clusters, drained_cluster)
        if n == 2 and case.event == "respec":
            sim.xr = changed(base, "vllm/vllm-openai:v0.13.0")
            new_revision = revision(api.parse_deployment(sim.xr))
        desired, status = sim.step()
        assert status["revision"] == new_revision
        floor_held &= ready_count(sim.observed) >= 4 - 1
        ready_seen.add(ready_count(sim.observed))
        renames_seen.add(renaming(sim.observed))
        overcommit += [over] if (over := overcommitted(clusters, sim.observed)) else []
        for key, obj in desired.items():
            before = previous.get(key)
            if before is not None and obj["metadata"]["labels"].get("modelplane.ai/revision") != new_revision:
                want = {k: before[k] for k in ("apiVersion", "kind", "spec")} | {"labels": before["metadata"]["labels"]}
                if {k: obj[k] for k in ("apiVersion", "kind", "spec")} | {"labels": obj["metadata"]["labels"]} != want:
                    changed_old.append(key)
        previous = dict(sim.observed)
        if progressing(status)[0] in ("RolloutComplete", "ProgressDeadlineExceeded") and sim.rounds > 8:
            break
    reason, message = progressing(sim.status)
    old_serving = serving_old(sim.observed, new_revision)
    want_reason = "ProgressDeadlineExceeded" if case.stuck else "RolloutComplete"
    assert (floor_held, overcommit, changed_old, reason) == (True, [], [], want_reason), message
    if case.event is not None:
        final = sorted((api.parse_replica(o).cluster, api.parse_replica(o).revision) for o in sim.observed.values())
        mid_rollout = len(revisions_then) > 1
        assert (mid_rollout, len(final), drained_cluster in {c for c, _ in final}, {r for _, r in final}) == (
            True,
            4,
            False,
            {new_revision},
        ), final
    if case.stuck:
        # halted with at least spec.replicas - maxUnavailable replicas serving, every one through old objects
        assert old_serving == ready_count(sim.observed) >= 3, message
    if case.pools is ROOMY:  # renamed one at a time (maxSurge 1), every replica serving throughout
        assert (ready_seen, renames_seen) == ({4}, {0, 1}), message
    if case.pools is FULL:  # no room to run both: one replica down at a time, never beside its old objects
        assert (ready_seen, renames_seen) == ({3, 4}, {0}), message
