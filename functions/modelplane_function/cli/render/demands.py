"""Offline tools state other deployments' demand as their own reconciles would.

In a control plane every ModelDeployment composes a ModelDemand, and the others read those
(modelplane.stated). A fleet given to `render` or `plan` as files holds ModelDeployments instead:
each one's statement is worked out here, with the same code its reconcile runs, from its spec,
the given InferenceClusters and its Namespace's labels. A ModelDemand given as input wins over
the one worked out for the same deployment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from modelplane import api, names
from modelplane.api.demand import can_state
from modelplane.errors import SpecError
from modelplane.model import Deployment
from modelplane.scheduler.state import statements
from modelplane.stated import withdrawn

from modelplane_function.cli.render.explain import clusters_of
from modelplane_function.cli.render.quotas import Published, published
from modelplane_function.cli.render.unused import Usage
from modelplane_function.cli.render.wire import Doc
from modelplane_function.cli.render.xr import is_ours, name_of, namespace_of
from modelplane_function.handlers.convert import to_dict


def namespace_labels(docs: Iterable[Doc]) -> dict[str, dict[str, str]]:
    """Namespace name -> labels, from the Namespaces among `docs`."""
    out: dict[str, dict[str, str]] = {}
    for doc in docs:
        if doc.head.get("apiVersion") == "v1" and doc.head.get("kind") == "Namespace":
            meta = doc.head.get("metadata") or {}
            labels = meta.get("labels") or {}
            out[str(meta.get("name", ""))] = {str(k): str(v) for k, v in labels.items()}
    return out


@dataclass(frozen=True, slots=True)
class Stated:
    """Input documents with the ModelDemands worked out for the ModelDeployments among them."""

    docs: list[Doc]  # the input documents, then each worked-out ModelDemand
    sources: dict[int, Doc]  # id() of each worked-out ModelDemand -> the ModelDeployment it states
    quotas: Published  # the FleetQuotas among the input documents, published

    def record(self, usage: Usage) -> None:
        """Count a ModelDeployment as read when the function was given the demand it states.

        Only once the function asked for demand at all: a run that failed first says why itself."""
        self.quotas.record(usage)
        if not reads_deployments(usage):
            return
        for statement, source in self.sources.items():
            if statement in usage.given:
                usage.given.add(id(source))


def reads_deployments(usage: Usage) -> bool:
    """Record that these tools read ModelDeployments for their demand, once the function asked for demand."""
    if (names.API_VERSION, names.KIND_DEMAND) not in usage.asked:
        return False
    usage.asked.add((names.API_VERSION, names.KIND_DEPLOYMENT))
    return True


def stated(deployments: Sequence[tuple[Doc, Mapping[str, Any]]], fleet: Sequence[Doc]) -> list[tuple[Doc, Doc]]:
    """(the ModelDemand, its ModelDeployment's document) for each of `deployments`, given the fleet in `fleet`."""
    clusters = clusters_of(fleet)
    labels = namespace_labels(fleet)
    caches = [
        to_dict(d.struct())
        for d in fleet
        if d.head.get("apiVersion") == names.API_VERSION and d.head.get("kind") == names.KIND_MODEL_CACHE
    ]
    parsed: list[tuple[Doc, Deployment]] = []
    out: list[tuple[Doc, Doc]] = []
    for source, xr in deployments:
        try:
            d = api.parse_deployment(xr)
        except SpecError:
            meta = xr.get("metadata") or {}
            name = str(meta.get("name") or "")
            if can_state(name):
                out.append(
                    (
                        Doc.from_dict(api.demand_manifest(withdrawn(str(meta.get("namespace") or "default"), name))),
                        source,
                    )
                )
            continue
        # as its reconcile reads them: its Namespace's labels and the ModelCache it names
        parsed.append((source, api.with_model_cache(replace(d, namespace_labels=labels.get(d.namespace)), caches)))
    statements_of = statements([d for _, d in parsed], clusters)
    for (source, _), statement in zip(parsed, statements_of, strict=True):
        if can_state(statement.name):
            out.append((Doc.from_dict(api.demand_manifest(statement)), source))
    return out


def with_stated_demand(docs: Sequence[Doc]) -> Stated:
    """`docs` plus the ModelDemand of each ModelDeployment among them that has none given, and each
    FleetQuota's selected namespaces published (quotas.py)."""
    quotas = published(docs)
    docs = quotas.docs
    given = {_key(d.head) for d in docs if is_ours(d.head, names.KIND_DEMAND)}
    deployments = [
        (d, to_dict(d.struct())) for d in docs if is_ours(d.head, names.KIND_DEPLOYMENT) and _key(d.head) not in given
    ]
    pairs = stated(deployments, docs) if deployments else []
    return Stated(docs=[*docs, *(s for s, _ in pairs)], sources={id(s): source for s, source in pairs}, quotas=quotas)


def _key(head: Mapping[str, Any]) -> tuple[str, str]:
    return (namespace_of(head) or "default", name_of(head))
