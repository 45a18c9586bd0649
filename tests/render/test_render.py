"""render_replica as a whole: what it refuses, and that input order never changes its output."""

from dataclasses import dataclass, replace
from typing import TypeVar

import pytest
from modelplane import names
from modelplane.model import DeviceConstraint, ModelReplica, Parallelism, Phase, Role, ServingMode
from modelplane.render import RenderError, render_replica

from tests.render.factories import container_template, engine, gpus, leader_worker, member, replica, standalone

T = TypeVar("T")


@dataclass(frozen=True)
class ErrorCase:
    name: str
    replica: ModelReplica
    want: str


ERRORS = [
    ErrorCase(
        "a replica without a model",
        replica(model=None),
        "no model: set spec.template.spec.model or --model in the engine args",
    ),
    ErrorCase(
        "a replica that does not say how to reach its cluster",
        replica(provider_config_name=""),
        "no providerConfigRef: the replica does not say how to reach its cluster",
    ),
    ErrorCase("a replica without engines", replica(engines=()), "no engines to render"),
    ErrorCase(
        "prefill/decode with two decode engines",
        replica(
            serving_mode=ServingMode.PREFILL_DECODE,
            engines=(engine("a", phase=Phase.DECODE), engine("b", phase=Phase.DECODE)),
        ),
        "PrefillDecode mode needs exactly two engines, one with phase Prefill and one with phase Decode",
    ),
    ErrorCase(
        "prefill/decode with a decode engine only",
        replica(serving_mode=ServingMode.PREFILL_DECODE, engines=(engine("d", phase=Phase.DECODE),)),
        "PrefillDecode mode needs exactly two engines, one with phase Prefill and one with phase Decode",
    ),
    ErrorCase(
        "a leader without workers",
        replica(engines=(engine(members=(member(Role.LEADER, requests=(gpus(),)),)),)),
        "engine main: members must be one Standalone, or one Leader and one Worker with worker.nodes >= 1 (got Leader)",
    ),
    ErrorCase(
        "a worker with no nodes",
        replica(engines=(engine(members=leader_worker(nodes=0)),)),
        "engine main: members must be one Standalone, or one Leader and one Worker with worker.nodes >= 1 "
        "(got Leader, Worker)",
    ),
    ErrorCase(
        "parallelism contradicting worker.nodes",
        replica(engines=(engine(members=leader_worker(nodes=3), parallelism=Parallelism(pipeline=8)),)),
        "engine main: parallelism makes KServe start 8 pod(s) per copy, but 1 leader + 3 worker.nodes: "
        "set pipeline to 4 or leave it out",
    ),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c.name)
def test_render_errors(case: ErrorCase) -> None:
    with pytest.raises(RenderError) as caught:
        render_replica(case.replica)
    assert (caught.value.reason, str(caught.value)) == (names.REASON_CANNOT_RENDER, case.want)


def _complex_replica(*, reverse: bool) -> ModelReplica:
    """A replica with several engines, members, requests and constraints, optionally listed backwards."""

    def order(items: tuple[T, ...]) -> tuple[T, ...]:
        return tuple(reversed(items)) if reverse else items

    requests = order((gpus(1, name="gpu"), gpus(1, name="nic", device_class="rdma.example.com")))
    constraints = order(
        (
            DeviceConstraint(requests=order(("gpu", "nic")), match_attribute="resource.kubernetes.io/pcieRoot"),
            DeviceConstraint(match_attribute="example.com/numa"),
        )
    )
    decode = engine(
        "decode",
        phase=Phase.DECODE,
        members=order(
            (
                member(Role.LEADER, requests=requests, constraints=constraints),
                member(Role.WORKER, worker_nodes=2, requests=requests, constraints=constraints),
            )
        ),
    )
    prefill = engine("prefill", phase=Phase.PREFILL, copies=2, members=standalone(gpu_count=4))
    return replica(serving_mode=ServingMode.PREFILL_DECODE, engines=order((decode, prefill)))


def test_input_order_does_not_change_the_output() -> None:
    assert render_replica(_complex_replica(reverse=True)) == render_replica(_complex_replica(reverse=False))


def _serving_container(r: ModelReplica) -> object:
    llmis = next(o for o in render_replica(r) if o.readiness_source)
    return llmis.manifest["spec"]["forProvider"]["manifest"]["spec"]["template"]["containers"][0]


@dataclass(frozen=True)
class ContainerCase:
    name: str
    args: tuple[str, ...]
    command: tuple[str, ...] | None
    want: dict[str, object]


CONTAINERS = [
    ContainerCase(
        "without a command the preset launches vLLM and owned flags go",
        ("--model", "Qwen/Qwen3-8B", "--port=8080", "--enforce-eager"),
        None,
        {
            "name": "main",
            "image": "vllm/vllm-openai:v0.11.0",
            "args": ["--enforce-eager"],
            "resources": {"claims": [{"name": "devices"}]},
        },
    ),
    ContainerCase(
        "only owned flags leave no args, so the preset's stand",
        ("--model", "Qwen/Qwen3-8B"),
        None,
        {"name": "main", "image": "vllm/vllm-openai:v0.11.0", "resources": {"claims": [{"name": "devices"}]}},
    ),
    ContainerCase(
        "a user command replaces the launcher and keeps every arg",
        ("serve", "Qwen/Qwen3-8B", "--port", "8000"),
        ("vllm",),
        {
            "name": "main",
            "image": "vllm/vllm-openai:v0.11.0",
            "command": ["vllm"],
            "args": ["serve", "Qwen/Qwen3-8B", "--port", "8000"],
            "resources": {"claims": [{"name": "devices"}]},
        },
    ),
]


@pytest.mark.parametrize("case", CONTAINERS, ids=lambda c: c.name)
def test_serving_container(case: ContainerCase) -> None:
    m = replace(member(requests=(gpus(),)), template=container_template(args=case.args, command=case.command))
    assert _serving_container(replica(engines=(engine(members=(m,)),))) == case.want
