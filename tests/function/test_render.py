"""The offline render driver: the requirements loop against scripted functions, engine-render facts,
and `modelplane render` end to end on a small inline fleet (real function, real gRPC)."""

import asyncio
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_function.cli.render import RenderFailure, pipeline, render_documents, render_stream
from modelplane_function.cli.render.output import generated_name
from modelplane_function.cli.render.store import Store
from modelplane_function.cli.render.xr import uid_of

from .factories import API, cluster, deployment, namespace, pool_kind_of
from .wants import replica

COMPOSITION = {
    "apiVersion": "apiextensions.crossplane.io/v1",
    "kind": "Composition",
    "metadata": {"name": "c"},
    "spec": {
        "compositeTypeRef": {"apiVersion": API, "kind": "ModelDeployment"},
        "mode": "Pipeline",
        "pipeline": [{"step": "s", "functionRef": {"name": "function-modelplane"}}],
    },
}


@dataclass(frozen=True)
class LoopCase:
    name: str
    script: str  # what the scripted function returns on every call
    want: list[dict[str, int]] | str  # per call, items answered per requirement; or the failure


LOOP_CASES = [
    LoopCase(name="a function that returns no requirements is called once", script="none", want=[{}]),
    LoopCase(name="present but empty requirements cost one extra call", script="empty", want=[{}, {}]),
    LoopCase(name="the same requirement twice stops after the second call", script="stable", want=[{}, {"ns": 1}]),
    LoopCase(name="an unmatched requirement is answered with an empty key", script="unmatched", want=[{}, {"ns": 0}]),
    LoopCase(
        name="requirements that change on every call fail after six calls",
        script="changing",
        want="requirements didn't stabilize after the maximum number of iterations (5)",
    ),
    LoopCase(
        name="a FATAL result stops at the first call",
        script="fatal",
        want='pipeline step "s" returned a fatal result: boom',
    ),
]


@pytest.mark.parametrize("case", LOOP_CASES, ids=lambda c: c.name)
def test_requirements_loop(case: LoopCase) -> None:
    calls: list[fnv1.RunFunctionRequest] = []

    async def call(req: bytes) -> fnv1.RunFunctionResponse:
        calls.append(fnv1.RunFunctionRequest.FromString(req))
        rsp = response.to(calls[-1])
        if case.script == "empty":
            rsp.requirements.SetInParent()
        elif case.script in {"stable", "unmatched"}:
            name = "team-a" if case.script == "stable" else "nope"
            response.require_resources(rsp, "ns", "v1", "Namespace", match_name=name)
        elif case.script == "changing":
            response.require_resources(rsp, f"n{len(calls)}", "v1", "Namespace")
        elif case.script == "fatal":
            response.fatal(rsp, "boom")
        return rsp

    try:
        asyncio.run(pipeline.run(call, COMPOSITION, fnv1.State(), Store([namespace()])))
    except RenderFailure as e:
        got: list[dict[str, int]] | str = str(e)
    else:
        got = [{k: len(v.items) for k, v in c.required_resources.items()} for c in calls]
    assert (got, len(calls)) == (case.want, {"changing": 6, "fatal": 1}.get(case.script, len(case.want)))


@dataclass(frozen=True)
class FetchCase:
    name: str
    selector: fnv1.ResourceSelector
    want: list[str]


OBJECTS = [
    {"apiVersion": API, "kind": "InferenceCluster", "metadata": {"name": "b", "labels": {"region": "eu"}}},
    {"apiVersion": API, "kind": "InferenceCluster", "metadata": {"name": "a", "labels": {"region": "us"}}},
    {"apiVersion": API, "kind": "ModelReplica", "metadata": {"name": "r", "namespace": "team-b"}},
    {"apiVersion": API, "kind": "ModelReplica", "metadata": {"name": "r", "namespace": "team-a"}},
    namespace("team-a"),
]

FETCH_CASES = [
    FetchCase(
        name="all of a kind, sorted by name",
        selector=fnv1.ResourceSelector(api_version=API, kind="InferenceCluster"),
        want=["/a", "/b"],
    ),
    FetchCase(
        name="labels filter",
        selector=fnv1.ResourceSelector(
            api_version=API, kind="InferenceCluster", match_labels=fnv1.MatchLabels(labels={"region": "eu"})
        ),
        want=["/b"],
    ),
    FetchCase(
        name="every namespace without one",
        selector=fnv1.ResourceSelector(api_version=API, kind="ModelReplica"),
        want=["team-a/r", "team-b/r"],
    ),
    FetchCase(
        name="the namespace is honoured",
        selector=fnv1.ResourceSelector(api_version=API, kind="ModelReplica", namespace="team-b"),
        want=["team-b/r"],
    ),
    FetchCase(
        name="a name is a Get",
        selector=fnv1.ResourceSelector(api_version="v1", kind="Namespace", match_name="team-a"),
        want=["/team-a"],
    ),
    FetchCase(
        name="a namespaced Get needs the namespace",
        selector=fnv1.ResourceSelector(api_version=API, kind="ModelReplica", match_name="r"),
        want=[],
    ),
]


@pytest.mark.parametrize("case", FETCH_CASES, ids=lambda c: c.name)
def test_fetch(case: FetchCase) -> None:
    got = Store(OBJECTS).fetch(case.selector)
    assert [f"{o.head['metadata'].get('namespace', '')}/{o.head['metadata']['name']}" for o in got] == case.want


