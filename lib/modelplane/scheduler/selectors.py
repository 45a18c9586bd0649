"""Kubernetes label-selector and toleration semantics, and tenant admission of a namespace.

Label selectors: every `matchLabels` pair and every `matchExpressions` requirement must hold
(In, NotIn, Exists, DoesNotExist); the empty selector matches everything. Tolerations follow
kube's `ToleratesTaint`: an effect of None tolerates every effect, an empty key only pairs with
Exists (tolerating every taint), Exists ignores the value and Equal compares it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from modelplane.errors import SpecError
from modelplane.model import Cluster, LabelSelector, LabelSelectorRequirement, Taint, TaintEffect, Toleration


def _requirement_holds(req: LabelSelectorRequirement, labels: Mapping[str, str]) -> bool:
    present = req.key in labels
    match req.operator:
        case "In":
            return present and labels[req.key] in req.values
        case "NotIn":
            return not present or labels[req.key] not in req.values
        case "Exists":
            return present
        case "DoesNotExist":
            return not present
        case _:
            msg = (
                f"label selector operator {req.operator!r} on key {req.key!r} is not In, NotIn, Exists or DoesNotExist"
            )
            raise SpecError(msg)


def selector_matches(selector: LabelSelector, labels: Mapping[str, str]) -> bool:
    """Whether `labels` satisfy every matchLabels pair and matchExpressions requirement."""
    if any(labels.get(key) != value for key, value in selector.match_labels.items()):
        return False
    return all(_requirement_holds(req, labels) for req in selector.match_expressions)


def selector_mismatch(selector: LabelSelector, labels: Mapping[str, str]) -> str:
    """What a cluster's labels are and what the selector wants, kubectl-style: `labels a=b; wants c=d,e in (f)`."""
    have = ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "none"
    wants = [f"{k}={v}" for k, v in sorted(selector.match_labels.items())]
    for r in selector.match_expressions:
        op = r.operator
        if op in ("In", "NotIn"):
            wants.append(f"{r.key} {'in' if op == 'In' else 'notin'} ({','.join(r.values)})")
        else:
            wants.append(r.key if op == "Exists" else f"!{r.key}")
    return f"labels {have}; wants {','.join(wants) or 'nothing'}"


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """kube's ToleratesTaint."""
    if toleration.effect is not None and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    return toleration.value == taint.value


def untolerated_taints(
    taints: Iterable[Taint], tolerations: Iterable[Toleration], effects: frozenset[TaintEffect]
) -> tuple[Taint, ...]:
    """Taints with one of `effects` that no toleration tolerates, in the cluster's order."""
    tols = tuple(tolerations)
    return tuple(t for t in taints if t.effect in effects and not any(tolerates(tol, t) for tol in tols))


def format_taint(taint: Taint) -> str:
    """kubectl's spelling: key=value:Effect (key:Effect when the value is empty)."""
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def admits_namespace(cluster: Cluster, namespace: str, namespace_labels: Mapping[str, str] | None) -> bool | None:
    """Tenant isolation: no restriction admits all; otherwise the name list or the selector must admit.

    None when only the namespace's labels could decide and they are unknown (`namespace_labels` None):
    callers neither place there nor evict from there on a guess.
    """
    names, selector = cluster.allowed_namespaces, cluster.allowed_namespace_selector
    if names is None and selector is None:
        return True
    if names is not None and namespace in names:
        return True
    if selector is None:
        return False
    if namespace_labels is None:
        return None
    return selector_matches(selector, namespace_labels)
