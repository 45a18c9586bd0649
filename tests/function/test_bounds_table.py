"""The list bounds checked on the wire (modelplane_function.handlers.bounds) are exactly the XRDs' own."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane import names
from modelplane_function.handlers import bounds

APIS = Path(__file__).resolve().parents[2] / "apis"
XRDS = {
    names.KIND_DEMAND: "modeldemand",
    names.KIND_DEPLOYMENT: "modeldeployment",
    names.KIND_REPLICA: "modelreplica",
    names.KIND_CLUSTER: "inferencecluster",
}


def limits_of(schema: Mapping[str, Any], at: str = "") -> list[tuple[str, int]]:
    """(path, limit) for every maxItems and maxProperties of an openAPIV3Schema, as bounds.LIMITS spells them."""
    out = [(at, int(schema[key])) for key in ("maxItems", "maxProperties") if key in schema]
    for name, sub in (schema.get("properties") or {}).items():
        out += limits_of(sub, f"{at}.{name}" if at else name)
    if isinstance(schema.get("items"), Mapping):
        out += limits_of(schema["items"], f"{at}[]")
    return out


def xrd_limits(kind: str) -> list[tuple[str, int]]:
    xrd = yaml.safe_load((APIS / XRDS[kind] / "definition.yaml").read_text())
    (version,) = xrd["spec"]["versions"]
    read = {names.KIND_CLUSTER: ("spec.", "status.gpuPools")}.get(kind, ("spec.",))
    return sorted(x for x in limits_of(version["schema"]["openAPIV3Schema"]) if x[0].startswith(read))


@pytest.mark.parametrize("kind", sorted(XRDS))
def test_the_bounds_are_the_xrds(kind: str) -> None:
    assert sorted(bounds.LIMITS[kind]) == xrd_limits(kind)
