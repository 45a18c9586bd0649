"""Parallelism defaults and KServe's group-size rule: the LWS group must be the engine's gang."""

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from modelplane.model import Parallelism, PlacedEngine, Role
from modelplane.render import RenderError
from modelplane.render.parallelism import gpus_per_node, group_size, resolve

from tests.render.factories import engine, gpus, leader_worker, member, standalone


@dataclass(frozen=True)
class Case:
    name: str
    engine: PlacedEngine
    want: Parallelism | str  # the resolved parallelism, or the RenderError message
    tensor_hint: int | None = None


def _resolve(case: Case) -> Parallelism | str:
    try:
        return resolve(case.engine, tensor_hint=case.tensor_hint)
    except RenderError as err:
        return str(err)


CASES = [
    Case("a single-GPU standalone engine gets tensor 1", engine(), Parallelism(tensor=1)),
    Case(
        "a standalone engine shards over all its GPUs", engine(members=standalone(gpu_count=8)), Parallelism(tensor=8)
    ),
    Case(
        "the user's --tensor-parallel-size is taken when it uses every GPU",
        engine(members=standalone(gpu_count=4)),
        Parallelism(tensor=4),
        tensor_hint=4,
    ),
    Case(
        "an explicit tensor beats the user's flag",
        engine(members=standalone(gpu_count=2), parallelism=Parallelism(tensor=2)),
        Parallelism(tensor=2),
        tensor_hint=4,
    ),
    Case(
        "leader and workers default to data parallelism with one rank per GPU, as KServe's dp-ep sample",
        engine(members=leader_worker(nodes=3)),
        Parallelism(tensor=1, data=32, data_local=8, expert=True),
    ),
    Case(
        "a tensor size for a multi-node engine sets the ranks per pod, and no expert parallelism",
        engine(members=leader_worker(nodes=1), parallelism=Parallelism(tensor=4)),
        Parallelism(tensor=4, data=4, data_local=2),
    ),
    Case(
        "the user's --tensor-parallel-size sizes the ranks of a multi-node engine too, with no expert parallelism",
        engine(members=leader_worker(nodes=1)),
        Parallelism(tensor=8, data=2, data_local=1),
        tensor_hint=8,
    ),
    Case(
        "an explicit expert true beside a tensor size is kept",
        engine(members=leader_worker(nodes=1), parallelism=Parallelism(tensor=8, expert=True)),
        Parallelism(tensor=8, data=2, data_local=1, expert=True),
    ),
    Case(
        "an explicit expert false is kept",
        engine(members=leader_worker(nodes=1), parallelism=Parallelism(expert=False)),
        Parallelism(tensor=1, data=16, data_local=8, expert=False),
    ),
    Case(
        "pipeline parallelism asked for is kept, tensor over the pod's GPUs",
        engine(members=leader_worker(nodes=3), parallelism=Parallelism(pipeline=4)),
        Parallelism(tensor=8, pipeline=4),
    ),
    Case(
        "explicit data parallelism whose group is the gang takes tensor from the GPUs per rank",
        engine(members=leader_worker(nodes=3), parallelism=Parallelism(data=16, data_local=4)),
        Parallelism(tensor=2, data=16, data_local=4),
    ),
    Case(
        "single-node data parallelism is a group of one",
        engine(members=standalone(gpu_count=8), parallelism=Parallelism(data=8, data_local=8)),
        Parallelism(tensor=1, data=8, data_local=8),
    ),
    Case(
        "a tensor larger than the pod's GPUs is refused",
        engine(members=standalone(gpu_count=8), parallelism=Parallelism(tensor=16)),
        "engine main: parallelism tensor (16) = 16 GPU(s) per pod, but Standalone pods claim 8: make them equal",
    ),
    Case(
        "a tensor leaving GPUs idle is refused",
        engine(members=standalone(gpu_count=8), parallelism=Parallelism(tensor=4)),
        "engine main: parallelism tensor (4) = 4 GPU(s) per pod, but Standalone pods claim 8: make them equal",
    ),
    Case(
        "a multi-node tensor that does not divide the GPUs is refused",
        engine(members=leader_worker(nodes=1), parallelism=Parallelism(tensor=3)),
        "engine main: parallelism tensor (3) x dataLocal (2) = 6 GPU(s) per pod, but Leader pods claim 8: "
        "make them equal",
    ),
    Case(
        "tensor 16 on 8-GPU nodes of a multi-node engine is refused",
        engine(members=leader_worker(nodes=1), parallelism=Parallelism(tensor=16)),
        "engine main: parallelism tensor (16) x dataLocal (1) = 16 GPU(s) per pod, but Leader pods claim 8: "
        "make them equal",
    ),
    Case(
        "a leader that claims no GPU cannot run the preset's ranks",
        engine("big", members=leader_worker(nodes=2, leader_claims=False)),
        "engine big: Leader pods claim no GPU, but KServe's preset runs tensor (1) x dataLocal (8) = 8 GPU(s) of "
        "vLLM ranks on every pod, the leader too: give the Leader the same nodeSelector devices as the Worker",
    ),
    Case(
        "a pipeline shorter than the gang is refused",
        engine("big", members=leader_worker(nodes=3), parallelism=Parallelism(pipeline=2)),
        "engine big: parallelism makes KServe start 2 pod(s) per copy, but 1 leader + 3 worker.nodes: "
        "set pipeline to 4 or leave it out",
    ),
    Case(
        "data parallelism giving another group size is refused",
        engine("big", members=leader_worker(nodes=3), parallelism=Parallelism(data=16, data_local=8)),
        "engine big: parallelism makes KServe start 2 pod(s) per copy, but 1 leader + 3 worker.nodes: "
        "set data to 4 x dataLocal",
    ),
    Case(
        "a multi-node pipeline on a standalone engine is refused",
        engine(parallelism=Parallelism(pipeline=2)),
        "engine main: parallelism makes KServe start 2 pod(s) per copy, but a Standalone engine runs 1 pod: "
        "set pipeline to 1 or leave it out",
    ),
    Case(
        "data without dataLocal is refused",
        engine(members=leader_worker(nodes=1), parallelism=Parallelism(data=2)),
        "engine main: parallelism: data and dataLocal must be set together",
    ),
    Case(
        "pipeline and data together are refused",
        engine(members=leader_worker(nodes=1), parallelism=Parallelism(pipeline=2, data=16, data_local=8)),
        "engine main: parallelism: pipeline and data parallelism cannot both be set",
    ),
    Case(
        "data that is not a multiple of dataLocal is refused",
        engine(members=leader_worker(nodes=1), parallelism=Parallelism(data=12, data_local=8)),
        "engine main: parallelism: data (12) must be a multiple of dataLocal (8)",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_resolve(case: Case) -> None:
    assert _resolve(case) == case.want


@dataclass(frozen=True)
class GpuCase:
    name: str
    requests: tuple[tuple[str, int], ...]  # (device class, count)
    want: int


GPU_CASES = [
    GpuCase("a claimless member has no GPUs", (), 0),
    GpuCase("GPU requests add up", (("gpu.nvidia.com", 4), ("gpu.nvidia.com", 4)), 8),
    GpuCase("a NIC beside the GPUs is not a tensor shard", (("gpu.nvidia.com", 4), ("rdma.mellanox.com", 4)), 4),
    GpuCase("a class named with gpu as a word counts", (("amd-gpu", 2), ("nic.example.com", 1)), 2),
    GpuCase("a class merely containing the letters does not", (("gpudirect.example.com", 1), ("gpu.nvidia.com", 2)), 2),
    GpuCase("without any GPU class every request counts", (("tpu.example.com", 4), ("accel.example.com", 2)), 6),
]


@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: c.name)
def test_gpus_per_node(case: GpuCase) -> None:
    requests = tuple(gpus(count, name=f"r{i}", device_class=cls) for i, (cls, count) in enumerate(case.requests))
    assert gpus_per_node(member(Role.WORKER, worker_nodes=1, requests=requests)) == case.want


@dataclass(frozen=True)
class SizeCase:
    name: str
    parallelism: Parallelism
    want: int


SIZE_CASES = [
    SizeCase("nothing set is one pod", Parallelism(tensor=8), 1),
    SizeCase("pipeline sets the group", Parallelism(pipeline=3), 3),
    SizeCase("data over dataLocal sets the group", Parallelism(data=32, data_local=8), 4),
    SizeCase("data below dataLocal is still one pod", Parallelism(data=4, data_local=8), 1),
]


@pytest.mark.parametrize("case", SIZE_CASES, ids=lambda c: c.name)
def test_group_size(case: SizeCase) -> None:
    assert group_size(case.parallelism) == case.want


def _documented_default(xrd: str) -> set[str]:
    """The fields the XRD's parallelism description names as a Leader/Worker engine's default ({a, b})."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "parallelism" and isinstance(value, dict) and "description" in value:
                    found.append(value["description"])
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load((Path(__file__).resolve().parents[2] / "apis" / xrd / "definition.yaml").read_text()))
    assert len(found) == 1
    braces = re.search(r"Leader/Worker engine: [^{]*\{([^}]*)\}", found[0])
    return {name.strip() for name in braces.group(1).split(",")} if braces else set()


@pytest.mark.parametrize("xrd", ["modeldeployment", "modelreplica"])
def test_the_api_reference_names_the_fields_a_leader_worker_engine_gets_by_default(xrd: str) -> None:
    got = resolve(engine(members=leader_worker(nodes=3)), tensor_hint=None)
    rendered = {"tensor": got.tensor, "pipeline": got.pipeline, "data": got.data, "dataLocal": got.data_local}
    rendered["expert"] = got.expert
    assert _documented_default(xrd) == {k for k, v in rendered.items() if v}
