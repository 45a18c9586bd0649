"""What a deployment's clusterSelector wants and which cluster came nearest, when it matches none
(or that no cluster was given at all).

NoClusters says only that no InferenceCluster matches; the fix is in the labels, so the offline
tools show them: the selector's terms, every cluster with its labels and the terms it fails, and the
nearest miss (the fewest failing terms, then by name), whose labels the one-line summary names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api
from modelplane.errors import SpecError
from modelplane.model import Cluster, LabelSelector
from modelplane.scheduler.selectors import selector_matches, selector_mismatch

from modelplane_function.handlers import requirements
from modelplane_function.handlers.convert import to_dict


def _terms(selector: LabelSelector) -> list[tuple[str, LabelSelector]]:
    """Each term of the selector on its own, with its kubectl spelling."""
    out = [(f"{k}={v}", LabelSelector(match_labels={k: v})) for k, v in sorted(selector.match_labels.items())]
    for r in selector.match_expressions:
        one = LabelSelector(match_expressions=(r,))
        out.append((selector_mismatch(one, {}).partition("; wants ")[2], one))
    return out


def _failing(selector: LabelSelector, labels: Mapping[str, str]) -> list[str]:
    return [text for text, term in _terms(selector) if not selector_matches(term, labels)]


@dataclass(frozen=True, slots=True)
class Unmatched:
    selector: LabelSelector
    clusters: tuple[Cluster, ...]  # nearest first

    @property
    def wants(self) -> str:
        return ",".join(text for text, _ in _terms(self.selector)) or "nothing"

    def cause(self) -> str:
        """The one-line summary's main cause."""
        if not self.clusters:
            return "no InferenceCluster was given at all: none of the input files holds one"
        nearest = self.clusters[0]
        return (
            f"the clusterSelector wants {self.wants}; the nearest of {len(self.clusters)} clusters is "
            f"{nearest.name} ({selector_mismatch(self.selector, nearest.labels)})"
        )

    def lines(self) -> list[str]:
        """--explain's part: the selector, every cluster with its labels and failing terms, the nearest."""
        if not self.clusters:
            return ["No InferenceCluster was given at all: none of the input files holds one."]
        out = [f"Cluster selector: wants {self.wants}; no InferenceCluster matches it."]
        rows = [("CLUSTER", "LABELS", "FAILS")]
        rows += [
            (
                c.name,
                ",".join(f"{k}={v}" for k, v in sorted(c.labels.items())) or "none",
                ",".join(_failing(self.selector, c.labels)),
            )
            for c in self.clusters
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        return [*out, f"Nearest miss: {self.clusters[0].name}."]


def unmatched(req: fnv1.RunFunctionRequest) -> Unmatched | None:
    """The selector and the clusters, nearest first, when the deployment's clusterSelector matches none."""
    try:
        deployment = api.parse_deployment(to_dict(req.observed.composite.resource))
    except SpecError:
        return None
    clusters, _ = requirements.clusters(req)
    selector = deployment.cluster_selector
    if selector is None:
        return None if clusters else Unmatched(selector=LabelSelector(), clusters=())
    if any(selector_matches(selector, c.labels) for c in clusters):
        return None
    ranked = sorted(clusters, key=lambda c: (len(_failing(selector, c.labels)), c.name))
    return Unmatched(selector=selector, clusters=tuple(ranked))
