"""What the offline tools assume for an input that leaves it out, said on stderr so nothing is silent."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane import names

from modelplane_function.cli.render.xr import name_of, namespace_of

# The namespaced kinds: the parsers place one without metadata.namespace in "default".
_NAMESPACED = (names.KIND_DEPLOYMENT, names.KIND_REPLICA)


def namespace_notes(xrs: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per namespaced XR without a namespace: where it is rendered, and how to choose."""
    return [
        f"{xr.get('kind')} {name_of(xr)} has no metadata.namespace: rendered in namespace default, as kubectl "
        "apply without -n would in a default context; set metadata.namespace to choose"
        for xr in xrs
        if xr.get("kind") in _NAMESPACED and xr.get("apiVersion") == names.API_VERSION and not namespace_of(xr)
    ]
