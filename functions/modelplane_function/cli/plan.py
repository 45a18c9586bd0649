"""`modelplane plan`: reconcile every ModelDeployment of a directory against one fleet until it settles.

Each deployment is rendered through the real function over gRPC, as `render` renders one, in a
fixed order (namespace, then name). What one composes is what the next one sees: its ModelReplicas
join the fleet's required resources and become its own observed resources, and its status becomes
its observed status, as in a control plane; every deployment of the plan is a required resource of
each, for the demand the others have not placed. A round renders every deployment once; rounds repeat
until one changes no deployment's replicas or status (at most `max_rounds`; the plan says when it
did not settle). Existing ModelReplicas in the input are the observed replicas of the deployment
that owns them (namespace and `modelplane.ai/deployment` label) or, for deployments outside the
plan, only charged to the fleet. Every document that is neither a deployment nor a replica (the
InferenceClusters, Namespaces, ...) is available to requirements.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.errors import SpecError
from modelplane.fleet import DeploymentOutcome, FleetView, PlanView, build_plan
from modelplane.fleet.preview import RolloutPreview
from modelplane.model import Cluster, ModelReplica
from modelplane.quota import FleetQuota
from modelplane.scheduler.policy import FleetPolicy

from modelplane_function.cli.render import load, yamlio
from modelplane_function.cli.render.cause import with_causes
from modelplane_function.cli.render.contained import contained
from modelplane_function.cli.render.defaults import namespace_notes
from modelplane_function.cli.render.demands import namespace_labels, reads_deployments, stated
from modelplane_function.cli.render.driver import configure_logging, render_with, serving
from modelplane_function.cli.render.errors import RenderFailure
from modelplane_function.cli.render.explain import blocked_by, clusters_of, fleet_view, rollout_preview
from modelplane_function.cli.render.quotas import published
from modelplane_function.cli.render.ready import ASSUMED, assumed_doc, unready_note
from modelplane_function.cli.render.unused import Usage
from modelplane_function.cli.render.unused import notes as unused_notes
from modelplane_function.cli.render.verdict import Finding, failures
from modelplane_function.cli.render.wire import Doc
from modelplane_function.cli.render.xr import ANNOTATION_RESOURCE_NAME, is_ours, name_of, namespace_of
from modelplane_function.handlers.convert import to_dict

MAX_ROUNDS = 10
_Key = tuple[str, str]  # (namespace, name) of a deployment


def _key(obj: Mapping[str, Any]) -> _Key:
    return (namespace_of(obj), name_of(obj))


def _owner(replica: Mapping[str, Any]) -> _Key:
    labels = (replica.get("metadata") or {}).get("labels") or {}
    return (namespace_of(replica), str(labels.get(names.LABEL_DEPLOYMENT, "")))


@dataclass(frozen=True, slots=True, kw_only=True)
class Inputs:
    deployments: tuple[dict[str, Any], ...]  # in reconcile order
    arrival: tuple[_Key, ...] = ()  # the deployments in the order the files give them
    fleet: tuple[Doc, ...]  # everything required that is not a deployment or a replica
    replicas: tuple[Doc, ...]  # existing ModelReplicas
    files: tuple[tuple[Path, Doc], ...] = ()  # each fleet document with its file, for what is left out


def read(paths: Iterable[Path]) -> Inputs:
    """The plan's inputs from YAML files and directories (their *.yaml and *.yml, not recursive)."""
    found = load.required_by_file(paths)
    docs = [doc for _, doc in found]
    by_key: dict[_Key, dict[str, Any]] = {}
    where: dict[_Key, Path] = {}
    for file, doc in found:
        if not is_ours(doc.head, names.KIND_DEPLOYMENT):
            continue
        xr = to_dict(doc.struct())
        key = _key(xr)
        if key in by_key:
            files = f"twice in {file}" if where[key] == file else f"in {where[key]} and in {file}"
            msg = f"ModelDeployment {'/'.join(p for p in key if p)} appears {files}"
            raise RenderFailure(msg)
        by_key[key] = xr
        where[key] = file
    if not by_key:
        msg = "no ModelDeployment found in the given files"
        raise RenderFailure(msg)
    return Inputs(
        deployments=tuple(by_key[k] for k in sorted(by_key)),
        arrival=tuple(by_key),
        fleet=tuple(
            d for d in docs if not is_ours(d.head, names.KIND_DEPLOYMENT) and not is_ours(d.head, names.KIND_REPLICA)
        ),
        replicas=tuple(d for d in docs if is_ours(d.head, names.KIND_REPLICA)),
        files=tuple(
            (f, d)
            for f, d in found
            if not is_ours(d.head, names.KIND_DEPLOYMENT) and not is_ours(d.head, names.KIND_REPLICA)
        ),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    documents: tuple[tuple[dict[str, Any], ...], ...]  # per deployment, in order: what render would print
    view: PlanView
    failures: tuple[Finding, ...]  # every object left out, then every failure condition, of the final round
    notes: tuple[str, ...] = ()  # what was assumed for the input (a missing namespace)
    # deployments whose input replicas run an older revision, previewed from their first request
    rollouts: tuple[RolloutPreview, ...] = ()

    @property
    def stream(self) -> list[dict[str, Any]]:
        return [doc for docs in self.documents for doc in docs]


def _observed(replica: Mapping[str, Any]) -> dict[str, Any]:
    """An input ModelReplica as its deployment's observed resource: keyed as the function keys replicas."""
    out = dict(replica)
    meta = dict(out.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    if not annotations.get(ANNOTATION_RESOURCE_NAME):
        spec = out.get("spec") or {}
        annotations[ANNOTATION_RESOURCE_NAME] = f"replica-{spec.get('cluster', '')}-{spec.get('index', '')}"
    meta["annotations"] = annotations
    out["metadata"] = meta
    return out


def _revision(replica: Mapping[str, Any]) -> str:
    labels = (replica.get("metadata") or {}).get("labels") or {}
    return str(labels.get(names.LABEL_REVISION, ""))


def _untimed(status: Mapping[str, Any]) -> dict[str, Any]:
    """A rendered status to feed back, without its conditions' transition times: a render stamps a fixed
    placeholder there, and a rollout's progress deadline must not run from it."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return dict(status)
    untimed = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"} if isinstance(c, Mapping) else c
        for c in conditions  # pyright: ignore[reportUnknownVariableType]
    ]
    return {**status, "conditions": untimed}


async def _rounds(
    inputs: Inputs,
    compositions: Sequence[Mapping[str, Any]],
    max_rounds: int,
    usage: Usage | None = None,
    *,
    arrive_in_order: bool = False,
) -> _State:
    state = _State.start(inputs)
    # Every deployment reads the others' stated demand, as in a control plane where they all exist
    # (each has composed its ModelDemand).
    statements = stated([(Doc.from_dict(xr), xr) for xr in inputs.deployments], inputs.fleet)
    demands = [statement for statement, _ in statements]
    stated_by = [_key(source.head) for _, source in statements]
    by_key = {_key(xr): xr for xr in inputs.deployments}
    async with serving() as call:

        async def reconcile(xr: dict[str, Any], demands: Sequence[Doc]) -> bool:
            key = _key(xr)
            observed_xr = {**xr, "status": _untimed(state.status[key])} if state.status.get(key) else xr
            requests: list[bytes] = []
            docs = await render_with(
                call,
                observed_xr,
                required=[*inputs.fleet, *demands, *state.charged(), *state.required()],
                observed=state.own[key],
                compositions=compositions,
                recurse=True,
                requests=requests,
                usage=usage,
            )
            return state.record(key, docs, requests[-1] if requests else b"")

        if arrive_in_order:
            # Each deployment is created once the ones before it are placed and Ready: only theirs
            # and its own statements exist when it reconciles.
            for n, key in enumerate(inputs.arrival):
                state.all_ready()
                arrived = set(inputs.arrival[: n + 1])
                await reconcile(by_key[key], [d for d, k in zip(demands, stated_by, strict=True) if k in arrived])
        for _ in range(max_rounds):
            state.rounds += 1
            if arrive_in_order:
                state.all_ready()  # what a round created is Ready by the next, so moves complete
            changed = False
            for xr in inputs.deployments:
                changed |= await reconcile(xr, demands)
            if not changed:
                state.converged = True
                break
    return state


class _State:
    """Each deployment's replicas, status, documents and last request, as the rounds leave them."""

    def __init__(self, deployments: Sequence[_Key], own: dict[_Key, list[dict[str, Any]]], charged: list[Doc]) -> None:
        self.own = own
        self._charged = charged
        self._docs: dict[_Key, list[Doc]] = {k: [Doc.from_dict(r) for r in own[k]] for k in deployments}
        self.status: dict[_Key, Any] = {}
        self.documents: dict[_Key, list[dict[str, Any]]] = {}
        self.requests: dict[_Key, bytes] = {}
        self.first: dict[_Key, bytes] = {}  # each deployment's first request: the fleet as given
        self.rounds = 0
        self.converged = False
        self.evictions: list[str] = []  # each reclaim or preemption, as the evicted deployment's condition said it
        self.initial = {name_of(r): _revision(r) for rs in own.values() for r in rs}

    @staticmethod
    def start(inputs: Inputs) -> _State:
        keys = [_key(xr) for xr in inputs.deployments]
        own: dict[_Key, list[dict[str, Any]]] = {k: [] for k in keys}
        charged: list[Doc] = []
        for doc in inputs.replicas:
            owner = _owner(doc.head)
            if owner in own:
                own[owner].append(_observed(to_dict(doc.struct())))
            else:
                charged.append(doc)
        return _State(keys, own, charged)

    def created(self) -> frozenset[str]:
        """The plan's deployments' replicas it placed, not given as input."""
        return frozenset(name_of(r) for rs in self.own.values() for r in rs if name_of(r) not in self.initial)

    def updated(self) -> frozenset[str]:
        """Input replicas the plan moved to another revision where they run."""
        return frozenset(
            name_of(r)
            for rs in self.own.values()
            for r in rs
            if name_of(r) in self.initial and _revision(r) != self.initial[name_of(r)]
        )

    def charged(self) -> list[Doc]:
        return self._charged

    def required(self) -> list[Doc]:
        return [doc for docs in self._docs.values() for doc in docs]

    def all_ready(self) -> None:
        """Every replica the plan's deployments composed, Ready (as a running fleet's would be by now)."""
        for key, replicas in self.own.items():
            ready = [_ready(r) for r in replicas]
            if ready != replicas:
                self.own[key] = ready
                self._docs[key] = [Doc.from_dict(r) for r in ready]

    def record(self, key: _Key, docs: list[dict[str, Any]], request: bytes) -> bool:
        """Keep a deployment's render; whether its replicas (their status aside) or its status changed."""
        replicas = [d for d in docs[1:] if is_ours(d, names.KIND_REPLICA) and _owner(d) == key]
        status = docs[0].get("status")
        changed = [_sans_status(r) for r in replicas] != [_sans_status(r) for r in self.own[key]]
        changed |= status != self.status.get(key)
        if replicas != self.own[key]:
            self._docs[key] = [Doc.from_dict(r) for r in replicas]
        self.own[key] = replicas
        self.status[key] = status
        self.documents[key] = docs
        self.requests[key] = request
        self.first.setdefault(key, request)
        reason, message = _condition(status)
        if reason in (names.REASON_RECLAIMED, names.REASON_PREEMPTED):
            said = message[message.find(f"{reason} ") :]  # the condition's own words on the eviction
            self.evictions.append(f"round {self.rounds}: {key[0]}/{key[1]}: {said}")
        return changed


_ARRIVED_READY = {**ASSUMED, "message": "treated as Ready offline (--arrive-in-order)"}


def _ready(replica: Mapping[str, Any]) -> dict[str, Any]:
    """`replica` with its Ready condition True: a render leaves its own composed replicas not Ready."""
    status = dict(replica.get("status") or {})
    conditions = [
        c for c in status.get("conditions") or [] if not (isinstance(c, Mapping) and c.get("type") == "Ready")
    ]
    return {**replica, "status": {**status, "conditions": [*conditions, _ARRIVED_READY]}}


def _sans_status(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "status"}


def _condition(status: Mapping[str, Any] | None) -> tuple[str, str]:
    for c in (status or {}).get("conditions") or []:
        if c.get("type") == names.CONDITION_REPLICAS_SCHEDULED:
            return str(c.get("reason", "")), str(c.get("message", ""))
    return "", ""


def _unscheduled_view(xr: Mapping[str, Any], own: Sequence[Mapping[str, Any]], problem: str) -> FleetView:
    replicas = (xr.get("spec") or {}).get("replicas")
    return FleetView(
        namespace=namespace_of(xr),
        name=name_of(xr),
        desired=replicas if isinstance(replicas, int) else 0,
        placed=len(own),
        clusters=(),
        removed=(),
        owners=(f"{namespace_of(xr)}/{name_of(xr)}",),
        summary=problem,
        scheduled=False,
    )


def _replicas(state: _State) -> list[ModelReplica]:
    out: list[ModelReplica] = []
    for obj in [*(r for rs in state.own.values() for r in rs), *(to_dict(d.struct()) for d in state.charged())]:
        try:
            out.append(api.parse_replica(obj))
        except SpecError:
            continue  # the function reports an unreadable replica; the view cannot draw it
    return out


def _outcome(
    xr: Mapping[str, Any], state: _State, clusters: Sequence[Cluster], replicas: Sequence[ModelReplica]
) -> DeploymentOutcome:
    key = _key(xr)
    docs = state.documents[key]
    reason, message = _condition(docs[0].get("status"))
    request = state.requests[key]
    req = fnv1.RunFunctionRequest.FromString(request) if request else None
    view = fleet_view(req, clusters) if req is not None else "not rendered"
    if isinstance(view, str):
        view = _unscheduled_view(xr, state.own[key], view)
    blocked = blocked_by(req, replicas) if req is not None and view.unplaced else ()
    replica_failures = tuple(
        f"{f.name}: {f.reason}: {f.message}" for f in failures(docs[1:]) if f.kind == names.KIND_REPLICA
    )
    return DeploymentOutcome(view=view, reason=reason, message=message, failures=replica_failures, blocked_by=blocked)


def _policy(docs: Sequence[Doc]) -> FleetPolicy | None:
    """The FleetQuotas among the inputs (None without any), namespaces matched by the input Namespaces' labels."""
    quotas: list[FleetQuota] = []
    for doc in docs:
        if is_ours(doc.head, names.KIND_QUOTA):
            try:
                quotas.append(api.parse_quota(to_dict(doc.struct())))
            except SpecError:
                continue  # the function leaves it out too
    return FleetPolicy(quotas=quotas, namespace_labels=namespace_labels(docs)) if quotas else None


def plan(
    paths: Sequence[Path],
    *,
    apis: Path | None = None,
    max_rounds: int = MAX_ROUNDS,
    debug: bool = False,
    assume_ready: bool = False,
    arrive_in_order: bool = False,
) -> Plan:
    """Reconcile every ModelDeployment found in `paths` until the fleet settles. Raises RenderFailure.

    `assume_ready` gives every input ModelReplica without a Ready condition a True one (ready.py).
    `arrive_in_order` creates the deployments one at a time in the order the files give them, each
    once the replicas before it are placed and Ready, before the rounds; every round then starts
    with what the one before created Ready."""
    configure_logging(debug=debug)
    with yamlio.collector_paused():
        inputs = read(paths)
        quotas = published(inputs.fleet)  # as each FleetQuota's reconcile would publish them
        inputs = replace(inputs, fleet=tuple(quotas.docs))
        planned = {_key(xr) for xr in inputs.deployments}
        own = [to_dict(d.struct()) for d in inputs.replicas if _owner(d.head) in planned]
        unready = [] if assume_ready else unready_note(own)
        if assume_ready:
            inputs = replace(inputs, replicas=tuple(assumed_doc(d) for d in inputs.replicas))
        compositions = load.compositions(apis or load.default_apis())
        usage = Usage()
        state = asyncio.run(_rounds(inputs, compositions, max_rounds, usage, arrive_in_order=arrive_in_order))
        reads_deployments(usage)
        quotas.record(usage)
        clusters = clusters_of(inputs.fleet)
        replicas = _replicas(state)
        outcomes = [_outcome(xr, state, clusters, replicas) for xr in inputs.deployments]
        firsts = (state.first.get(_key(xr)) for xr in inputs.deployments)
        previews = (rollout_preview(fnv1.RunFunctionRequest.FromString(r)) for r in firsts if r)
        rollouts = tuple(p for p in previews if p is not None)
        view = build_plan(
            clusters,
            replicas,
            outcomes,
            created=state.created(),
            rounds=state.rounds,
            converged=state.converged,
            updated=state.updated(),
            policy=_policy(inputs.fleet),
            evictions=tuple(state.evictions),
        )
    documents = tuple(tuple(state.documents[_key(xr)]) for xr in inputs.deployments)
    found = [
        *contained(request for request in state.requests.values() if request),
        *with_causes(
            failures(d for docs in documents for d in docs),
            (request for request in state.requests.values() if request),
            "the plan has the rest",
        ),
    ]
    return Plan(
        documents=documents,
        view=view,
        failures=tuple(found),
        notes=(*unused_notes(inputs.files, usage), *unready, *namespace_notes(inputs.deployments)),
        rollouts=rollouts,
    )
