"""Offline tools publish each FleetQuota's selected namespaces as its own reconcile would.

In a control plane a FleetQuota's reconcile resolves its namespaceSelector against the Namespaces
and publishes the names in `status.namespaces`, which deployments read for namespaces other than
their own (handlers/quota.py). Given as a file, a FleetQuota has no such status: it is filled in
here from the Namespaces given beside it. A status given as input is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane import names

from modelplane_function.cli.render.unused import Usage
from modelplane_function.cli.render.wire import Doc
from modelplane_function.cli.render.xr import is_ours
from modelplane_function.handlers.convert import to_dict
from modelplane_function.handlers.quota import selected


@dataclass(frozen=True, slots=True)
class Published:
    """Input documents with each FleetQuota's namespaces published."""

    docs: list[Doc]
    originals: dict[int, Doc]  # id() of each published FleetQuota -> the input document it stands for

    def record(self, usage: Usage) -> None:
        """Count an input FleetQuota as given when the function was given the one published for it."""
        for published_id, original in self.originals.items():
            if published_id in usage.given:
                usage.given.add(id(original))


def published(docs: Sequence[Doc]) -> Published:
    """`docs` with every FleetQuota that selects by label and publishes nothing given its namespaces."""
    namespaces = [
        to_dict(d.struct()) for d in docs if (d.head.get("apiVersion"), d.head.get("kind")) == ("v1", "Namespace")
    ]
    out: list[Doc] = []
    originals: dict[int, Doc] = {}
    for doc in docs:
        obj = to_dict(doc.struct()) if is_ours(doc.head, names.KIND_QUOTA) else None
        if obj is None or _has_published(obj) or not _selects_by_label(obj):
            out.append(doc)
            continue
        try:
            found = selected(obj, namespaces)
        except Exception:  # noqa: BLE001 - an unreadable quota is the function's to report
            out.append(doc)
            continue
        done = Doc.from_dict({**obj, "status": {**_status(obj), "namespaces": found}})
        originals[id(done)] = doc
        out.append(done)
    return Published(docs=out, originals=originals)


def _status(obj: Mapping[str, Any]) -> dict[str, Any]:
    status = obj.get("status")
    return dict(status) if isinstance(status, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]


def _has_published(obj: Mapping[str, Any]) -> bool:
    return "namespaces" in _status(obj)


def _selects_by_label(obj: Mapping[str, Any]) -> bool:
    spec = obj.get("spec")
    return isinstance(spec, Mapping) and spec.get("namespaceSelector") is not None  # pyright: ignore[reportUnknownMemberType]
