"""Running a Composition's pipeline against the function, as render (and the XR reconciler) do.

Per step: call the function up to 6 times. Stop at a FATAL result, or when the requirements it
returns are equal to the previous call's (the first "previous" is absent, so a function that
returns no requirements is called once). Between calls the required resources are rebuilt from
scratch (bootstrap answers plus one fetch per requirement, the key always present, empty when
nothing matches) and the context is carried forward; the desired state is not. Requests travel
as bytes: the required resources are appended already encoded (wire.py), never re-serialized.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane_function.cli.render.errors import RenderFailure
from modelplane_function.cli.render.load import DEFAULT_FUNCTION
from modelplane_function.cli.render.store import Store
from modelplane_function.cli.render.wire import Doc, required_resources
from modelplane_function.handlers.convert import to_struct

MAX_ITERATIONS = 5  # calls are numbered 0..5, so at most 6 calls per step
# what Crossplane >= v2.2 advertises to a function
CAPABILITIES = (
    fnv1.CAPABILITY_CAPABILITIES,
    fnv1.CAPABILITY_REQUIRED_RESOURCES,
    fnv1.CAPABILITY_CREDENTIALS,
    fnv1.CAPABILITY_CONDITIONS,
    fnv1.CAPABILITY_REQUIRED_SCHEMAS,
)

Call = Callable[[bytes], Awaitable[fnv1.RunFunctionResponse]]  # a serialized RunFunctionRequest


@dataclass
class StepRun:
    step: str
    wire: bytes  # the last request of the step, serialized
    response: fnv1.RunFunctionResponse
    calls: int

    @property
    def request(self) -> fnv1.RunFunctionRequest:
        return fnv1.RunFunctionRequest.FromString(self.wire)


@dataclass
class PipelineResult:
    desired: fnv1.State
    conditions: list[fnv1.Condition] = field(default_factory=list)
    results: list[tuple[str, fnv1.Result]] = field(default_factory=list)
    runs: list[StepRun] = field(default_factory=list)


def _bootstrap(step: Mapping[str, Any]) -> dict[str, fnv1.ResourceSelector]:
    out: dict[str, fnv1.ResourceSelector] = {}
    for r in (step.get("requirements") or {}).get("requiredResources") or []:
        selector = fnv1.ResourceSelector(api_version=str(r["apiVersion"]), kind=str(r["kind"]))
        if r.get("name"):
            selector.match_name = str(r["name"])
        elif r.get("matchLabels") is not None:
            selector.match_labels.labels.update({str(k): str(v) for k, v in r["matchLabels"].items()})
        if r.get("namespace"):
            selector.namespace = str(r["namespace"])
        out[str(r["requirementName"])] = selector
    return out


def _answer(store: Store, selectors: Mapping[str, fnv1.ResourceSelector]) -> dict[str, list[Doc]]:
    # Every name is answered, with no items when nothing matches: "looked, found nothing".
    return {name: store.fetch(selector) for name, selector in selectors.items()}


def _tagged(req: fnv1.RunFunctionRequest, required: bytes) -> bytes:
    """The request as sent: tagged, like engine render, with a hash of the request itself."""
    req.meta.tag = ""
    req.meta.tag = hashlib.sha256(req.SerializeToString(deterministic=True) + required).hexdigest()
    return req.SerializeToString(deterministic=True) + required


def _requirements(rsp: fnv1.RunFunctionResponse) -> bytes | None:
    return rsp.requirements.SerializeToString(deterministic=True) if rsp.HasField("requirements") else None


def _fatal(step: str, rsp: fnv1.RunFunctionResponse) -> None:
    for r in rsp.results:
        if r.severity == fnv1.SEVERITY_FATAL:
            msg = f'pipeline step "{step}" returned a fatal result: {r.message}'
            raise RenderFailure(msg)


async def _run_step(call: Call, step: Mapping[str, Any], state: fnv1.RunFunctionRequest, store: Store) -> StepRun:
    """Run one step; `state` carries the observed and desired state and the context it starts from."""
    name = str(step.get("step", ""))
    function = (step.get("functionRef") or {}).get("name")
    if function != DEFAULT_FUNCTION:
        msg = f'pipeline step "{name}": function {function!r} is not available here (only {DEFAULT_FUNCTION})'
        raise RenderFailure(msg)
    if step.get("credentials"):
        msg = f'pipeline step "{name}": credentials are not supported by modelplane render'
        raise RenderFailure(msg)
    req = fnv1.RunFunctionRequest()
    req.CopyFrom(state)
    req.meta.capabilities.extend(CAPABILITIES)
    if step.get("input") is not None:
        req.input.CopyFrom(to_struct(step["input"]))
    bootstrap = _bootstrap(step)
    required = required_resources(_answer(store, bootstrap))
    previous: bytes | None = None
    for i in range(MAX_ITERATIONS + 1):
        wire = _tagged(req, required)
        rsp = await call(wire)
        _fatal(name, rsp)
        current = _requirements(rsp)
        if current == previous:
            return StepRun(step=name, wire=wire, response=rsp, calls=i + 1)
        if i == MAX_ITERATIONS:
            break
        previous = current
        req.ClearField("required_schemas")
        required = required_resources(_answer(store, {**bootstrap, **dict(rsp.requirements.resources)}))
        for schema in rsp.requirements.schemas:
            req.required_schemas[schema].SetInParent()  # no schemas offline: present and empty
        if rsp.HasField("context"):
            req.context.CopyFrom(rsp.context)
        else:
            req.ClearField("context")
    msg = f"requirements didn't stabilize after the maximum number of iterations ({MAX_ITERATIONS})"
    raise RenderFailure(msg)


async def run(call: Call, composition: Mapping[str, Any], observed: fnv1.State, store: Store) -> PipelineResult:
    state = fnv1.RunFunctionRequest(observed=observed, desired=fnv1.State(), context=to_struct({}))
    result = PipelineResult(desired=state.desired)
    for step in (composition.get("spec") or {}).get("pipeline") or []:
        run_ = await _run_step(call, step, state, store)
        rsp = run_.response
        state.desired.CopyFrom(rsp.desired)
        if rsp.HasField("context"):
            state.context.CopyFrom(rsp.context)
        else:
            state.ClearField("context")
        result.conditions.extend(rsp.conditions)
        result.results.extend((run_.step, r) for r in rsp.results)
        result.runs.append(run_)
    result.desired = state.desired
    return result
