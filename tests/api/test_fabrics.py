"""InferenceCluster spec.fabrics: pools sharing an interconnect fabric, read and checked."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane import model as m
from modelplane.api import parse_cluster
from modelplane.errors import SpecError

SAMPLE = yaml.safe_load((Path(__file__).parent / "samples" / "valid" / "cluster-fabrics.yaml").read_text())


def test_a_cluster_reads_its_fabrics() -> None:
    assert parse_cluster(SAMPLE).fabrics == (
        m.Fabric(name="ib-east", pools=("coordinators", "h100"), topology_level="example.com/ib-domain"),
    )


def test_a_cluster_without_fabrics_has_none() -> None:
    obj = copy.deepcopy(SAMPLE)
    del obj["spec"]["fabrics"]
    assert parse_cluster(obj).fabrics == ()


@dataclass(frozen=True)
class Bad:
    name: str
    fabrics: list[dict[str, Any]]
    want: str
    topology: bool = True


BAD = [
    Bad("a pool the cluster lacks", [{"name": "ib", "nodePools": ["h100", "h200"]}],
        "spec.fabrics[0].nodePools: 'h200' is not a node pool of the cluster"),
    Bad("a pool on two fabrics",
        [{"name": "ib", "nodePools": ["h100", "l4"]}, {"name": "roce", "nodePools": ["l4", "coordinators"]}],
        "spec.fabrics[1].nodePools: pool 'l4' is already on fabric 'ib'"),
    Bad("a topology level without a KAI topology",
        [{"name": "ib", "nodePools": ["h100", "l4"], "topologyLevel": "example.com/ib"}],
        "spec.fabrics[0].topologyLevel: a topology level needs spec.kai.topology", topology=False),
    Bad("a fabric of one pool", [{"name": "ib", "nodePools": ["h100"]}],
        "spec.fabrics[0].nodePools: Tuple should have at least 2 items, not 1"),
    Bad("a pool named twice", [{"name": "ib", "nodePools": ["h100", "h100"]}],
        "spec.fabrics[0].nodePools: fabric node pools must be unique, repeated: h100"),
    Bad("two fabrics of one name",
        [{"name": "ib", "nodePools": ["h100", "l4"]}, {"name": "ib", "nodePools": ["coordinators", "x"]}],
        "spec.fabrics: fabric names must be unique, repeated: ib"),
]  # fmt: skip


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.name)
def test_a_bad_fabric_is_refused_with_what_is_wrong(bad: Bad) -> None:
    obj = copy.deepcopy(SAMPLE)
    obj["spec"]["fabrics"] = bad.fabrics
    if not bad.topology:
        del obj["spec"]["kai"]
    with pytest.raises(SpecError) as err:
        parse_cluster(obj)
    assert str(err.value) == bad.want
