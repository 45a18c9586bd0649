"""Validating-webhook rules the schemas do not carry, for the kinds we emit (create operation).

Validating admission runs after schema validation, so these see only schema-valid objects.

- KAI PodGroup: kai-scheduler/KAI-Scheduler pkg/apis/scheduling/v2alpha2/podgroup_webhook.go
  (d5bc503a). Errors: minMember and minSubGroup together (PodGroup or SubGroup), duplicate
  SubGroup names, a parent that does not exist, a cycle, minSubGroup on a leaf, no minMember on
  a leaf, minMember on a SubGroup with children. Warnings (accepted on create):
  minSubGroup above the number of (root) children.
- KServe LLMInferenceService: kserve/kserve
  pkg/apis/serving/v1alpha1/llm_inference_service_validation.go (aaac4e29): parallelism
  (worker needs data or pipeline parallelism; not both; data and dataLocal together; positive
  sizes), router cross-field rules (HTTPRoute refs vs inline spec vs gateway refs), traffic
  group/weight, scheduler replicas and config. Scaling, rollout, LoRA and managed-DRA annotation
  rules are not restated: nothing here emits those fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

Obj = Mapping[str, Any]
Found = tuple[list[str], list[str]]  # errors, warnings


def _map(value: Any) -> Obj:
    return cast("Obj", value) if isinstance(value, Mapping) else {}


def _maps(value: Any) -> list[Obj]:
    items = cast("list[Any]", value) if isinstance(value, list) else []
    return [cast("Obj", v) for v in items if isinstance(v, Mapping)]


def kai_podgroup(obj: Obj) -> Found:
    spec = _map(obj.get("spec"))
    if spec.get("minMember") is not None and spec.get("minSubGroup") is not None:
        return ["spec: minMember and minSubGroup are mutually exclusive"], []
    groups = _maps(spec.get("subGroups"))
    by_name: dict[Any, Obj] = {}
    for group in groups:
        if group.get("name") in by_name:
            return [f"spec.subGroups: duplicate subgroup name {group.get('name')!r}"], []
        by_name[group.get("name")] = group
    children: dict[Any, list[Any]] = {}
    for group in groups:
        parent = group.get("parent")
        if parent is None:
            continue
        if parent not in by_name:
            return [f"spec.subGroups: parent {parent!r} of {group.get('name')!r} was not found"], []
        children.setdefault(parent, []).append(group.get("name"))
    if _has_cycle(by_name):
        return ["spec.subGroups: cycle detected in subgroups"], []
    errors: list[str] = []
    warnings: list[str] = []
    for name in sorted(by_name, key=str):
        group, kids = by_name[name], children.get(name, [])
        where = f"spec.subGroups[{name!r}]"
        if group.get("minMember") is not None and group.get("minSubGroup") is not None:
            return [f"{where}: minMember and minSubGroup are mutually exclusive"], []
        if not kids:
            if group.get("minSubGroup") is not None:
                errors.append(f"{where}: minSubGroup cannot be set on a leaf SubGroup")
            if group.get("minMember") is None:
                errors.append(f"{where}: minMember is required on a leaf SubGroup")
        else:
            if group.get("minMember") is not None:
                errors.append(f"{where}: minMember cannot be set on a SubGroup with child SubGroups")
            wanted = group.get("minSubGroup")
            if isinstance(wanted, int) and wanted > len(kids):
                warnings.append(f"{where}: minSubGroup {wanted} exceeds its {len(kids)} child SubGroup(s)")
    roots = sum(1 for g in groups if g.get("parent") is None)
    wanted = spec.get("minSubGroup")
    if isinstance(wanted, int) and wanted > roots:
        warnings.append(f"spec: minSubGroup {wanted} exceeds the {roots} root SubGroup(s)")
    return errors, warnings


def _has_cycle(by_name: Mapping[Any, Obj]) -> bool:
    for start in by_name:
        seen: set[Any] = set()
        current: Any = start
        while current is not None and current in by_name:
            if current in seen:
                return True
            seen.add(current)
            current = by_name[current].get("parent")
    return False


def kserve_llmisvc(obj: Obj) -> Found:
    spec = _map(obj.get("spec"))
    errors = _parallelism("spec", spec)
    if "prefill" in spec:
        errors += _parallelism("spec.prefill", _map(spec.get("prefill")))
    router = _map(spec.get("router"))
    errors += _route(router) + _traffic(router) + _scheduler(_map(router.get("scheduler")))
    return errors, []


def _positive(value: Any) -> bool:
    return isinstance(value, int) and value > 0


def _parallelism(base: str, workload: Obj) -> list[str]:
    worker_needs = f"{base}.worker: when worker is specified, parallelism must be data or pipeline parallelism"
    if "worker" in workload and "parallelism" not in workload:
        return [worker_needs]
    if "parallelism" not in workload:
        return []
    par = _map(workload.get("parallelism"))
    data_parallel = _positive(par.get("data")) or _positive(par.get("dataLocal"))
    pipeline_parallel = _positive(par.get("pipeline"))
    errors: list[str] = []
    if "worker" in workload and not data_parallel and not pipeline_parallel:
        errors.append(worker_needs)
    if data_parallel and pipeline_parallel:
        errors.append(f"{base}.parallelism: pipeline and data parallelism (data or dataLocal) cannot be set together")
    if ("data" in par) != ("dataLocal" in par):
        errors.append(f"{base}.parallelism: data and dataLocal must be set together")
    for key in ("pipeline", "data", "dataLocal"):
        if key in par and not _positive(par[key]):
            errors.append(f"{base}.parallelism.{key}: must be greater than 0")
    return errors


def _route(router: Obj) -> list[str]:
    http = _map(_map(router.get("route")).get("http"))
    gateway = router.get("gateway")
    gateway_refs = bool(_map(gateway).get("refs"))
    errors: list[str] = []
    if http.get("refs") and http.get("spec") is not None:
        errors.append("spec.router.route.http: custom HTTPRoute refs and an inline route spec cannot be used together")
    if http.get("refs") and gateway is not None and not gateway_refs:
        errors.append("spec.router.route.http.refs: custom HTTPRoutes cannot be used with a managed gateway")
    if _map(http.get("spec")).get("parentRefs") and gateway_refs:
        errors.append(
            "spec.router.route.http.spec: a managed route spec with parentRefs cannot use custom gateway refs"
        )
    return errors


def _traffic(router: Obj) -> list[str]:
    route = _map(router.get("route"))
    group, weight = route.get("group") is not None, route.get("weight") is not None
    if not group and not weight:
        return []
    if router.get("ingress") is not None:
        return ["spec.router.route.group: traffic splitting requires Gateway API routing, not Ingress"]
    if group != weight:
        return ["spec.router.route: group and weight must be set together"]
    if _map(route.get("http")).get("refs"):
        return ["spec.router.route.group: traffic splitting cannot be used with custom HTTPRoute refs"]
    return []


def _scheduler(scheduler: Obj) -> list[str]:
    errors: list[str] = []
    replicas = scheduler.get("replicas")
    if replicas is not None and not _positive(replicas):
        errors.append("spec.router.scheduler.replicas: scheduler replicas must be greater than zero")
    if "config" not in scheduler:
        return errors
    config = _map(scheduler.get("config"))
    inline, ref = config.get("inline"), config.get("ref")
    if inline is None and ref is None:
        errors.append("spec.router.scheduler.config: either inline or ref is required")
    if inline is not None and ref is not None:
        errors.append("spec.router.scheduler.config: both inline and ref are set, specify one")
    if ref is not None and not _map(ref).get("name"):
        errors.append("spec.router.scheduler.config.ref.name: name is empty")
    return errors


WEBHOOKS: dict[tuple[str, str], tuple[str, Callable[[Obj], Found]]] = {
    ("scheduling.run.ai", "PodGroup"): ("KAI PodGroup webhook", kai_podgroup),
    ("serving.kserve.io", "LLMInferenceService"): ("KServe LLMInferenceService webhook", kserve_llmisvc),
}
