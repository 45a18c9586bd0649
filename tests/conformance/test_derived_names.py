"""Every name KServe, LWS and Kubernetes derive from what we render is valid, for the longest inputs.

From the LLMIS name: KServe's children (`kmeta.ChildName(<name>, <suffix>)`, KS pkg/controller/v1alpha2/
llmisvc/), the LeaderWorkerSets `<name>-kserve-mn[-prefill]`, their leader StatefulSet (the LWS name)
and per-group worker StatefulSets `<lws>-<group>` (lws pkg/controllers), pods `<lws>-<group>` and
`<lws>-<group>-<worker>`. A StatefulSet name may have at most 52 characters: its pods carry the label
`controller-revision-hash: <statefulset>-<up to 10 characters>` (kubernetes/kubernetes#64023). Service
and LWS names must be DNS-1035 labels; pod names are DNS labels (they become hostnames).
"""

import re
from dataclasses import dataclass, replace
from typing import Any

import pytest
from modelplane import names
from modelplane.model import ModelReplica, Phase, PlacedEngine, ServingMode
from modelplane.render import render_replica

from tests.conformance import kserve
from tests.render.factories import engine, leader_worker, replica, standalone

DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
LONG = "x" * 63  # the longest DNS label: namespace, deployment, cluster and engine names
REVISION_HASH = 10  # controller.ComputeHash: a uint32 safe-encoded, at most 10 characters


def _longest(name: str, *, phase: Phase | None = None, multi_node: bool) -> PlacedEngine:
    members = leader_worker(nodes=63) if multi_node else standalone(gpu_count=8)
    return replace(engine(name, phase=phase, members=members), copies=64)


def _long_replica(*, mode: ServingMode, multi_node: bool) -> ModelReplica:
    if mode is ServingMode.UNIFIED:
        engines = (_longest(LONG, multi_node=multi_node),)
    else:
        engines = (
            _longest("d" + LONG[1:], phase=Phase.DECODE, multi_node=multi_node),
            _longest(LONG, phase=Phase.PREFILL, multi_node=multi_node),
        )
    r = replica(namespace=LONG, deployment=LONG, cluster=LONG, index=99999, engines=engines, serving_mode=mode)
    return replace(r, name=names.replica_name(LONG, LONG, 99999))


def _problems(r: ModelReplica) -> dict[str, str]:
    problems: dict[str, str] = {}

    def check(what: str, name: str, pattern: re.Pattern[str], limit: int) -> None:
        if len(name) > limit or not pattern.match(name):
            problems[what] = f"{name} ({len(name)} characters)"

    for obj in render_replica(r):
        manifest: dict[str, Any] = obj.manifest["spec"]["forProvider"]["manifest"]
        kind = manifest["kind"]
        check(f"{obj.key} Object", obj.manifest["metadata"]["name"], DNS_1123, 63)
        check(f"{obj.key} {kind}", manifest["metadata"]["name"], DNS_1035 if kind != "PodGroup" else DNS_1123, 63)
        for key, value in {**obj.manifest["metadata"]["labels"], **manifest["metadata"]["labels"]}.items():
            check(f"{obj.key} label {key}", value, LABEL_VALUE, 63)
        if kind != "LLMInferenceService":
            continue
        for what, name in kserve.workload_names(manifest).items():
            is_service_like = what.startswith("-") or "LeaderWorkerSet" in what
            check(f"{obj.key} {what}", name, DNS_1035 if is_service_like else DNS_1123, 63)
        for what, name in kserve.statefulsets(kserve.workload_names(manifest)).items():
            check(f"{obj.key} {what} revision label", f"{name}-{'h' * REVISION_HASH}", LABEL_VALUE, 63)
        for spec in (manifest["spec"], manifest["spec"].get("prefill")):
            for key, value in (spec or {}).get("labels", {}).items():
                check(f"{obj.key} pod label {key}", value, LABEL_VALUE, 63)
    return problems


@dataclass(frozen=True)
class Case:
    name: str
    replica: ModelReplica


CASES = [
    Case("64 single-node copies", _long_replica(mode=ServingMode.UNIFIED, multi_node=False)),
    Case("64 copies of a 64-pod gang", _long_replica(mode=ServingMode.UNIFIED, multi_node=True)),
    Case("prefill and decode on single nodes", _long_replica(mode=ServingMode.PREFILL_DECODE, multi_node=False)),
    Case(
        "prefill and decode as 64 copies of 64-pod gangs",
        _long_replica(mode=ServingMode.PREFILL_DECODE, multi_node=True),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_derived_name_is_valid(case: Case) -> None:
    assert _problems(case.replica) == {}


def test_the_check_sees_a_name_one_character_too_long() -> None:
    """The 52-character StatefulSet bound is tight: a 32-character LLMIS name breaks a prefill gang."""
    llmis = {
        "metadata": {"name": "a" * 32, "namespace": "ns"},
        "spec": {"prefill": {"replicas": 64, "worker": {}, "parallelism": {"data": 2, "dataLocal": 1}}},
    }
    names = kserve.statefulsets(kserve.workload_names(llmis))
    assert {k: len(v) for k, v in names.items()} == {
        "prefill leader StatefulSet": 50,
        "prefill last worker StatefulSet": 53,
    }
