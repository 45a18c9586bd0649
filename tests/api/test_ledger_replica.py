"""parse_ledger_replica: the ledger's read of a ModelReplica agrees with parse_replica on what it reads."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane import model as m
from modelplane.api import parse_replica
from modelplane.api.ledger import parse_ledger_replica
from modelplane.errors import SpecError

from tests.benchmarks.fleet import generate

ROOT = Path(__file__).resolve().parents[2]


def ledger_part(r: m.ModelReplica) -> m.ModelReplica:
    """What the ledger read keeps of a fully parsed replica: identity, labels, engines' names, copies, members' pools,
    and the engines a rename supersedes (charged too)."""

    def held(engines: tuple[m.PlacedEngine, ...]) -> tuple[m.PlacedEngine, ...]:
        return tuple(
            m.PlacedEngine(
                name=e.name,
                copies=e.copies,
                members=tuple(replace(x, constraints=(), template={}) for x in e.members),
            )
            for e in engines
        )

    return m.ModelReplica(
        namespace=r.namespace,
        name=r.name,
        deployment=r.deployment,
        cluster=r.cluster,
        index=r.index,
        engines=held(r.engines),
        labels=r.labels,
        replacing=held(r.replacing),
        exclusive_nodes=r.exclusive_nodes,
    )


def example_replicas() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted((ROOT / "examples").glob("*/*.yaml")):
        out += [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "ModelReplica"]
    return out


def fleet_replicas() -> list[dict[str, Any]]:
    return list(generate(clusters=30, existing=300, seed=3).replicas)


@pytest.mark.parametrize("source", [example_replicas, fleet_replicas], ids=["examples", "benchmark fleet"])
def test_the_ledger_read_keeps_what_the_full_parse_gives_for_the_ledger(source: Any) -> None:
    objs = source()
    full = [parse_replica(o) for o in objs]
    assert (len(objs) > 0, [parse_ledger_replica(o) for o in objs]) == (True, [ledger_part(r) for r in full])
    assert [parse_ledger_replica(o).node_cost_by_pool() for o in objs] == [r.node_cost_by_pool() for r in full]


BASE: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelReplica",
    "metadata": {
        "name": "llm-c1-0",
        "namespace": "team-a",
        "labels": {
            "modelplane.ai/deployment": "llm",
            "modelplane.ai/cluster": "c1",
            "modelplane.ai/replica-index": "0",
        },
    },
    "spec": {
        "clusterName": "c1",
        "scheduling": {"queue": "default-queue", "priorityClassName": "inference"},
        "engines": [
            {
                "name": "main",
                "copies": 2,
                "members": [
                    {
                        "role": "Leader",
                        "nodePoolName": "h100",
                        "template": {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}},
                    },
                    {
                        "role": "Worker",
                        "worker": {"nodes": 3},
                        "nodePoolName": "h100",
                        "deviceRequests": [
                            {
                                "name": "gpu",
                                "deviceClassName": "gpu.nvidia.com",
                                "count": 8,
                                "selectors": [{"cel": {"expression": "true"}}],
                            }
                        ],
                        "template": {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}},
                    },
                ],
            }
        ],
    },
}
DELETE = object()


@dataclass(frozen=True)
class Bad:
    name: str
    path: tuple[str | int, ...]
    value: Any


BAD = [
    Bad("a missing name", ("metadata", "name"), DELETE),
    Bad("a missing spec", ("spec",), DELETE),
    Bad("a spec that is a list", ("spec",), []),
    Bad("a missing cluster name", ("spec", "clusterName"), DELETE),
    Bad("an empty cluster name", ("spec", "clusterName"), ""),
    Bad("a numeric cluster name", ("spec", "clusterName"), 3),
    Bad("a cluster name that is too long", ("spec", "clusterName"), "c" * 254),
    Bad("missing engines", ("spec", "engines"), DELETE),
    Bad("no engines", ("spec", "engines"), []),
    Bad("engines that are an object", ("spec", "engines"), {"a": 1}),
    Bad("an engine that is a string", ("spec", "engines", 0), "main"),
    Bad("an engine name that is not a DNS label", ("spec", "engines", 0, "name"), "Main"),
    Bad("an engine name that is too long", ("spec", "engines", 0, "name"), "m" * 64),
    Bad("fractional copies", ("spec", "engines", 0, "copies"), 1.5),
    Bad("zero copies", ("spec", "engines", 0, "copies"), 0),
    Bad("too many copies", ("spec", "engines", 0, "copies"), 65),
    Bad("copies as a string", ("spec", "engines", 0, "copies"), "2"),
    Bad("copies as a boolean", ("spec", "engines", 0, "copies"), value=True),
    Bad("no members", ("spec", "engines", 0, "members"), []),
    Bad("a member that is a number", ("spec", "engines", 0, "members", 0), 1),
    Bad("an unknown role", ("spec", "engines", 0, "members", 0, "role"), "Boss"),
    Bad("two leaders", ("spec", "engines", 0, "members", 1, "role"), "Leader"),
    Bad("worker on a leader", ("spec", "engines", 0, "members", 0, "worker"), {"nodes": 2}),
    Bad("zero worker nodes", ("spec", "engines", 0, "members", 1, "worker", "nodes"), 0),
    Bad("too many worker nodes", ("spec", "engines", 0, "members", 1, "worker", "nodes"), 64),
    Bad("a worker that is a list", ("spec", "engines", 0, "members", 1, "worker"), [1]),
    Bad("a missing pool", ("spec", "engines", 0, "members", 1, "nodePoolName"), DELETE),
    Bad("an empty pool", ("spec", "engines", 0, "members", 1, "nodePoolName"), ""),
    Bad("device requests that are a string", ("spec", "engines", 0, "members", 1, "deviceRequests"), "gpu"),
    Bad(
        "a device request without a class",
        ("spec", "engines", 0, "members", 1, "deviceRequests", 0, "deviceClassName"),
        DELETE,
    ),
    Bad("a device request named badly", ("spec", "engines", 0, "members", 1, "deviceRequests", 0, "name"), "GPU"),
    Bad("a device count over 64", ("spec", "engines", 0, "members", 1, "deviceRequests", 0, "count"), 65),
    Bad("a selector without cel", ("spec", "engines", 0, "members", 1, "deviceRequests", 0, "selectors", 0), {}),
    Bad(
        "an empty selector expression",
        ("spec", "engines", 0, "members", 1, "deviceRequests", 0, "selectors", 0, "cel", "expression"),
        "",
    ),
    Bad("a replica index that is not a number", ("metadata", "labels", "modelplane.ai/replica-index"), "x"),
    Bad("a superscript replica index", ("metadata", "labels", "modelplane.ai/replica-index"), "\u00b2"),
    Bad("an Arabic-Indic replica index", ("metadata", "labels", "modelplane.ai/replica-index"), "\u0661"),
    Bad("a 5,000-digit replica index", ("metadata", "labels", "modelplane.ai/replica-index"), "9" * 5000),
    Bad("a replica index above the bound", ("metadata", "labels", "modelplane.ai/replica-index"), "100000"),
    Bad("a negative replica index", ("metadata", "labels", "modelplane.ai/replica-index"), "-1"),
    Bad("scheduling that is a list", ("spec", "scheduling"), []),
    Bad("exclusiveNodes that is a string", ("spec", "scheduling", "exclusiveNodes"), "yes"),
]


@pytest.mark.parametrize("exclusive", [True, False], ids=["exclusive", "shared"])
def test_the_ledger_read_keeps_whether_a_replica_holds_whole_nodes(exclusive: bool) -> None:
    obj = copy.deepcopy(BASE)
    obj["spec"]["scheduling"]["exclusiveNodes"] = exclusive
    got = parse_ledger_replica(obj)
    assert (got, got.charges_by_pool()) == (ledger_part(parse_replica(obj)), parse_replica(obj).charges_by_pool())
    assert got.exclusive_nodes is exclusive


def mutated(bad: Bad) -> dict[str, Any]:
    obj = copy.deepcopy(BASE)
    parent: Any = obj
    for key in bad.path[:-1]:
        parent = parent[key]
    if bad.value is DELETE:
        del parent[bad.path[-1]]
    else:
        parent[bad.path[-1]] = bad.value
    return obj


def error(parse: Any, obj: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as info:
        parse(obj)
    return str(info.value)


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.name)
def test_a_bad_field_the_ledger_reads_fails_as_the_full_parse_does(bad: Bad) -> None:
    obj = mutated(bad)
    assert error(parse_ledger_replica, obj) == error(parse_replica, obj)


def test_duplicate_engine_and_request_names_fail_as_the_full_parse_does() -> None:
    engines = copy.deepcopy(BASE)
    engines["spec"]["engines"].append(copy.deepcopy(engines["spec"]["engines"][0]))
    requests = copy.deepcopy(BASE)
    member = requests["spec"]["engines"][0]["members"][1]
    member["deviceRequests"].append(copy.deepcopy(member["deviceRequests"][0]))
    assert [error(parse_ledger_replica, o) for o in (engines, requests)] == [
        error(parse_replica, o) for o in (engines, requests)
    ]


def test_fields_the_ledger_does_not_read_are_not_checked() -> None:
    obj = copy.deepcopy(BASE)
    obj["spec"]["engines"][0]["members"][0]["template"] = "not a pod"
    obj["status"] = {"conditions": "not a list"}
    assert parse_ledger_replica(obj) == parse_ledger_replica(BASE)
