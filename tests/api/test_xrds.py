"""The XRDs and Compositions validate, valid sample XRs pass them and each invalid one fails for its reason."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.validator import ROOT, run_validator

SAMPLES = Path(__file__).parent / "samples"
APIS = sorted((ROOT / "apis").glob("*/*.yaml"))
VALID = sorted((SAMPLES / "valid").glob("*.yaml"))
INVALID = sorted((SAMPLES / "invalid").glob("*.yaml"))

_HEADER = re.compile(r"^(OK|FAIL)\s+\S+ \[(?P<file>[^#\]]+)#\d+\]")


@dataclass(frozen=True)
class Report:
    status: str
    errors: tuple[str, ...]


def _validate(files: list[Path]) -> dict[str, Report]:
    out = run_validator(*files)
    reports: dict[str, Report] = {}
    current: str | None = None
    for line in out.stdout.splitlines():
        if m := _HEADER.match(line):
            current = Path(m["file"]).name
            reports[current] = Report(status=m[1], errors=())
        elif current and line.strip().startswith("error:"):
            r = reports[current]
            reports[current] = Report(status=r.status, errors=(*r.errors, line.strip().removeprefix("error: ")))
    assert reports, out.stdout + out.stderr
    return reports


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return _validate([*APIS, *VALID, *INVALID])


@pytest.mark.parametrize("path", APIS + VALID, ids=lambda p: f"{p.parent.name}/{p.name} is valid")
def test_valid_documents_pass(reports: dict[str, Report], path: Path) -> None:
    assert reports[path.name] == Report(status="OK", errors=())


@dataclass(frozen=True)
class Case:
    name: str
    file: str
    want: str  # the one error the validator reports contains this


CASES = [
    Case(
        "a queue name is rendered into a pod label, so it holds at most 63 characters",
        "md-queue-longer-than-a-label",
        "spec.template.spec.scheduling.queue: 'qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq' is too long",
    ),
    Case("a queue name is a KAI Queue's name", "md-queue-not-a-name", "scheduling.queue: 'Team_A' does not match"),
    Case(
        "a deployment may not use Kubernetes' system-* priority classes",
        "md-system-priority-class",
        "priorityClassName: CEL validation failed: priority classes named system-* are Kubernetes' own",
    ),
    Case(
        "a priority class name is a PriorityClass's name",
        "md-priority-class-not-a-name",
        "priorityClassName: 'High Priority' does not match",
    ),
    Case("a cluster's default queue is bounded too", "ic-default-queue-too-long", "spec.kai.defaultQueue: 'qqqq"),
    Case(
        "a cluster's stack is Modelplane's Standard or Dynamo",
        "ic-stack-unknown",
        "spec.stack: 'Grove' is not one of ['Standard', 'Dynamo']",
    ),
    Case(
        "a cluster cannot hand a namespace a system-* priority class",
        "ic-namespace-allows-system-priority",
        "spec.kai.namespaces[0].priorityClassNames[0]: CEL validation failed: priority classes named system-*",
    ),
    Case(
        "a namespace is listed once",
        "ic-duplicate-kai-namespace",
        "spec.kai.namespaces[1]: duplicate entry for map key(s) namespace='team-a'",
    ),
    Case("replicas below zero are rejected", "md-negative-replicas", "spec.replicas: -1 is less than the minimum of 0"),
    Case("an empty engine list is rejected", "md-no-engines", "spec.template.spec.engines: [] should be non-empty"),
    Case("more than eight engines are rejected", "md-nine-engines", "spec.template.spec.engines: [{'name': 'e0'"),
    Case(
        "engine names are list-map keys",
        "md-duplicate-engine-names",
        "engines[1]: duplicate entry for map key(s) name='a'",
    ),
    Case(
        "an engine name must be a DNS label",
        "md-engine-name-not-dns-label",
        "engines[0].name: 'Main_Engine' does not match",
    ),
    Case("copies start at one", "md-zero-copies", "engines[0].copies: 0 is less than the minimum of 1"),
    Case("copies stop at 64", "md-too-many-copies", "engines[0].copies: 65 is greater than the maximum of 64"),
    Case(
        "a phase needs PrefillDecode serving",
        "md-phase-in-unified-mode",
        "engine phase may only be set when serving.mode is PrefillDecode",
    ),
    Case(
        "PrefillDecode takes one Decode engine",
        "md-prefill-decode-two-decodes",
        "needs exactly one engine with phase Decode",
    ),
    Case(
        "PrefillDecode needs a Decode engine",
        "md-prefill-decode-without-decode",
        "needs exactly one engine with phase Decode",
    ),
    Case(
        "PrefillDecode engines all carry a phase",
        "md-prefill-decode-extra-engine",
        "PrefillDecode serving needs a phase on every engine",
    ),
    Case(
        "two Standalone members are rejected",
        "md-two-standalone-members",
        "an engine has exactly one Standalone member, or one Leader and one Worker member",
    ),
    Case(
        "a Leader needs a Worker",
        "md-leader-without-worker",
        "an engine has exactly one Standalone member, or one Leader and one Worker member",
    ),
    Case(
        "worker settings belong to the Worker",
        "md-worker-on-leader",
        "members[0]: CEL validation failed: worker may only be set on a Worker member",
    ),
    Case("worker.nodes stops at 63", "md-worker-nodes-above-63", "worker.nodes: 64 is greater than the maximum of 63"),
    Case(
        "an engine needs a member with a nodeSelector",
        "md-no-node-selector",
        "at least one member of an engine needs a nodeSelector",
    ),
    Case(
        "more than sixteen device requests are rejected",
        "md-seventeen-device-requests",
        "nodeSelector.devices: [{'name': 'd0'",
    ),
    Case(
        "device request names are list-map keys",
        "md-duplicate-device-requests",
        "devices[1]: duplicate entry for map key(s) name='gpu'",
    ),
    Case(
        "a device request asks for at least one device",
        "md-zero-device-count",
        "devices[0].count: 0 is less than the minimum of 1",
    ),
    Case(
        "a device request needs a selector",
        "md-device-without-selectors",
        "devices[0].selectors: [] should be non-empty",
    ),
    Case(
        "constraints name the member's requests",
        "md-constraint-names-unknown-request",
        "constraints may only name this member's device requests",
    ),
    Case(
        "template labels under modelplane.ai/ are reserved",
        "md-reserved-template-label",
        "spec.template.metadata: CEL validation failed: label keys under modelplane.ai/ are reserved",
    ),
    Case(
        "pod labels under modelplane.ai/ are reserved",
        "md-reserved-pod-label",
        "template.metadata: CEL validation failed: label keys under modelplane.ai/ are reserved",
    ),
    Case(
        "toleration operators are Exists or Equal",
        "md-toleration-bad-operator",
        "tolerations[0].operator: 'Gt' is not one of ['Exists', 'Equal']",
    ),
    Case(
        "toleration effects are NoSchedule, NoExecute or empty",
        "md-toleration-bad-effect",
        "tolerations[0].effect: 'PreferNoSchedule' is not one of",
    ),
    Case("an Equal toleration needs a key", "md-equal-toleration-without-key", "an Equal toleration needs a key"),
    Case(
        "an Exists toleration takes no value", "md-exists-toleration-with-value", "an Exists toleration takes no value"
    ),
    Case(
        "an In expression needs values",
        "md-selector-in-without-values",
        "operators In and NotIn need at least one value",
    ),
    Case(
        "selector operators are the Kubernetes four",
        "md-selector-bad-operator",
        "operator: 'Gt' is not one of ['In', 'NotIn', 'Exists', 'DoesNotExist']",
    ),
    Case(
        "the container is named engine",
        "md-container-not-named-engine",
        "containers[0].name: 'vllm' is not one of ['engine']",
    ),
    Case("a member has one container", "md-two-containers", "is too long"),
    Case(
        "an env var has one source",
        "md-env-two-sources",
        "valueFrom needs exactly one of secretKeyRef, configMapKeyRef, fieldRef",
    ),
    Case(
        "an engine may not ask a device plugin for GPUs, which placement would not count",
        "md-device-plugin-gpu-limit",
        "containers[0].resources.limits: CEL validation failed: extended resources (nvidia.com/gpu and any other name",
    ),
    Case(
        "the pod template is curated",
        "md-pod-spec-field-outside-curated-shape",
        "template.spec.hostNetwork: unknown field",
    ),
    Case(
        "a misspelt deployment field is rejected",
        "md-unknown-spec-field",
        "spec.template.spec.toleration: unknown field",
    ),
    Case(
        "a misspelt cluster field is rejected, Modelplane's fields notwithstanding",
        "ic-misspelt-node-pools",
        "spec.nodepools: unknown field",
    ),
    Case(
        "a pool takes devices or an InferenceClass, not both",
        "ic-pool-devices-and-class",
        "a pool lists its devices or names an InferenceClass (className), not both",
    ),
    Case(
        "a pool says how many nodes it has",
        "ic-pool-without-nodes",
        "a pool needs nodes (or Modelplane's className, nodeCount or maxNodeCount)",
    ),
    Case(
        "nodes and Modelplane's nodeCount do not mix",
        "ic-pool-nodes-and-node-count",
        "nodes replaces Modelplane's nodeCount and maxNodeCount: set one or the other",
    ),
    Case(
        "Modelplane's cluster source is checked as Modelplane checks it",
        "ic-cluster-bad-source",
        "spec.cluster.source: 'Kind' is not one of ['GKE', 'EKS', 'AKS', 'Nebius', 'Vultr', 'Existing']",
    ),
    Case(
        "taints are list-map keyed by key and effect",
        "ic-duplicate-taint",
        "taints[1]: duplicate entry for map key(s) key='k', effect='NoSchedule'",
    ),
    Case(
        "taint effects are NoSchedule or NoExecute",
        "ic-taint-bad-effect",
        "taints[0].effect: 'PreferNoSchedule' is not one of ['NoSchedule', 'NoExecute']",
    ),
    Case(
        "a DRA device needs a device class",
        "ic-dra-device-without-class",
        "devices[0]: CEL validation failed: a DRA device needs a deviceClassName",
    ),
    Case(
        "a device claim is DRA or Synthetic", "ic-bad-claim-kind", "claim: 'Virtual' is not one of ['DRA', 'Synthetic']"
    ),
    Case(
        "node pool names are list-map keys",
        "ic-duplicate-pools",
        "nodePools[1]: duplicate entry for map key(s) name='h200'",
    ),
    Case(
        "device names in a pool are list-map keys",
        "ic-duplicate-devices",
        "devices[1]: duplicate entry for map key(s) name='gpu'",
    ),
    Case(
        "an attribute has one typed value",
        "ic-attribute-two-types",
        "an attribute has exactly one of string, version, bool, int",
    ),
    Case("a pool has no negative nodes", "ic-negative-nodes", "nodes: -1 is less than the minimum of 0"),
    Case("a version attribute is a semantic version", "ic-version-not-semver", "'560.35.03' does not match"),
    Case("a capacity is a Kubernetes quantity", "ic-capacity-not-quantity", "'80GB' does not match"),
    Case("a capacity exponent has at most three digits", "ic-capacity-huge-exponent", "'1e999999999' does not match"),
    Case("topology levels need a topology", "ic-topology-level-without-topology", "topology levels need a topology"),
    Case("a KServe version is one we render for", "ic-kserve-version-unsupported", "'0.15' does not match"),
    Case("a KServe version is a 0.x minor, not a tag", "ic-kserve-version-malformed", "'v0.21' does not match"),
    Case("template label keys are Kubernetes label keys", "md-bad-label-key", "label keys must be [prefix/]name"),
    Case(
        "a replica member names its pool", "mr-member-without-pool", "members[0]: 'nodePoolName' is a required property"
    ),
    Case(
        "a resolved request names its device class",
        "mr-request-without-device-class",
        "deviceRequests[0]: 'deviceClassName' is a required property",
    ),
]


def test_every_invalid_sample_has_a_case() -> None:
    assert sorted(c.file for c in CASES) == sorted(p.stem for p in INVALID)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_invalid_samples_fail_with_one_error(reports: dict[str, Report], case: Case) -> None:
    report = reports[f"{case.file}.yaml"]
    assert report.status == "FAIL"
    assert len(report.errors) == 1, report.errors
    assert case.want in report.errors[0]
