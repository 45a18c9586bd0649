"""An update of any example never hits an immutable field: what cannot change in place gets a new name.

Immutable after create: a ResourceClaimTemplate's spec (resource.k8s.io validation); an LLMIS's total
parallelism size (KServe webhook, `validateImmutableParallelism`); a single-node workload's Deployment
selector, which KServe builds from the workload's pod labels (see kserve.deployment_selector); and the
manifest inside a provider-kubernetes Object (a renamed manifest under the same Object would orphan the
old one). For every example replica and every edit a user makes, render before and after: objects that
keep their name must agree on all of those, and edits that KServe can roll in place must rename nothing
(no needless restart).
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from modelplane.model import ModelReplica, PlacedEngine, PlacedMember, Role, TaintEffect, Toleration
from modelplane.render import render_replica

from tests.conformance import examples, kserve

Edit = Callable[[ModelReplica], ModelReplica]


def _members(r: ModelReplica, change: Callable[[PlacedMember], PlacedMember]) -> ModelReplica:
    engines = tuple(replace(e, members=tuple(change(m) for m in e.members)) for e in r.engines)
    return replace(r, engines=engines)


def _engines(r: ModelReplica, change: Callable[[PlacedEngine], PlacedEngine]) -> ModelReplica:
    return replace(r, engines=tuple(change(e) for e in r.engines))


def _template(m: PlacedMember, **metadata: dict[str, str]) -> PlacedMember:
    return replace(m, template={**m.template, "metadata": {**m.template.get("metadata", {}), **metadata}})


def _container(m: PlacedMember, **fields: Any) -> PlacedMember:
    spec = dict(m.template["spec"])
    spec["containers"] = [{**spec["containers"][0], **fields}]
    return replace(m, template={**m.template, "spec": spec})


def _narrower_devices(m: PlacedMember) -> PlacedMember:
    requests = tuple(replace(d, selectors=(*d.selectors, 'device.driver != ""')) for d in m.device_requests)
    return replace(m, device_requests=requests)


def _one_more_worker(e: PlacedEngine) -> PlacedEngine:
    return replace(e, members=tuple(replace(m, worker_nodes=m.worker_nodes + 1) for m in e.members))


@dataclass(frozen=True)
class Change:
    name: str
    edit: Edit
    renames: frozenset[str]  # manifest kinds that must get a new name
    applies: Callable[[ModelReplica], bool] = lambda _: True


def _multi_node(r: ModelReplica) -> bool:
    return any(m.role is Role.WORKER for e in r.engines for m in e.members)


CHANGES = [
    Change("one more copy", lambda r: _engines(r, lambda e: replace(e, copies=e.copies + 1)), frozenset()),
    Change(
        "other engine args",
        lambda r: _members(
            r, lambda m: _container(m, args=[*m.template["spec"]["containers"][0].get("args", []), "--seed=7"])
        ),
        frozenset(),
    ),
    Change("another image", lambda r: _members(r, lambda m: _container(m, image="example.com/vllm:1")), frozenset()),
    Change(
        "a new toleration",
        lambda r: replace(r, tolerations=(*r.tolerations, Toleration(key="gpu-spot", effect=TaintEffect.NO_SCHEDULE))),
        frozenset(),
    ),
    Change("other deployment labels", lambda r: replace(r, labels={**r.labels, "cost-center": "42"}), frozenset()),
    Change("other pod annotations", lambda r: _members(r, lambda m: _template(m, annotations={"a": "b"})), frozenset()),
    Change(
        "a narrower device request",
        lambda r: _members(r, _narrower_devices),
        frozenset({"ResourceClaimTemplate"}),
    ),
    Change(
        "other pod labels",
        lambda r: _members(r, lambda m: _template(m, labels={"tier": "gold"})),
        frozenset({"LLMInferenceService"}),
    ),
    Change("another queue", lambda r: replace(r, queue=r.queue + "-b"), frozenset({"LLMInferenceService"})),
    Change(
        "one more worker node",
        lambda r: _engines(r, _one_more_worker),
        frozenset({"LLMInferenceService"}),
        applies=_multi_node,
    ),
]


def _immutable(manifest: dict[str, Any]) -> Any:
    kind = manifest["kind"]
    if kind == "ResourceClaimTemplate":
        return manifest["spec"]
    if kind == "LLMInferenceService":
        spec = manifest["spec"]
        prefill = spec.get("prefill")
        return {
            "size": kserve.group_size(spec.get("parallelism")),
            "prefill size": kserve.group_size(prefill.get("parallelism")) if prefill else None,
            "selector": kserve.deployment_selector(manifest, "main"),
            "prefill selector": kserve.deployment_selector(manifest, "prefill") if prefill else None,
        }
    return None


def _objects(r: ModelReplica) -> dict[str, dict[str, Any]]:
    return {o.manifest["metadata"]["name"]: o.manifest["spec"]["forProvider"]["manifest"] for o in render_replica(r)}


CASES = [
    (rendered.example, change)
    for name in examples.NAMES
    for rendered in examples.rendered(name)[:1]
    if rendered.manifests
    for change in CHANGES
    if change.applies(rendered.replica)
]


@pytest.mark.parametrize(("example", "change"), CASES, ids=[f"{e}: {c.name}" for e, c in CASES])
def test_an_update_never_hits_an_immutable_field(example: str, change: Change) -> None:
    before = examples.rendered(example)[0].replica
    old, new = _objects(before), _objects(change.edit(before))
    kept = sorted(set(old) & set(new))
    violations = [
        name
        for name in kept
        if (old[name]["kind"], old[name]["metadata"]["name"]) != (new[name]["kind"], new[name]["metadata"]["name"])
        or _immutable(old[name]) != _immutable(new[name])
    ]
    old_names = {(m["kind"], m["metadata"]["name"]) for m in old.values()}
    renamed = {m["kind"] for m in new.values() if (m["kind"], m["metadata"]["name"]) not in old_names}
    assert (violations, renamed) == ([], set(change.renames))
