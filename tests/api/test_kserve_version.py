"""A cluster's KServe version: a later 0.x minor than we know is accepted and rendered as the newest known."""

import re
from dataclasses import dataclass

import pytest
import yaml
from modelplane.api import parse_cluster
from modelplane.errors import SpecError
from modelplane.model import kserve_assumed, kserve_rendered_as

from tests.validator import APIS


@dataclass(frozen=True)
class Case:
    name: str
    version: str | None
    rendered_as: str | None  # None: refused
    assumed: str | None


def _assumed(version: str) -> str:
    return (
        f"KServe {version} is newer than the versions replicas are rendered for (0.16 to 0.20): they are "
        "rendered as for KServe 0.20, assuming its presets launch vLLM as 0.20's do."
    )


CASES = [
    Case("an undeclared version is the newest", None, "0.20", None),
    *(Case(f"{v} is known", v, v, None) for v in ("0.16", "0.17", "0.18", "0.19", "0.20")),
    *(Case(f"{v} is later than we know", v, "0.20", _assumed(v)) for v in ("0.21", "0.22", "0.100")),
    *(
        Case(f"{v!r} is refused", v, None, None)
        for v in ("0.15", "0.2", "0.021", "v0.21", "0.21.0", "1.0", "0.", "", "0.2a", "0.\u0662\u0661")
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_version_a_cluster_is_rendered_for(case: Case) -> None:
    assert (kserve_rendered_as(case.version), kserve_assumed(case.version)) == (case.rendered_as, case.assumed)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_cluster_accepts_exactly_the_versions_it_can_render_for(case: Case) -> None:
    obj = {"metadata": {"name": "c"}, "spec": {"kserve": {} if case.version is None else {"version": case.version}}}
    try:
        got: str | None = parse_cluster(obj).kserve_version or "0.20"
    except SpecError:
        got = None
    assert got == (None if case.rendered_as is None else case.version or "0.20")


def _xrd_pattern(xrd: str) -> str:
    doc = yaml.safe_load((APIS / xrd / "definition.yaml").read_text())
    spec = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec["properties"]["kserve"]["properties"]["version"]["pattern"]


@pytest.mark.parametrize("xrd", ["inferencecluster", "modelreplica"])
@pytest.mark.parametrize("case", [c for c in CASES if c.version is not None], ids=lambda c: c.name)
def test_the_xrds_accept_what_the_function_renders(xrd: str, case: Case) -> None:
    assert case.version is not None
    assert (re.search(_xrd_pattern(xrd), case.version) is not None) == (case.rendered_as is not None)