def test_render_uid_and_generated_names_match_crossplane() -> None:
    xr = {"apiVersion": API, "kind": "ModelDeployment", "metadata": {"name": "llama", "namespace": "team-a"}}
    uid = uid_of(xr)
    assert (uid, generated_name("llama-", uid, "replica-0")) == (
        "678271c5-5f88-5444-a385-971a54a70de7",
        "llama-7fc8bba04f24",
    )


FLEET = [cluster("a", nodes=1), cluster("b", labels={"region": "us"}), namespace()]  # room for one 8-GPU replica in eu


def _ids(docs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]) for d in docs]


def test_render_composes_replicas_and_recurses_into_their_objects() -> None:
    docs = render_documents(deployment(replicas=2, gpus=8, match_labels={"region": "eu"}), required=FLEET, recurse=True)
    shallow = render_documents(
        deployment(replicas=2, gpus=8, match_labels={"region": "eu"}), required=FLEET, recurse=False
    )
    head, *composed = shallow
    uid = uid_of(deployment())
    meta = {
        "annotations": {"crossplane.io/composition-resource-name": "replica-a-0"},
        "ownerReferences": [
            {
                "apiVersion": API,
                "kind": "ModelDeployment",
                "name": "llama",
                "uid": uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    want_mr = replica("a", gpus=8)
    want_mr["metadata"] = {
        **want_mr["metadata"],
        **meta,
        "labels": {**want_mr["metadata"]["labels"], "crossplane.io/composite": "llama"},
    }
    # What the deployment states for the other deployments: eight GPUs a replica, on cluster a only (its selector).
    want_demand = {
        "apiVersion": API,
        "kind": "ModelDemand",
        "metadata": {
            **meta,
            "name": "llama",
            "namespace": "team-a",
            "annotations": {"crossplane.io/composition-resource-name": "demand"},
            "labels": {"modelplane.ai/deployment": "llama", "crossplane.io/composite": "llama"},
        },
        "spec": {
            "deployment": "llama",
            "replicas": 2,
            "devicesPerReplica": 8,
            "movable": True,
            "spread": "Preferred",
            "clusterSet": "Listed",
            "clusters": ["a"],
            "truncated": False,
            "engines": [
                {
                    "name": "main",
                    "options": [
                        {
                            "poolKinds": [pool_kind_of(FLEET[0])],
                            "nodes": 1,
                            "groups": [{"pods": 1, "devices": 8}],
                            "claimedDevices": 8,
                            "idleDevices": 0,
                            "spareKinds": 0,
                            "deviceSize": "0",
                        }
                    ],
                }
            ],
        },
    }
    conditions = [(c["type"], c["status"], c["reason"]) for c in head["status"]["conditions"]]
    assert (composed, head["spec"]["crossplane"], conditions, head["status"]["replicas"]) == (
        [want_demand, want_mr],
        {
            "resourceRefs": [
                {"apiVersion": API, "kind": "ModelDemand", "name": "llama"},
                {"apiVersion": API, "kind": "ModelReplica", "name": want_mr["metadata"]["name"]},
            ]
        },
        [
            ("Responsive", "True", "WatchCircuitClosed"),
            ("ReplicasScheduled", "False", "InsufficientCapacity"),
            ("ReplicasReady", "False", "ReplicasNotReady"),
            ("Progressing", "True", "RollingOut"),
            ("Synced", "True", "ReconcileSuccess"),
            ("Ready", "False", "Creating"),
        ],
        {"total": 1, "ready": 0, "updated": 1, "available": 0},
    )
    # Recursing adds the replica's render status on its document and its objects after it; the
    # ModelDemand composes nothing and is marked as stated.
    demand, replica_doc, *objects = docs[1:]
    stated = [(c["type"], c["status"]) for c in demand["status"]["conditions"] if c["type"] == "DemandStated"]
    assert (docs[0], stated, replica_doc["spec"]["crossplane"]["resourceRefs"], [d["kind"] for d in objects]) == (
        head,
        [("DemandStated", "True")],
        [
            {"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"]}
            for o in sorted(objects, key=lambda o: o["metadata"]["name"])
        ],
        ["Object"] * len(objects),
    )


def test_modelplane_render_cli_prints_the_stream_and_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(deployment()))
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump_all(FLEET))
    modelplane = str(Path(sys.executable).parent / "modelplane")
    ok = subprocess.run(
        [modelplane, "render", str(tmp_path / "xr.yaml"), "-e", str(tmp_path / "fleet.yaml"), "--explain"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    want = render_stream(tmp_path / "xr.yaml", required=[tmp_path / "fleet.yaml"])
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({**deployment(), "kind": "Unknown"}))
    bad = subprocess.run(
        [modelplane, "render", str(tmp_path / "bad.yaml")], capture_output=True, text=True, timeout=60, check=False
    )
    assert (ok.returncode, ok.stdout, ok.stderr.splitlines()[:2]) == (
        0,
        want,
        ["ModelDeployment team-a/llama", "Placement: 1 of 1 replicas placed."],
    )
    assert (bad.returncode, bad.stdout, bad.stderr) == (
        1,
        "",
        f"Error: expected one Composition for {API} Unknown, found 0: Compositions here are for {API} "
        f"FleetQuota, {API} InferenceCluster, {API} ModelDemand, {API} ModelDeployment, {API} ModelReplica\n",
    )
