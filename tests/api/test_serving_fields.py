"""The serving-stack fields travel from the ModelDeployment through the ModelReplica unchanged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml
from modelplane import model as m
from modelplane.api import parse_deployment, parse_replica, replica_manifest

SAMPLE = Path(__file__).parent / "samples" / "valid" / "deployment-serving-stack.yaml"
ROUTER = {"gateway": {"refs": [{"name": "inference", "namespace": "gateways"}]}, "route": {}, "scheduler": {}}


def test_the_deployment_parses_every_serving_field() -> None:
    d = parse_deployment(yaml.safe_load(SAMPLE.read_text()))
    decode = next(e for e in d.engines if e.name == "decode").members[0].template
    prefill = next(e for e in d.engines if e.name == "prefill").members[0].template
    assert (d.model, d.router, d.base_refs, d.tolerations, decode["spec"], prefill["spec"]) == (
        m.ModelRef(
            uri="hf://meta-llama/Llama-3.1-8B-Instruct", name="llama-3.1-8b-instruct", storage_secret_name="hf-token"
        ),
        ROUTER,
        ("team-vllm-tuning",),
        (m.Toleration(key="capacity-type", value="spot", effect=m.TaintEffect.NO_SCHEDULE),),
        {
            "containers": [
                {
                    "name": "engine",
                    "image": "registry.example.com/vllm:0.11.0-nonroot",
                    "securityContext": {"runAsUser": 1000, "runAsNonRoot": True},
                }
            ]
        },
        {"containers": [{"name": "engine", "args": ["--max-model-len=8192"]}]},
    )


def test_a_replica_keeps_router_base_refs_tolerations_and_credentials_through_its_manifest() -> None:
    replica = m.ModelReplica(
        namespace="team-a",
        name="llama-pd-east-0-12345678",
        deployment="llama-pd",
        cluster="east",
        index=0,
        engines=(
            m.PlacedEngine(
                name="main",
                members=(
                    m.PlacedMember(
                        role=m.Role.STANDALONE, pool="h100", template={"spec": {"containers": [{"name": "engine"}]}}
                    ),
                ),
            ),
        ),
        provider_config_name="east",
        model=m.ModelRef(uri="hf://x/y", storage_secret_name="hf-token"),
    )
    full = replace(
        replica,
        router=ROUTER,
        base_refs=("a", "b"),
        tolerations=(m.Toleration(key="k", operator="Exists"), m.Toleration(key="s", value="v")),
    )
    assert [parse_replica(replica_manifest(r)) for r in (replica, full)] == [replica, full]
