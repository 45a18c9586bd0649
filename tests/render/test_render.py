"""render_replica as a whole: what it refuses, and that input order never changes its output."""

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import pytest
from modelplane import names
from modelplane.model import DeviceConstraint, ModelReplica, Parallelism, Phase, Role, ServingMode
from modelplane.render import RenderError, render_replica

from tests.render.factories import (
    IMAGE,
    container_template,
    engine,
    gpus,
    leader_worker,
    member,
    replica,
    standalone,
)

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
        "a tensor size the pod's GPUs cannot hold",
        replica(engines=(engine(members=standalone(gpu_count=8), parallelism=Parallelism(tensor=16)),)),
        "engine main: parallelism tensor (16) = 16 GPU(s) per pod, but Standalone pods claim 8: make them equal",
    ),
    ErrorCase(
        "a prefill/decode router without a scheduler",
        replica(
            serving_mode=ServingMode.PREFILL_DECODE,
            engines=(engine("d", phase=Phase.DECODE), engine("p", phase=Phase.PREFILL)),
            router={"gateway": {}, "route": {}},
        ),
        "serving.router has no scheduler: in PrefillDecode mode KServe routes requests to prefill only through "
        "its scheduler; add scheduler: {} or leave router out",
    ),
    ErrorCase(
        "parallelism contradicting worker.nodes",
        replica(engines=(engine(members=leader_worker(nodes=3), parallelism=Parallelism(pipeline=8)),)),
        "engine main: parallelism makes KServe start 8 pod(s) per copy, but 1 leader + 3 worker.nodes: "
        "set pipeline to 4 or leave it out",
    ),
    *(
        ErrorCase(
            f"a KServe version {v} that is no 0.x minor from 0.16 on",
            replica(kserve_version=v),
            f"KServe '{v}' is not a version replicas can be rendered for (supported: 0.16, 0.17, 0.18, 0.19, 0.20 "
            "and later 0.x minors): set the InferenceCluster's spec.kserve.version to one",
        )
        for v in ("0.15", "v0.21", "1.0", "0.021", "0.21.1", "0.")
    ),
    ErrorCase(
        "args for a 0.16 gang whose VLLM_ADDITIONAL_ARGS comes from a reference",
        replica(
            kserve_version="0.16",
            engines=(
                engine(
                    members=tuple(
                        replace(
                            m,
                            template=container_template(
                                args=("--enforce-eager",),
                                env=(
                                    {"name": "VLLM_ADDITIONAL_ARGS", "valueFrom": {"configMapKeyRef": {"name": "x"}}},
                                ),
                            ),
                        )
                        for m in leader_worker(nodes=1)
                    )
                ),
            ),
        ),
        "KServe 0.16's multi-node presets take extra vLLM args only from VLLM_ADDITIONAL_ARGS, which the engine "
        "sets from a reference: put the args there too, or write them as a value",
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
    template: Mapping[str, Any]
    want: dict[str, object]


JSON_ARG = '--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}'
CLAIM = {"claims": [{"name": "devices"}]}
TP = "--tensor-parallel-size=1"
CONTAINERS = [
    ContainerCase(
        "without a command the preset launches vLLM and owned flags go",
        container_template(args=("--model", "Qwen/Qwen3-8B", "--port=8080", "--enforce-eager")),
        {
            "name": "main",
            "image": IMAGE,
            "args": [TP, "--enforce-eager"],
            "resources": CLAIM,
            "securityContext": {"runAsNonRoot": False},
        },
    ),
    ContainerCase(
        "only owned flags leave the tensor size, which single-node presets before v0.20 do not pass",
        container_template(args=("--model", "Qwen/Qwen3-8B")),
        {"name": "main", "image": IMAGE, "args": [TP], "resources": CLAIM, "securityContext": {"runAsNonRoot": False}},
    ),
    ContainerCase(
        "args the preset's eval would re-parse are quoted for it, plain ones left as they are",
        container_template(args=("--max-model-len=8192", JSON_ARG, "--chat-template=a b", "--x=$HOME")),
        {
            "name": "main",
            "image": IMAGE,
            "args": [TP, "--max-model-len=8192", f"'{JSON_ARG}'", "'--chat-template=a b'", "'--x=$HOME'"],
            "resources": CLAIM,
            "securityContext": {"runAsNonRoot": False},
        },
    ),
    ContainerCase(
        "a {{ is escaped for KServe's Go template pass over the spec",
        container_template(args=("--chat-template={{ messages }}",)),
        {
            "name": "main",
            "image": IMAGE,
            "args": [TP, "'--chat-template={{`{{`}} messages }}'"],
            "resources": CLAIM,
            "securityContext": {"runAsNonRoot": False},
        },
    ),
    ContainerCase(
        "a user command replaces the launcher and keeps every arg as written",
        container_template(args=("serve", "Qwen/Qwen3-8B", "--port", "8000", JSON_ARG), command=("vllm",)),
        {
            "name": "main",
            "image": IMAGE,
            "command": ["vllm"],
            "args": ["serve", "Qwen/Qwen3-8B", "--port", "8000", JSON_ARG],
            "resources": CLAIM,
            "securityContext": {"runAsNonRoot": False},
        },
    ),
    ContainerCase(
        "without an image the preset's non-root image and security context stand",
        container_template(image=None, args=("--enforce-eager",)),
        {"name": "main", "args": [TP, "--enforce-eager"], "resources": CLAIM},
    ),
    ContainerCase(
        "a security context of the user's own is kept as written",
        container_template(security_context={"runAsUser": 1000, "runAsNonRoot": True}),
        {
            "name": "main",
            "image": IMAGE,
            "args": [TP],
            "resources": CLAIM,
            "securityContext": {"runAsUser": 1000, "runAsNonRoot": True},
        },
    ),
]


@pytest.mark.parametrize("case", CONTAINERS, ids=lambda c: c.name)
def test_serving_container(case: ContainerCase) -> None:
    m = member(requests=(gpus(),), template=case.template)
    assert _serving_container(replica(engines=(engine(members=(m,)),))) == case.want
