"""parse_* turn XR dicts into domain values; replica_manifest is parse_replica's inverse."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane import model as m
from modelplane.api import gpu_pools_status, parse_cluster, parse_deployment, parse_replica, replica_manifest
from modelplane.errors import SpecError

SAMPLES = Path(__file__).parent / "samples" / "valid"
IMAGE = "vllm/vllm-openai:v0.11.0"


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((SAMPLES / name).read_text())


def pod(*, args: tuple[str, ...] = (), command: tuple[str, ...] = ()) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "engine", "image": IMAGE}
    if command:
        container["command"] = list(command)
    if args:
        container["args"] = list(args)
    return {"spec": {"containers": [container]}}


def pod_with(resources: dict[str, Any]) -> dict[str, Any]:
    """A pod template whose engine container carries `resources`."""
    return {"spec": {"containers": [{"name": "engine", "image": IMAGE, "resources": resources}]}}


GPU = {"devices": [{"name": "gpu", "selectors": [{"cel": "true"}]}]}


def md(*, replicas: Any = 1, engines: list[dict[str, Any]] | None = None, **tpl: Any) -> dict[str, Any]:
    engines = engines or [engine()]
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "llm", "namespace": "team-a"},
        "spec": {"replicas": replicas, "template": {"spec": {"engines": engines, **tpl}}},
    }


def engine(
    name: str = "main", *, args: tuple[str, ...] = (), command: tuple[str, ...] = (), **kw: Any
) -> dict[str, Any]:
    return {"name": name, "members": [{"nodeSelector": GPU, "template": pod(args=args, command=command)}], **kw}


def gang(
    name: str = "gang", *, leader_args: tuple[str, ...] = (), worker_args: tuple[str, ...] = (), **kw: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "members": [
            {"role": "Worker", "worker": {"nodes": 2}, "nodeSelector": GPU, "template": pod(args=worker_args)},
            {"role": "Leader", "template": pod(args=leader_args)},
        ],
        **kw,
    }


# --- whole-object parses -----------------------------------------------------------------


def test_a_modelplane_style_manifest_parses_into_the_deployment_it_describes() -> None:
    got = parse_deployment(load("deployment-modelplane-style.yaml"), namespace_labels={"tenant": "research"})
    args = [
        "vllm serve deepseek-ai/DeepSeek-V3 --served-model-name $(MODELPLANE_SERVED_MODEL_NAME) --tensor-parallel-size 8"
    ]
    want = m.Deployment(
        namespace="research",
        name="deepseek",
        replicas=1,
        engines=(
            m.Engine(
                name="gang",
                copies=2,
                members=(
                    m.Member(
                        role=m.Role.LEADER,
                        template={
                            "spec": {
                                "containers": [
                                    {"name": "engine", "image": IMAGE, "command": ["sh", "-c"], "args": args}
                                ]
                            }
                        },
                    ),
                    m.Member(
                        role=m.Role.WORKER,
                        worker_nodes=2,
                        device_requests=(
                            m.DeviceRequest(
                                name="gpu",
                                count=8,
                                selectors=(
                                    'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"',
                                ),
                            ),
                        ),
                        template={
                            "spec": {
                                "containers": [
                                    {
                                        "name": "engine",
                                        "image": IMAGE,
                                        "ports": [{"name": "http", "containerPort": 8000}],
                                    }
                                ]
                            }
                        },
                    ),
                ),
            ),
        ),
        model=m.ModelRef(uri="hf://deepseek-ai/DeepSeek-V3"),
        cluster_selector=m.LabelSelector(match_labels={"tier": "gpu"}),
        tolerations=(
            m.Toleration(key="dedicated", operator="Equal", value="inference", effect=m.TaintEffect.NO_EXECUTE),
        ),
        namespace_labels={"tenant": "research"},
    )
    assert got == want


def test_a_prefill_decode_deployment_keeps_phases_selectors_and_scheduling() -> None:
    got = parse_deployment(load("deployment-prefill-decode.yaml"))
    summary = (
        got.serving_mode,
        got.queue,
        got.priority_class_name,
        dict(got.template_labels),
        got.cluster_selector,
        got.tolerations,
        got.model,
        [
            (e.name, e.phase, e.copies, [(x.role, x.worker_nodes, x.device_requests, x.constraints) for x in e.members])
            for e in got.engines
        ],
    )
    gpu8 = m.DeviceRequest(name="gpu", count=8, selectors=('device.driver == "gpu.nvidia.com"',))
    assert summary == (
        m.ServingMode.PREFILL_DECODE,
        "inference",
        "high",
        {"tier": "prod"},
        m.LabelSelector(
            match_labels={"region": "eu"},
            match_expressions=(m.LabelSelectorRequirement(key="compliance", operator="In", values=("gdpr",)),),
        ),
        (m.Toleration(key="maintenance", operator="Exists", effect=m.TaintEffect.NO_SCHEDULE),),
        m.ModelRef(uri="hf://Qwen/Qwen3-8B", name="qwen3"),
        [
            (
                "prefill",
                m.Phase.PREFILL,
                2,
                [
                    (
                        m.Role.STANDALONE,
                        0,
                        (
                            m.DeviceRequest(
                                name="gpu",
                                count=8,
                                selectors=(
                                    'device.driver == "gpu.nvidia.com"',
                                    'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0',
                                ),
                            ),
                        ),
                        (),
                    )
                ],
            ),
            (
                "decode",
                m.Phase.DECODE,
                1,
                [
                    (m.Role.LEADER, 0, (), ()),
                    (
                        m.Role.WORKER,
                        3,
                        (gpu8, m.DeviceRequest(name="nic", count=1, selectors=('device.driver == "ib.example.com"',))),
                        (
                            m.DeviceConstraint(
                                requests=("gpu", "nic"), match_attribute="resource.kubernetes.io/pcieRoot"
                            ),
                        ),
                    ),
                ],
            ),
        ],
    )


def test_a_cluster_reads_published_gpu_pools_over_spec_node_pools() -> None:
    got = parse_cluster(load("cluster-fleet-member.yaml"))
    want = m.Cluster(
        name="eu-west-1",
        labels={"region": "eu", "tier": "gpu"},
        taints=(
            m.Taint(key="maintenance", value="true", effect=m.TaintEffect.NO_SCHEDULE),
            m.Taint(key="maintenance", effect=m.TaintEffect.NO_EXECUTE),
        ),
        ready=True,
        allowed_namespaces=("research", "team-a"),
        allowed_namespace_selector=m.LabelSelector(
            match_expressions=(m.LabelSelectorRequirement(key="tenant", operator="Exists"),)
        ),
        provider_config_name="eu-west-1",
        workload_namespace="inference",
        default_queue="serving",
        default_priority_class_name="serving-high",
        kai_namespaces={
            "team-chat": m.KaiAllowance(
                queues=("team-chat-batch", "team-chat-premium"), priority_class_names=("build", "inference")
            )
        },
        topology="rack-topology",
        topology_required_level="example.com/rack",
        kserve_version="0.17",
        pools=(
            m.NodePool(
                name="h200",
                nodes=6,
                devices=(m.Device(name="gpu", driver="gpu.nvidia.com", device_class_name="gpu.nvidia.com", count=8),),
            ),
        ),
    )
    assert got == want


def test_a_cluster_without_published_pools_uses_spec_node_pools_with_typed_attributes() -> None:
    obj = load("cluster-fleet-member.yaml")
    del obj["status"]
    got = parse_cluster(obj).pools
    assert got == (
        m.NodePool(
            name="h200",
            nodes=8,
            devices=(
                m.Device(
                    name="gpu",
                    driver="gpu.nvidia.com",
                    device_class_name="gpu.nvidia.com",
                    count=8,
                    attributes={
                        "driverVersion": m.Attribute(type=m.AttributeType.VERSION, value="1.2.3"),
                        "gpu.nvidia.com/index": m.Attribute(type=m.AttributeType.INT, value=0),
                        "mig": m.Attribute(type=m.AttributeType.BOOL, value=False),
                        "productName": m.Attribute(type=m.AttributeType.STRING, value="NVIDIA H200"),
                    },
                    capacity={"memory": "141Gi"},
                ),
                m.Device(name="ib", driver="ib.example.com", claim=m.ClaimKind.SYNTHETIC),
            ),
        ),
        m.NodePool(
            name="l4",
            nodes=2,
            devices=(m.Device(name="gpu", driver="gpu.nvidia.com", device_class_name="gpu.nvidia.com"),),
        ),
    )


@dataclass(frozen=True)
class StackCase:
    name: str
    spec: dict[str, Any]
    want: m.Stack


STACK_CASES = [
    StackCase("a cluster without spec.stack runs the Standard stack, as Modelplane defaults it", {}, m.Stack.STANDARD),
    StackCase("spec.stack Standard is read", {"stack": "Standard"}, m.Stack.STANDARD),
    StackCase("spec.stack Dynamo is read", {"stack": "Dynamo"}, m.Stack.DYNAMO),
]


@pytest.mark.parametrize("case", STACK_CASES, ids=lambda c: c.name)
def test_a_cluster_reads_its_serving_stack(case: StackCase) -> None:
    obj = load("cluster-fleet-member.yaml")
    obj["spec"] = {**obj["spec"], **case.spec}
    assert parse_cluster(obj) == replace(parse_cluster(load("cluster-fleet-member.yaml")), stack=case.want)


def test_gpu_pools_status_publishes_spec_node_pools_with_defaults_filled_and_sorted() -> None:
    obj = load("cluster-fleet-member.yaml")
    obj["spec"]["nodePools"].reverse()
    got = gpu_pools_status(obj)
    assert got == [
        {
            "name": "h200",
            "nodes": 8,
            "devices": [
                {
                    "name": "gpu",
                    "driver": "gpu.nvidia.com",
                    "claim": "DRA",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": 8,
                    "attributes": {
                        "productName": {"string": "NVIDIA H200"},
                        "driverVersion": {"version": "1.2.3"},
                        "gpu.nvidia.com/index": {"int": 0},
                        "mig": {"bool": False},
                    },
                    "capacity": {"memory": {"value": "141Gi"}},
                },
                {"name": "ib", "driver": "ib.example.com", "claim": "Synthetic", "count": 1},
            ],
        },
        {
            "name": "l4",
            "nodes": 2,
            "devices": [
                {
                    "name": "gpu",
                    "driver": "gpu.nvidia.com",
                    "claim": "DRA",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": 1,
                }
            ],
        },
    ]


# --- readiness ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadyCase:
    name: str
    conditions: list[dict[str, str]]
    cluster_ready: bool
    replica_ready: bool


READY_CASES = [
    ReadyCase(
        "no conditions: a cluster is usable, a replica is not ready", [], cluster_ready=True, replica_ready=False
    ),
    ReadyCase("Ready True: both ready", [{"type": "Ready", "status": "True"}], cluster_ready=True, replica_ready=True),
    ReadyCase(
        "Ready False: neither ready", [{"type": "Ready", "status": "False"}], cluster_ready=False, replica_ready=False
    ),
    ReadyCase(
        "Ready Unknown: the cluster is not known to be down",
        [{"type": "Ready", "status": "Unknown"}],
        cluster_ready=True,
        replica_ready=False,
    ),
    ReadyCase(
        "only other conditions count for nothing",
        [{"type": "Synced", "status": "False"}],
        cluster_ready=True,
        replica_ready=False,
    ),
]


@pytest.mark.parametrize("case", READY_CASES, ids=lambda c: c.name)
def test_ready_comes_from_the_ready_condition(case: ReadyCase) -> None:
    cluster = {"metadata": {"name": "c"}, "spec": {}, "status": {"conditions": case.conditions}}
    replica = load("replica-leader-worker.yaml") | {"status": {"conditions": case.conditions}}
    assert (parse_cluster(cluster).ready, parse_replica(replica).ready) == (case.cluster_ready, case.replica_ready)


# --- replica round trips -----------------------------------------------------------------


def placed(
    role: m.Role = m.Role.STANDALONE, *, pool: str = "h200", claims: bool = True, nodes: int = 0
) -> m.PlacedMember:
    requests = (m.ResolvedDeviceRequest(name="gpu", device_class_name="gpu.nvidia.com", count=8, selectors=("true",)),)
    return m.PlacedMember(
        role=role,
        worker_nodes=nodes,
        pool=pool,
        device_requests=requests if claims else (),
        template=pod(args=("--max-model-len", "8192")),
    )


def replica(**kw: Any) -> m.ModelReplica:
    base: dict[str, Any] = {
        "namespace": "team-a",
        "name": "llm-c1-0",
        "deployment": "llm",
        "cluster": "c1",
        "index": 0,
        "engines": (m.PlacedEngine(name="main", members=(placed(),)),),
    }
    return m.ModelReplica(**(base | kw))


@dataclass(frozen=True)
class RoundTrip:
    name: str
    replica: m.ModelReplica = field(default_factory=replica)


ROUND_TRIPS = [
    RoundTrip("a unified standalone replica with defaults"),
    RoundTrip(
        "a leader-worker gang with a claimless leader, parallelism and constraints",
        replica(
            index=3,
            name="llm-c1-3",
            engines=(
                m.PlacedEngine(
                    name="gang",
                    copies=2,
                    parallelism=m.Parallelism(tensor=8, pipeline=3),
                    members=(
                        placed(m.Role.LEADER, claims=False),
                        m.PlacedMember(
                            role=m.Role.WORKER,
                            worker_nodes=2,
                            pool="h200",
                            device_requests=(
                                m.ResolvedDeviceRequest(name="gpu", device_class_name="gpu.nvidia.com", count=8),
                                m.ResolvedDeviceRequest(
                                    name="nic", device_class_name="rdma", count=1, selectors=("a", "b")
                                ),
                            ),
                            constraints=(
                                m.DeviceConstraint(
                                    requests=("gpu", "nic"), match_attribute="resource.kubernetes.io/pcieRoot"
                                ),
                            ),
                            template=pod(),
                        ),
                    ),
                ),
            ),
        ),
    ),
    RoundTrip(
        "a prefill-decode replica on two pools with everything set",
        replica(
            engines=(
                m.PlacedEngine(name="decode", phase=m.Phase.DECODE, members=(placed(pool="h200"),)),
                m.PlacedEngine(name="prefill", phase=m.Phase.PREFILL, copies=4, members=(placed(pool="l4"),)),
            ),
            serving_mode=m.ServingMode.PREFILL_DECODE,
            provider_config_name="c1-kube",
            workload_namespace="serving",
            model=m.ModelRef(uri="hf://Qwen/Qwen3-8B", name="qwen"),
            queue="team-a",
            priority_class_name="high",
            topology="racks",
            topology_required_level="example.com/rack",
            topology_preferred_level="example.com/block",
            labels={"tier": "prod", "app.kubernetes.io/name": "llm"},
            kserve_version="0.16",
        ),
    ),
    RoundTrip("a replica with no model", replica(model=None, labels={"a": "b"})),
    RoundTrip("a replica for a later KServe than the function knows", replica(kserve_version="0.21")),
    RoundTrip("an exclusive deployment's replica", replica(exclusive_nodes=True)),
    RoundTrip(
        "a gang spanning two pools of a fabric",
        replica(
            topology="fabric-topology",
            engines=(
                m.PlacedEngine(
                    name="gang",
                    members=(
                        placed(m.Role.LEADER, pool="coordinators"),
                        m.PlacedMember(role=m.Role.WORKER, worker_nodes=2, pool="h100", template=pod()),
                    ),
                    fabric_level="example.com/ib-domain",
                ),
            ),
        ),
    ),
]


@dataclass(frozen=True)
class ExclusiveCase:
    name: str
    scheduling: dict[str, Any] | None
    want: bool


EXCLUSIVE = [
    ExclusiveCase("no scheduling leaves nodes shared", None, want=False),
    ExclusiveCase("a queue alone leaves nodes shared", {"queue": "team-b"}, want=False),
    ExclusiveCase("exclusiveNodes false leaves nodes shared", {"exclusiveNodes": False}, want=False),
    ExclusiveCase("exclusiveNodes true asks for whole nodes", {"exclusiveNodes": True}, want=True),
]


@pytest.mark.parametrize("case", EXCLUSIVE, ids=lambda c: c.name)
def test_a_deployment_asks_for_exclusive_nodes_with_scheduling_exclusive_nodes(case: ExclusiveCase) -> None:
    obj = load("deployment-exclusive-nodes.yaml")
    del obj["spec"]["template"]["spec"]["scheduling"]
    if case.scheduling is not None:
        obj["spec"]["template"]["spec"]["scheduling"] = case.scheduling
    assert parse_deployment(obj).exclusive_nodes is case.want


def test_exclusive_nodes_that_is_not_a_boolean_is_refused() -> None:
    obj = load("deployment-exclusive-nodes.yaml")
    obj["spec"]["template"]["spec"]["scheduling"]["exclusiveNodes"] = "sometimes"
    with pytest.raises(
        SpecError, match=r"spec\.template\.spec\.scheduling\.exclusiveNodes: Input should be a valid boolean"
    ):
        parse_deployment(obj)


def test_an_exclusive_replica_states_it_and_others_leave_the_field_out() -> None:
    got = [replica_manifest(replica(exclusive_nodes=e))["spec"]["scheduling"] for e in (True, False)]
    assert got == [
        {"queue": "default-queue", "priorityClassName": "inference", "exclusiveNodes": True},
        {"queue": "default-queue", "priorityClassName": "inference"},
    ]


@pytest.mark.parametrize("case", ROUND_TRIPS, ids=lambda c: c.name)
def test_parse_replica_inverts_replica_manifest(case: RoundTrip) -> None:
    assert parse_replica(replica_manifest(case.replica)) == case.replica


def test_a_replica_an_older_version_composed_with_a_device_plugin_gpu_is_still_read() -> None:
    """Its deployment reads it to replace it; the XRD and parse_deployment refuse new ones (not emitted here)."""
    legacy = replica(
        engines=(
            m.PlacedEngine(
                name="main", members=(replace(placed(), template=pod_with({"limits": {"nvidia.com/gpu": "8"}})),)
            ),
        )
    )
    assert parse_replica(replica_manifest(legacy)) == legacy


def test_replica_manifest_writes_identity_labels_and_only_owned_spec() -> None:
    got = replica_manifest(replica(labels={"tier": "prod"}, model=m.ModelRef(uri="hf://x/y")))
    assert got == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": "llm-c1-0",
            "namespace": "team-a",
            "labels": {
                "modelplane.ai/cluster": "c1",
                "modelplane.ai/deployment": "llm",
                "modelplane.ai/replica-index": "0",
                "tier": "prod",
            },
        },
        "spec": {
            "clusterName": "c1",
            "workloadNamespace": "modelplane-workloads",
            "model": {"uri": "hf://x/y"},
            "serving": {"mode": "Unified"},
            "scheduling": {"queue": "default-queue", "priorityClassName": "inference"},
            "engines": [
                {
                    "name": "main",
                    "copies": 1,
                    "members": [
                        {
                            "role": "Standalone",
                            "nodePoolName": "h200",
                            "deviceRequests": [
                                {
                                    "name": "gpu",
                                    "deviceClassName": "gpu.nvidia.com",
                                    "count": 8,
                                    "selectors": [{"cel": {"expression": "true"}}],
                                }
                            ],
                            "template": pod(args=("--max-model-len", "8192")),
                        }
                    ],
                }
            ],
        },
    }


def test_an_observed_replica_drops_machinery_labels_and_ignores_crossplane_fields() -> None:
    obj = replica_manifest(replica(labels={"tier": "prod"}))
    obj["metadata"]["labels"]["crossplane.io/composite"] = "llm-x7k2"
    obj["metadata"]["uid"] = "1234"
    obj["spec"]["crossplane"] = {"compositionRef": {"name": "modelreplicas.modelplane.ai"}, "resourceRefs": []}
    obj["status"] = {"conditions": [{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}]}
    assert parse_replica(obj) == replica(labels={"tier": "prod"})


# --- numbers from protobuf Struct --------------------------------------------------------


@dataclass(frozen=True)
class NumberCase:
    name: str
    obj: dict[str, Any]
    want: Any = None
    error: str | None = None


def _summary(d: m.Deployment) -> Any:
    return (
        d.replicas,
        [(e.copies, [(x.worker_nodes, [r.count for r in x.device_requests]) for x in e.members]) for e in d.engines],
    )


NUMBER_CASES = [
    NumberCase(
        "integral floats become ints", md(replicas=3.0, engines=[engine(copies=2.0)]), want=(3, [(2, [(0, [1])])])
    ),
    NumberCase(
        "worker nodes and device counts arrive as floats",
        md(
            engines=[
                {
                    **gang(),
                    "members": [
                        {"role": "Leader", "template": pod()},
                        {
                            "role": "Worker",
                            "worker": {"nodes": 4.0},
                            "nodeSelector": {
                                "devices": [{"name": "gpu", "count": 8.0, "selectors": [{"cel": "true"}]}]
                            },
                            "template": pod(),
                        },
                    ],
                }
            ]
        ),
        want=(1, [(1, [(0, []), (4, [8])])]),
    ),
    NumberCase(
        "a fractional replica count is rejected",
        md(replicas=3.5),
        error="spec.replicas: must be a whole number, got 3.5",
    ),
    NumberCase(
        "a fractional copy count is rejected",
        md(engines=[engine(copies=1.5)]),
        error="spec.template.spec.engines[0].copies: must be a whole number, got 1.5",
    ),
    NumberCase("a string is not a number", md(replicas="3"), error="spec.replicas: Input should be a valid integer"),
    NumberCase("a boolean is not a number", md(replicas=True), error="spec.replicas: Input should be a valid integer"),
]


@pytest.mark.parametrize("case", NUMBER_CASES, ids=lambda c: c.name)
def test_numbers_from_struct(case: NumberCase) -> None:
    if case.error is None:
        assert _summary(parse_deployment(case.obj)) == case.want
    else:
        with pytest.raises(SpecError) as err:
            parse_deployment(case.obj)
        assert str(err.value) == case.error


def test_cluster_numbers_from_struct_and_quantities_stay_strings() -> None:
    obj = {
        "metadata": {"name": "c"},
        "spec": {
            "nodePools": [
                {
                    "name": "p",
                    "nodes": 4.0,
                    "devices": [
                        {
                            "name": "gpu",
                            "driver": "d",
                            "deviceClassName": "d",
                            "count": 8.0,
                            "attributes": {"index": {"int": 7.0}},
                            "capacity": {"memory": {"value": "80Gi"}, "cores": {"value": 128.0}},
                        }
                    ],
                }
            ]
        },
    }
    assert parse_cluster(obj).pools == (
        m.NodePool(
            name="p",
            nodes=4,
            devices=(
                m.Device(
                    name="gpu",
                    driver="d",
                    device_class_name="d",
                    count=8,
                    attributes={"index": m.Attribute(type=m.AttributeType.INT, value=7)},
                    capacity={"cores": "128", "memory": "80Gi"},
                ),
            ),
        ),
    )


# --- model derivation --------------------------------------------------------------------


@dataclass(frozen=True)
class ModelCase:
    name: str
    obj: dict[str, Any]
    want: m.ModelRef | None


MODEL_CASES = [
    ModelCase(
        "a served name longer than the ModelReplica schema allows names nothing",
        md(engines=[engine(args=("--model", "Qwen/Qwen3-8B", "--served-model-name", "a" * 254))]),
        m.ModelRef(uri="hf://Qwen/Qwen3-8B"),
    ),
    ModelCase(
        "--model with a separate value is a Hugging Face id",
        md(engines=[engine(args=("--model", "Qwen/Qwen3-8B"))]),
        m.ModelRef(uri="hf://Qwen/Qwen3-8B"),
    ),
    ModelCase(
        "--model= and --served-model-name give uri and name",
        md(engines=[engine(args=("--model=Qwen/Qwen3-8B", "--served-model-name", "qwen"))]),
        m.ModelRef(uri="hf://Qwen/Qwen3-8B", name="qwen"),
    ),
    ModelCase(
        "an explicit scheme is kept",
        md(engines=[engine(args=("--model=s3://bucket/llama",))]),
        m.ModelRef(uri="s3://bucket/llama"),
    ),
    ModelCase(
        "a pvc scheme is kept",
        md(engines=[engine(args=("--model", "pvc://cache/qwen"))]),
        m.ModelRef(uri="pvc://cache/qwen"),
    ),
    ModelCase(
        "an hf scheme is not doubled", md(engines=[engine(args=("--model", "hf://a/b"))]), m.ModelRef(uri="hf://a/b")
    ),
    ModelCase(
        "vllm serve's positional model inside a shell script counts",
        md(engines=[engine(command=("bash", "-c"), args=("exec vllm serve org/model --served-model-name=m",))]),
        m.ModelRef(uri="hf://org/model", name="m"),
    ),
    ModelCase("a variable reference names nothing", md(engines=[engine(args=("--model", "$(MODEL)"))]), None),
    ModelCase("a local path names nothing", md(engines=[engine(args=("--model", "/mnt/models"))]), None),
    ModelCase("no flags: no model", md(engines=[engine(args=("--port", "8000"))]), None),
    ModelCase(
        "the explicit model wins over args",
        md(engines=[engine(args=("--model", "a/b"))], model={"uri": "oci://registry/model", "name": "x"}),
        m.ModelRef(uri="oci://registry/model", name="x"),
    ),
    ModelCase(
        "the Decode engine is read first under PrefillDecode",
        md(
            serving={"mode": "PrefillDecode"},
            engines=[
                engine("p", phase="Prefill", args=("--model", "p/p")),
                engine("d", phase="Decode", args=("--model", "d/d")),
            ],
        ),
        m.ModelRef(uri="hf://d/d"),
    ),
    ModelCase(
        "the first engine is read first under Unified",
        md(
            engines=[
                engine("a", args=("--model", "a/a")),
                engine("b", args=("--model", "b/b", "--served-model-name", "b")),
            ]
        ),
        m.ModelRef(uri="hf://a/a", name="b"),
    ),
    ModelCase(
        "the Leader is read before the Worker",
        md(engines=[gang(leader_args=("--model", "lead/er"), worker_args=("--model", "work/er"))]),
        m.ModelRef(uri="hf://lead/er"),
    ),
    ModelCase(
        "a Worker's flags count when the Leader has none",
        md(engines=[gang(worker_args=("--model", "work/er"))]),
        m.ModelRef(uri="hf://work/er"),
    ),
]


@pytest.mark.parametrize("case", MODEL_CASES, ids=lambda c: c.name)
def test_model_derivation(case: ModelCase) -> None:
    assert parse_deployment(case.obj).model == case.want


# --- spec errors -------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorCase:
    name: str
    parse: Any
    obj: dict[str, Any]
    want: str


ERROR_CASES = [
    ErrorCase(
        "a deployment without spec",
        parse_deployment,
        {"metadata": {"name": "x"}},
        "spec: Input should be a valid dictionary or instance of DeploymentSpec",
    ),
    ErrorCase("an object without a name", parse_deployment, {"metadata": {}, "spec": {}}, "metadata.name: required"),
    ErrorCase(
        "several problems are reported together",
        parse_deployment,
        md(engines=[engine(copies=0), engine("B")]),
        "spec.template.spec.engines[0].copies: Input should be greater than or equal to 1; "
        "spec.template.spec.engines[1].name: String should match pattern '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
    ),
    ErrorCase(
        "an unknown member field",
        parse_deployment,
        md(engines=[{"name": "e", "members": [{"nodeSelector": GPU, "template": pod(), "gpus": 8}]}]),
        "spec.template.spec.engines[0].members[0].gpus: unknown field",
    ),
    ErrorCase(
        "a misspelt field names the closest declared one",
        parse_deployment,
        md(clusterSelecter={"matchLabels": {"fleet": "a"}}),
        "spec.template.spec.clusterSelecter: unknown field (did you mean 'clusterSelector'?)",
    ),
    ErrorCase(
        "a misspelt field deep in lists and unions names the closest one declared beside it",
        parse_deployment,
        md(
            engines=[
                {
                    "name": "e",
                    "members": [
                        {
                            "nodeSelector": {"devices": [{"name": "gpu", "selectors": [{"cell": "true"}]}]},
                            "template": {
                                "spec": {
                                    "containers": [
                                        {
                                            "name": "engine",
                                            "env": [{"name": "A", "valueFrom": {"secretKeyReff": {"name": "s"}}}],
                                        }
                                    ]
                                }
                            },
                        }
                    ],
                }
            ]
        ),
        "spec.template.spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel: Field required; "
        "spec.template.spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cell: unknown field (did you "
        "mean 'cel'?); spec.template.spec.engines[0].members[0].template.spec.containers[0].env[0].valueFrom"
        ".secretKeyReff: unknown field (did you mean 'secretKeyRef'?)",
    ),
    ErrorCase(
        "a device-plugin GPU beside the DRA claim, which placement would not count",
        parse_deployment,
        md(
            engines=[
                {
                    "name": "e",
                    "members": [
                        {"nodeSelector": GPU, "template": pod_with({"limits": {"memory": "8Gi", "nvidia.com/gpu": 8}})}
                    ],
                }
            ]
        ),
        "spec.template.spec.engines[0].members[0].template.spec.containers[0].resources.limits: extended resources "
        "are not allowed: nvidia.com/gpu (only cpu, memory, ephemeral-storage and hugepages-*); ask for GPUs and "
        "other devices in the member's nodeSelector.devices, which placement counts, so a device plugin cannot take "
        "a node's devices promised to other replicas",
    ),
    ErrorCase(
        "any extended resource a gang worker requests, not only GPUs, named in order",
        parse_deployment,
        md(
            engines=[
                {
                    "name": "g",
                    "members": [
                        {"role": "Leader", "template": pod()},
                        {
                            "role": "Worker",
                            "nodeSelector": GPU,
                            "template": pod_with({"requests": {"rdma/ib": 1, "amd.com/gpu": 1, "cpu": "4"}}),
                        },
                    ],
                }
            ]
        ),
        "spec.template.spec.engines[0].members[1].template.spec.containers[0].resources.requests: extended resources "
        "are not allowed: amd.com/gpu, rdma/ib (only cpu, memory, ephemeral-storage and hugepages-*); ask for GPUs "
        "and other devices in the member's nodeSelector.devices, which placement counts, so a device plugin cannot "
        "take a node's devices promised to other replicas",
    ),
    ErrorCase(
        "a cluster stack Modelplane does not define",
        parse_cluster,
        {"metadata": {"name": "c"}, "spec": {"stack": "Grove"}},
        "spec.stack: Input should be 'Standard' or 'Dynamo'",
    ),
    ErrorCase(
        "a misspelt cluster field names the declared one",
        parse_cluster,
        {"metadata": {"name": "c"}, "spec": {"nodepools": []}},
        "spec.nodepools: unknown field (did you mean 'nodePools'?)",
    ),
    ErrorCase(
        "a replica with a malformed index label",
        parse_replica,
        {
            **replica_manifest(replica()),
            "metadata": {"name": "r", "labels": {"modelplane.ai/deployment": "d", "modelplane.ai/replica-index": "x"}},
        },
        "metadata.labels[modelplane.ai/replica-index]: must be a decimal number from 0 to 99999 in ASCII digits, "
        "got 'x'",
    ),
    ErrorCase(
        "a cluster with a DRA device lacking a class",
        parse_cluster,
        {
            "metadata": {"name": "c"},
            "spec": {"nodePools": [{"name": "p", "nodes": 1, "devices": [{"name": "g", "driver": "d"}]}]},
        },
        "spec.nodePools[0].devices[0]: a DRA device needs a deviceClassName",
    ),
    ErrorCase(
        "a published pool list with a malformed entry",
        parse_cluster,
        {"metadata": {"name": "c"}, "spec": {}, "status": {"gpuPools": [{"name": "p", "nodes": 1.5}]}},
        "status.gpuPools[0].nodes: must be a whole number, got 1.5",
    ),
    ErrorCase(
        "a cluster with a malformed node pool and a null published pool list",
        parse_cluster,
        {"metadata": {"name": "c"}, "spec": {"nodePools": [{"name": "p", "nodes": -1}]}, "status": {"gpuPools": None}},
        "spec.nodePools[0].nodes: Input should be greater than or equal to 0",
    ),
    ErrorCase(
        "a device attribute string longer than the XRD allows",
        parse_cluster,
        {
            "metadata": {"name": "c"},
            "spec": {
                "nodePools": [
                    {
                        "name": "p",
                        "nodes": 1,
                        "devices": [
                            {
                                "name": "g",
                                "driver": "d",
                                "deviceClassName": "d",
                                "attributes": {"t": {"string": "a" * 254}},
                            }
                        ],
                    }
                ]
            },
        },
        "spec.nodePools[0].devices[0].attributes.t.string: String should have at most 253 characters",
    ),
    ErrorCase(
        "an explicit model name longer than the XRD allows",
        parse_deployment,
        md(model={"uri": "hf://Qwen/Qwen3-8B", "name": "a" * 254}),
        "spec.template.spec.model.name: String should have at most 253 characters",
    ),
    ErrorCase(
        "a capacity number too large to publish as a quantity the XRD accepts",
        parse_cluster,
        {
            "metadata": {"name": "c"},
            "spec": {
                "nodePools": [
                    {
                        "name": "p",
                        "nodes": 1,
                        "devices": [
                            {
                                "name": "g",
                                "driver": "d",
                                "deviceClassName": "d",
                                "capacity": {"memory": {"value": 1.79e308}},
                            }
                        ],
                    }
                ]
            },
        },
        "spec.nodePools[0].devices[0].capacity.memory.value: String should have at most 64 characters",
    ),
    ErrorCase(
        "a KServe version replicas cannot be rendered for",
        parse_cluster,
        {"metadata": {"name": "c"}, "spec": {"kserve": {"version": "v0.18"}}},
        "spec.kserve.version: KServe 'v0.18' is not a version replicas can be rendered for: "
        'use one of 0.16, 0.17, 0.18, 0.19, 0.20 or a later minor version such as "0.21" (rendered as 0.20), quoted',
    ),
    ErrorCase(
        "an unquoted KServe version",
        parse_cluster,
        {"metadata": {"name": "c"}, "spec": {"kserve": {"version": 0.2}}},
        'spec.kserve.version: 0.2 is a number (YAML reads 0.20 as 0.2): write the version quoted, e.g. "0.20"',
    ),
    ErrorCase(
        "a replica for a KServe version replicas cannot be rendered for",
        parse_replica,
        {
            "metadata": {"name": "r", "namespace": "a"},
            "spec": {
                "clusterName": "c",
                "kserve": {"version": "0.15"},
                "engines": [{"name": "e", "members": [{"nodePoolName": "p", "template": pod()}]}],
            },
        },
        "spec.kserve.version: KServe '0.15' is not a version replicas can be rendered for: "
        'use one of 0.16, 0.17, 0.18, 0.19, 0.20 or a later minor version such as "0.21" (rendered as 0.20), quoted',
    ),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_spec_errors_name_the_field(case: ErrorCase) -> None:
    with pytest.raises(SpecError) as err:
        case.parse(case.obj)
    assert str(err.value) == case.want


def test_a_deployment_keeps_the_native_resources_of_its_engine_container() -> None:
    resources = {
        "limits": {"cpu": "8", "memory": "64Gi", "ephemeral-storage": "100Gi", "hugepages-2Mi": "1Gi"},
        "requests": {"cpu": "4", "memory": "64Gi", "hugepages-1Gi": "2Gi"},
    }
    d = parse_deployment(
        md(engines=[{"name": "e", "members": [{"nodeSelector": GPU, "template": pod_with(resources)}]}])
    )
    assert d.engines[0].members[0].template == pod_with(resources)


def test_every_invalid_sample_is_rejected_by_the_parsers_too() -> None:
    parsers = {"ModelDeployment": parse_deployment, "InferenceCluster": parse_cluster, "ModelReplica": parse_replica}
    accepted = []
    for path in sorted((SAMPLES.parent / "invalid").glob("*.yaml")):
        obj = yaml.safe_load(path.read_text())
        try:
            parsers[obj["kind"]](obj)
        except SpecError:
            continue
        accepted.append(path.stem)
    assert accepted == []


def test_a_cluster_that_publishes_its_pools_is_read_from_them_and_its_node_pools_are_not_checked() -> None:
    published = {"gpuPools": [{"name": "p", "nodes": 2}]}
    bad_pools = {"metadata": {"name": "c"}, "spec": {"nodePools": [{"name": "P", "nodes": -1}]}, "status": published}
    no_pools = {"metadata": {"name": "c"}, "spec": {}, "status": published}
    assert (parse_cluster(bad_pools), parse_cluster(no_pools).pools) == (
        parse_cluster(no_pools),
        (m.NodePool(name="p", nodes=2),),
    )


@pytest.mark.parametrize(
    ("placement", "want"),
    [
        ({}, m.SpreadPolicy.PREFERRED),
        ({"placement": {}}, m.SpreadPolicy.PREFERRED),
        ({"placement": {"spread": "Strict"}}, m.SpreadPolicy.STRICT),
        ({"placement": {"spread": "Preferred"}}, m.SpreadPolicy.PREFERRED),
    ],
)
def test_placement_spread_defaults_to_preferred(placement: dict[str, Any], want: m.SpreadPolicy) -> None:
    assert parse_deployment(md(**placement), namespace_labels={}).spread is want


def test_an_unknown_spread_policy_is_a_spec_error() -> None:
    with pytest.raises(SpecError) as err:
        parse_deployment(md(placement={"spread": "Always"}), namespace_labels={})
    assert str(err.value).startswith("spec.template.spec.placement.spread: ")


def test_a_devices_pool_is_parsed_and_published_with_its_packing() -> None:
    ic = {
        "metadata": {"name": "c"},
        "spec": {
            "nodePools": [
                {
                    "name": "l4",
                    "nodes": 2,
                    "packing": "Devices",
                    "devices": [{"name": "gpu", "driver": "d", "deviceClassName": "d", "count": 4}],
                },
                {
                    "name": "h100",
                    "nodes": 1,
                    "devices": [{"name": "gpu", "driver": "d", "deviceClassName": "d", "count": 8}],
                },
            ]
        },
    }
    published = gpu_pools_status(ic)
    assert (
        [p.get("packing") for p in published],
        [p.packing for p in parse_cluster(ic).pools],
        [p.packing for p in parse_cluster({**ic, "status": {"gpuPools": published}}).pools],
    ) == (
        [None, "Devices"],  # sorted by name; a Nodes pool is published as Modelplane publishes it
        [m.PoolPacking.NODES, m.PoolPacking.DEVICES],
        [m.PoolPacking.NODES, m.PoolPacking.DEVICES],
    )


@pytest.mark.parametrize(
    ("placement", "want"),
    [
        ({}, (m.SpreadPolicy.PREFERRED, True)),
        ({"placement": {"moves": "Never"}}, (m.SpreadPolicy.PREFERRED, False)),
        ({"placement": {"spread": "Strict", "moves": "Allowed"}}, (m.SpreadPolicy.STRICT, True)),
    ],
)
def test_placement_moves_default_to_allowed(placement: dict[str, Any], want: tuple[m.SpreadPolicy, bool]) -> None:
    d = parse_deployment(md(**placement), namespace_labels={})
    assert (d.spread, d.movable) == want
