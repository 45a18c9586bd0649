"""The validator on our own samples: each case is one object and every report it yields, compared whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.kubeschema.structural import field_path
from tests.kubeschema.validate import ObjectReport, Validator

SAMPLES = Path(__file__).parent / "samples"


@cache
def validator() -> Validator:
    return Validator(xrds=[SAMPLES / "xrds.yaml"])


def widget(name: str = "w", *, namespace: str | None = "team", **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": "example.org/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 2, **spec}}


def gadget(*, namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    meta = {"name": "g"} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": meta, "spec": spec}


def wrapped(manifest: dict[str, Any]) -> dict[str, Any]:
    """A namespaced provider-kubernetes Object around `manifest`."""
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "wrapper", "namespace": "team"},
        "spec": {
            "forProvider": {"manifest": manifest},
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "c"},
        },
    }


def podgroup(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup", "metadata": {"name": "pg"}, "spec": spec}


def llmis(**spec: Any) -> dict[str, Any]:
    body = {"model": {"uri": "hf://org/model"}, **spec}
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "LLMInferenceService",
        "metadata": {"name": "m"},
        "spec": body,
    }


def claim_template(**request: Any) -> dict[str, Any]:
    exactly = {"deviceClassName": "gpu.nvidia.com", **request}
    devices = {"requests": [{"name": "gpu", "exactly": exactly}]}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "claim", "namespace": "inference"},
        "spec": {"spec": {"devices": devices}},
    }


def xrd(rule: str) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-validations": [{"rule": rule}]}},
    }
    return {
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "things.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "Thing", "plural": "things"},
            "versions": [{"name": "v1", "served": True, "referenceable": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


@dataclass(frozen=True)
class Got:
    """What the test compares of one report."""

    label: str  # Kind/name
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    transition_rules: int = 0
    schema: bool = True  # some schema knows the kind


def got(report: ObjectReport) -> Got:
    return Got(
        label=report.label.split(" [")[0],
        errors=tuple(report.errors),
        warnings=tuple(report.warnings),
        transition_rules=report.transition_rules,
        schema=report.schema is not None,
    )


@dataclass(frozen=True)
class Case:
    name: str
    obj: Any
    want: list[Got] = field(default_factory=list[Got])


W = "Widget/w"
BLOCKED = "CEL rules not evaluated: the errors above stop the API server before them"

CASES = [
    Case("a valid composite resource passes", widget(), [Got(W)]),
    Case(
        "an unknown field is pruned by the API server, so it is an error",
        widget(colour="red"),
        [Got(W, errors=("spec.colour: unknown field: not in the schema, the API server would prune or reject it",))],
    ),
    Case(
        "an unknown field names the closest declared one",
        widget(sise=3),
        [
            Got(
                W,
                errors=(
                    "spec.sise: unknown field (did you mean 'size'?): not in the schema, the API server would prune or reject it",
                ),
            )
        ],
    ),
    Case(
        "a wrong type is an error and stops CEL rules, as on the API server",
        widget(size="two"),
        [Got(W, errors=("spec.size: 'two' is not of type 'integer'",), warnings=(BLOCKED,))],
    ),
    Case("a value below its minimum", widget(size=0), [Got(W, errors=("spec.size: 0 is less than the minimum of 1",))]),
    Case(
        "a missing required field",
        {**widget(), "spec": {"mode": "Fast"}},
        [Got(W, errors=("spec: 'size' is a required property",), warnings=(BLOCKED,))],
    ),
    Case("a default is applied before the rules run (mode defaults to Fast)", widget(), [Got(W)]),
    Case(
        "a CEL rule that returns false reports its message",
        widget(mode="Slow"),
        [Got(W, errors=("spec: CEL validation failed: a mode other than Fast needs a reason",))],
    ),
    Case(
        "messageExpression writes the message",
        widget(limit=1),
        [Got(W, errors=("spec: CEL validation failed: limit 1 is below size 2",))],
    ),
    Case(
        "fieldPath points the failure at the field",
        widget(primary="a", backup="a"),
        [Got(W, errors=("spec.backup: CEL validation failed: the backup must differ from the primary",))],
    ),
    Case(
        "a root rule sees metadata.name",
        widget("forbidden"),
        [Got("Widget/forbidden", errors=("(root): CEL validation failed: this name is reserved",))],
    ),
    Case(
        "a rule that cannot be evaluated is an error, as on the API server",
        widget(primary="a", backup="a", window="2H"),
        [
            Got(
                W,
                errors=(
                    "spec.backup: CEL validation failed: the backup must differ from the primary",
                    "spec.window: CEL validation failed: window is lower case",
                    "spec.window: CEL rule error: String to Duration conversion failed evaluating rule: window is at most an hour",
                ),
            )
        ],
    ),
    Case("the strings library is there", widget(window="30m"), [Got(W)]),
    Case(
        "a transition rule (oldSelf) is not evaluated on create, and is counted",
        widget(owner="me"),
        [Got(W, transition_rules=1)],
    ),
    Case(
        "a Kubernetes function this validator lacks is an error, never a pass",
        widget(tags=["a", "b"]),
        [
            Got(
                W,
                errors=(
                    "spec.tags: CEL rule error: rule 'self.isSorted()' does not compile here: "
                    "<input>:1:14: undeclared reference to 'isSorted' (in container '')",
                ),
            )
        ],
    ),
    Case("isQuantity accepts a quantity", widget(threshold="80Gi"), [Got(W)]),
    Case(
        "isQuantity refuses what is not one",
        widget(threshold="80GB"),
        [Got(W, errors=("spec.threshold: CEL validation failed: threshold is an int or a quantity",))],
    ),
    Case(
        "property names are escaped as the API server escapes them (x-port -> x__dash__port)",
        widget(ports=[{"name": "http", "x-port": 0}]),
        [Got(W, errors=("spec.ports[0]: CEL validation failed: x-port is positive",))],
    ),
    Case(
        "a list-map key appears once",
        widget(ports=[{"name": "http"}, {"name": "http"}]),
        [Got(W, errors=("spec.ports[1]: duplicate entry for map key(s) name='http' (same as index 0)",))],
    ),
    Case(
        "a list-set entry appears once",
        {**widget(), "spec": {"size": 2, "tags": ["a", "a"]}},
        [
            Got(
                W,
                errors=(
                    "spec.tags[1]: duplicate entry 'a' in a list-type=set list",
                    "spec.tags: CEL rule error: rule 'self.isSorted()' does not compile here: "
                    "<input>:1:14: undeclared reference to 'isSorted' (in container '')",
                ),
            )
        ],
    ),
    Case("a pattern is matched with RE2, \\p{Lu} included", widget(code="Abc"), [Got(W)]),
    Case(
        "a value not matching an RE2 pattern",
        widget(code="abc"),
        [Got(W, errors=("spec.code: 'abc' does not match '^\\\\p{Lu}'",))],
    ),
    Case("a null field is pruned, not an error", widget(note=None), [Got(W)]),
    Case(
        "a label key must be a qualified name",
        {**widget(), "metadata": {"name": "w", "labels": {"bad key": "v"}}},
        [
            Got(
                W,
                errors=(
                    "metadata.labels: key 'bad key' is not a qualified name: [DNS subdomain prefix/]name, the name "
                    "at most 63 alphanumerics, '-', '_' or '.', beginning and ending with an alphanumeric",
                ),
            )
        ],
    ),
    Case(
        "a label value must be a label value",
        {**widget(), "metadata": {"name": "w", "labels": {"team": "a" * 64}}},
        [
            Got(
                W,
                errors=(
                    f"metadata.labels.team: '{'a' * 64}' is not a label value (at most 63 alphanumerics, '-', '_' "
                    "or '.', beginning and ending with an alphanumeric)",
                ),
            )
        ],
    ),
    Case(
        "a name must be a DNS subdomain",
        widget("Widget_1"),
        [
            Got(
                "Widget/Widget_1",
                errors=(
                    "metadata.name: 'Widget_1' is not a DNS-1123 subdomain (lower-case "
                    "alphanumerics, '-' and '.', at most 253 characters)",
                ),
            )
        ],
    ),
    Case(
        "a composite resource name is at most 63 characters (Crossplane uses it as a label value)",
        widget("w" * 64),
        [Got(f"Widget/{'w' * 64}", errors=(f"metadata.name: '{'w' * 64}' is too long",), warnings=(BLOCKED,))],
    ),
    Case(
        "Crossplane's own fields are accepted under spec.crossplane",
        widget(crossplane={"compositionRef": {"name": "c"}, "compositionUpdatePolicy": "Manual"}),
        [Got(W)],
    ),
    Case(
        "and nothing else is",
        widget(crossplane={"compositionRefs": {"name": "c"}}),
        [
            Got(
                W,
                errors=(
                    "spec.crossplane.compositionRefs: unknown field (did you mean 'compositionRef'?): not in the "
                    "schema, the API server would prune or reject it",
                ),
            )
        ],
    ),
    Case(
        "fields an XRD declares outside spec and status are dropped by Crossplane",
        {**widget(), "extra": "x"},
        [Got(W, errors=("extra: unknown field: not in the schema, the API server would prune or reject it",))],
    ),
    Case(
        "the scale subresource's replica paths hold int32 values",
        widget(count=2**31),
        [Got(W, errors=("spec.count: 2147483648 should be a non-negative int32 (scale subresource)",))],
    ),
    Case("a cluster-scoped composite resource without a namespace", gadget(colour="red"), [Got("Gadget/g")]),
    Case(
        "a namespace on a cluster-scoped composite resource is dropped by the API server",
        gadget(namespace="team"),
        [Got("Gadget/g", errors=("metadata.namespace: set on a cluster-scoped kind: the API server drops it",))],
    ),
    Case(
        "an apiVersion the kind does not have",
        {**widget(), "apiVersion": "example.org/v2"},
        [
            Got(
                W,
                errors=(
                    f"apiVersion 'example.org/v2': Widget has no version 'v2' in XRD {SAMPLES / 'xrds.yaml'}#1 (has v1)",
                ),
            )
        ],
    ),
    Case(
        "a kind no schema defines fails",
        {"apiVersion": "example.org/v1", "kind": "Sprocket", "metadata": {"name": "s"}},
        [Got("Sprocket/s", schema=False)],
    ),
    Case(
        "the manifest a provider-kubernetes Object wraps is validated as an object of its own",
        wrapped(llmis(replicas="two")),
        [
            Got("Object/wrapper"),
            Got(
                "LLMInferenceService/m", errors=("spec.replicas: 'two' is not of type 'integer'",), warnings=(BLOCKED,)
            ),
        ],
    ),
    Case(
        "a wrapped manifest without a name takes the Object's, as the provider does",
        wrapped({**claim_template(), "metadata": {"namespace": "inference"}}),
        [Got("Object/wrapper"), Got("ResourceClaimTemplate/wrapper")],
    ),
    Case(
        "a built-in kind rejects unknown fields (strict field validation)",
        claim_template(counts=1),
        [
            Got(
                "ResourceClaimTemplate/claim",
                errors=(
                    "spec.spec.devices.requests[0].exactly.counts: unknown field (did you "
                    "mean 'count'?): not in the schema, the API server would prune or reject it",
                ),
            )
        ],
    ),
    Case(
        "a built-in quantity follows the quantity grammar",
        claim_template(capacity={"requests": {"memory": "80GB"}}),
        [
            Got(
                "ResourceClaimTemplate/claim",
                errors=(
                    "spec.spec.devices.requests[0].exactly.capacity.requests.memory: "
                    "'80GB' is not valid under any of the given schemas ('80GB' does not "
                    "match '^(\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))(([KMGTPE]i)|"
                    "[numkMGTPE]|([eE](\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))))?$' / "
                    "'80GB' is not of type 'number')",
                ),
            )
        ],
    ),
    Case(
        "KAI: every leaf subgroup needs minMember (webhook)",
        podgroup(minSubGroup=2, subGroups=[{"name": "a", "minMember": 1}, {"name": "b"}]),
        [
            Got(
                "PodGroup/pg",
                errors=("spec.subGroups['b']: minMember is required on a leaf SubGroup (KAI PodGroup webhook)",),
            )
        ],
    ),
    Case(
        "KAI: a parent must exist (webhook)",
        podgroup(subGroups=[{"name": "a", "parent": "root", "minMember": 1}]),
        [Got("PodGroup/pg", errors=("spec.subGroups: parent 'root' of 'a' was not found (KAI PodGroup webhook)",))],
    ),
    Case(
        "KAI: minSubGroup above the number of subgroups is only a warning on create",
        podgroup(minSubGroup=3, subGroups=[{"name": "a", "minMember": 1}, {"name": "b", "minMember": 1}]),
        [Got("PodGroup/pg", warnings=("spec: minSubGroup 3 exceeds the 2 root SubGroup(s) (KAI PodGroup webhook)",))],
    ),
    Case(
        "KServe: a worker needs data or pipeline parallelism (webhook)",
        llmis(worker={"containers": []}, parallelism={"tensor": 8}),
        [
            Got(
                "LLMInferenceService/m",
                errors=(
                    "spec.worker: when worker is specified, parallelism must be data or "
                    "pipeline parallelism (KServe LLMInferenceService webhook)",
                ),
            )
        ],
    ),
    Case(
        "KServe: data and dataLocal go together (webhook)",
        llmis(prefill={"parallelism": {"data": 2}}),
        [
            Got(
                "LLMInferenceService/m",
                errors=(
                    "spec.prefill.parallelism: data and dataLocal must be set together "
                    "(KServe LLMInferenceService webhook)",
                ),
            )
        ],
    ),
    Case(
        "a Crossplane ClusterUsage needs `by` or a reason (its CRD's rule)",
        {
            "apiVersion": "protection.crossplane.io/v1beta1",
            "kind": "ClusterUsage",
            "metadata": {"name": "u"},
            "spec": {
                "of": {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "resourceRef": {"name": "c"}}
            },
        },
        [
            Got(
                "ClusterUsage/u",
                errors=('spec: CEL validation failed: either "spec.by" or "spec.reason" must be specified.',),
            )
        ],
    ),
    Case(
        "an XRD whose rule does not compile fails (Crossplane would create a CRD the API server refuses)",
        xrd("self.size() >"),
        [
            Got(
                "CompositeResourceDefinition/things.example.org",
                errors=(
                    "spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-validations[0].rule: "
                    "<input>:1:14: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
                    "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
                ),
                transition_rules=3,
            )
        ],
    ),
    Case(
        "an XRD whose rules compile passes (its CRD's three immutability rules are transition rules)",
        xrd("size(self) > 0"),
        [Got("CompositeResourceDefinition/things.example.org", transition_rules=3)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_validate(case: Case) -> None:
    assert [got(r) for r in validator().validate(case.obj, "case")] == case.want


def test_rule_field_paths_are_parsed_like_the_api_server() -> None:
    paths = [".backup", ".spec['a.b'].c", ".list[2].x", ".m['it\\'s']"]
    assert [field_path({"fieldPath": p}) for p in paths] == [
        ("backup",),
        ("spec", "a.b", "c"),
        ("list", 2, "x"),
        ("m", "it's"),
    ]
