"""Malformed input through the real function: wrong types, missing and unknown fields, out-of-range and
fractional numbers, bad names and label keys, unknown roles and pools, duplicates.

Every mutant gets an answer: a condition, or one FATAL result (never an exception escaping the
servicer, never a hang: each call runs under a 30 s timeout). Whenever the function reports a
spec problem it keeps every observed composed resource exactly as observed. Everything it emits
from the mutants validates against the XRDs and the upstream schemas, checked in one batch.
"""

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplane import names
from modelplane_function.handlers.convert import to_dict, to_struct
from modelplane_function.handlers.keep import minimal

from tests.function.conftest import as_dict
from tests.function.factories import request
from tests.validator import validate_documents

from .conftest import RunFunction
from .mutate import mutations
from .scenarios import Scenario, bases, desired, observed_as_ready

SPEC_REASONS = {"InvalidSpec", "InvalidNodeSelector", "NoClusters"}
SAMPLE = 150  # emitted objects validated per kind (deduplicated), one validator run each
SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def server_checked(what: list[str]) -> bool:
    """Whether a mutant breaks what the API server guarantees of every object it serves.

    Identity and metadata (names, namespaces, label syntax), apiVersion and kind, and the whole
    Namespace object are validated by the API server for every object the function can be sent;
    a user's template labels (spec.template.metadata) are not, and are ours to reject.
    """
    for entry in what:
        target, _, change = entry.partition(": ")
        path = change.partition(" ")[2]
        if target == "namespace" or path.split("/")[0] in {"metadata", "apiVersion", "kind"}:
            return True
    return False


def echo(obj: dict[str, Any]) -> dict[str, Any]:
    """What retain-only re-emits for an observed object, after the Struct round trip."""
    return to_dict(to_struct(minimal(obj)))


def fatal(rsp: fnv1.RunFunctionResponse) -> bool:
    return any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results)


def conditions(rsp: fnv1.RunFunctionResponse) -> dict[str, fnv1.Condition]:
    return {c.type: c for c in rsp.conditions}


def kept_all(rsp: fnv1.RunFunctionResponse, observed: dict[str, dict[str, Any]], kind: str | None) -> bool:
    """Every observed resource (of `kind`) is in desired state exactly as observed."""
    got = desired(rsp)
    return all(got.get(key) == echo(obj) for key, obj in observed.items() if kind is None or obj.get("kind") == kind)


def with_status(base: dict[str, Any], rsp: fnv1.RunFunctionResponse) -> dict[str, Any] | None:
    """The emitted status on the valid base object, so only what the function wrote is judged."""
    status = to_dict(rsp.desired.composite.resource).get("status")
    return None if status is None else {**copy.deepcopy(base), "status": status}


class Tally:
    """What the properties saw, reported in the test's output and checked for coverage."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.emitted: dict[str, dict[str, Any]] = {}

    def emit(self, obj: dict[str, Any] | None) -> None:
        if obj is not None and len(self.emitted) < SAMPLE:
            self.emitted.setdefault(json.dumps(obj, sort_keys=True), obj)


def report(kind: str, tally: Tally, tmp_path: Path) -> None:
    print(f"{kind}: {sum(tally.outcomes.values())} mutants, {dict(sorted(tally.outcomes.items()))}")
    docs = list(tally.emitted.values())
    assert (len(docs) > 0, validate_documents(docs, tmp_path)) == (True, (0, []))


@pytest.fixture(scope="module")
def md_bases(servicer: RunFunction) -> list[Scenario]:
    return bases(servicer)


@st.composite
def mutant(draw: st.DrawFn, base: Scenario) -> tuple[list[str], Scenario]:
    s = copy.deepcopy(base)
    target = draw(st.sampled_from(["xr", "xr", "cluster", "observed", "replica", "namespace", "fleet"]))
    match target:
        case "xr":
            done, s.xr = draw(mutations(s.xr))
        case "cluster":
            i = draw(st.integers(0, len(s.clusters) - 1))
            done, s.clusters[i] = draw(mutations(s.clusters[i]))
        case "observed":
            key = draw(st.sampled_from(sorted(s.observed)))
            done, s.observed[key] = draw(mutations(s.observed[key]))
        case "replica":
            i = draw(st.integers(0, len(s.replicas) - 1))
            done, s.replicas[i] = draw(mutations(s.replicas[i]))
        case "namespace":
            done, s.namespace = draw(mutations(s.namespace))
        case _:
            op = draw(st.sampled_from(["duplicate cluster", "duplicate replica", "no clusters", "no replicas"]))
            done = [op]
            if op == "duplicate cluster":
                s.clusters.append(copy.deepcopy(draw(st.sampled_from(s.clusters))))
            elif op == "duplicate replica":
                s.replicas.append(copy.deepcopy(draw(st.sampled_from(s.replicas))))
            elif op == "no clusters":
                s.clusters = []
            else:
                s.replicas = []
    return [f"{target}: {d}" for d in done], s


def test_malformed_model_deployments_and_fleets(
    servicer: RunFunction, md_bases: list[Scenario], tmp_path: Path
) -> None:
    tally = Tally()

    @SETTINGS
    @given(st.data())
    def run(data: st.DataObject) -> None:
        base = data.draw(st.sampled_from(md_bases))
        what, s = data.draw(mutant(base))
        rsp = servicer(s.request())
        if fatal(rsp):
            tally.outcomes["fatal"] += 1
            # FATAL (change nothing) is the answer only to what the API server never sends, or a kind we do not compose.
            assert (server_checked(what), list(rsp.desired.resources), what) == (True, [], what)
            return
        scheduled = conditions(rsp)[names.CONDITION_REPLICAS_SCHEDULED]
        if scheduled.reason in SPEC_REASONS:
            tally.outcomes[scheduled.reason] += 1
            assert (kept_all(rsp, s.observed, names.KIND_REPLICA), what) == (True, what)
            return
        tally.outcomes[scheduled.reason] += 1
        if server_checked(what):
            return  # the API server would have refused the input: what is emitted from it is moot
        tally.emit(with_status(base.xr, rsp))
        observed = {k: echo(v) for k, v in s.observed.items()}
        for key, obj in desired(rsp).items():
            if observed.get(key) != obj:  # echoes of (possibly mutated) observed input are not ours to judge
                tally.emit(obj)

    run()
    report("ModelDeployment", tally, tmp_path)


@pytest.fixture(scope="module")
def mr_bases(servicer: RunFunction, md_bases: list[Scenario]) -> list[tuple[dict[str, Any], dict[str, dict[str, Any]]]]:
    """(a composed ModelReplica as XR, its rendered Objects observed Ready, its requirements' answers) per base."""
    out = []
    for s in md_bases:
        xr = next(iter(s.observed.values()))
        cluster = [c for c in s.clusters if c["metadata"]["name"] == xr["spec"]["clusterName"]]
        required = {"cluster": cluster, "namespace": [s.namespace]}
        out.append((xr, observed_as_ready(desired(servicer(request(xr, required=required)))), required))
    return out


def test_malformed_model_replicas(servicer: RunFunction, mr_bases: list[Any], tmp_path: Path) -> None:
    tally = Tally()

    @SETTINGS
    @given(st.data())
    def run(data: st.DataObject) -> None:
        xr, observed, required = data.draw(st.sampled_from(mr_bases))
        observed = copy.deepcopy(observed)
        if data.draw(st.booleans()):
            what, xr = data.draw(mutations(xr))
            what = [f"xr: {w}" for w in what]
        else:
            key = data.draw(st.sampled_from(sorted(observed)))
            what, observed[key] = data.draw(mutations(observed[key]))
            what = [f"observed: {w}" for w in what]
        rsp = servicer(request(xr, observed=observed, required=required))
        if fatal(rsp):
            tally.outcomes["fatal"] += 1
            assert (server_checked(what), list(rsp.desired.resources), what) == (True, [], what)
            return
        rendered = conditions(rsp)[names.CONDITION_REPLICA_RENDERED]
        tally.outcomes[rendered.reason] += 1
        if rendered.status == fnv1.STATUS_CONDITION_FALSE:
            assert (kept_all(rsp, observed, None), what) == (True, what)
        elif not server_checked(what):
            echoes = {k: echo(v) for k, v in observed.items()}
            for key, obj in desired(rsp).items():
                if echoes.get(key) != obj:
                    tally.emit(obj)

    run()
    report("ModelReplica", tally, tmp_path)


@pytest.fixture(scope="module")
def ic_bases(servicer: RunFunction, md_bases: list[Scenario]) -> list[dict[str, Any]]:
    """Clusters of the bases with the gpuPools the function published for them."""
    out = []
    for c in md_bases[0].clusters:
        status = to_dict(servicer(request(c)).desired.composite.resource)["status"]
        out.append({**c, "status": status})
    return out


def test_malformed_inference_clusters(servicer: RunFunction, ic_bases: list[dict[str, Any]], tmp_path: Path) -> None:
    tally = Tally()

    @SETTINGS
    @given(st.data())
    def run(data: st.DataObject) -> None:
        base = data.draw(st.sampled_from(ic_bases))
        what, xr = data.draw(mutations(base))
        rsp = servicer(request(xr))
        if fatal(rsp):
            tally.outcomes["fatal"] += 1
            assert (server_checked([f"xr: {w}" for w in what]), what) == (True, what)
            return
        published = conditions(rsp)[names.CONDITION_POOLS_PUBLISHED]
        tally.outcomes[published.reason] += 1
        got = to_dict(rsp.desired.composite.resource).get("status", {})
        status = xr.get("status")
        if published.status == fnv1.STATUS_CONDITION_FALSE:
            # The last published pools stay: the scheduler reads them, a bad edit must not empty a cluster.
            last = status.get("gpuPools") if isinstance(status, dict) else None
            assert (got.get("gpuPools"), what) == (None if last is None else to_dict(to_struct({"v": last}))["v"], what)
        elif not server_checked([f"xr: {w}" for w in what]):
            tally.emit({**base, "status": got})

    run()
    report("InferenceCluster", tally, tmp_path)


def test_one_malformed_request_answers_the_same_over_real_grpc(
    grpc_function: RunFunction, servicer: RunFunction, md_bases: list[Scenario]
) -> None:
    """Smoke: the transport adds nothing to a malformed request's answer."""
    s = copy.deepcopy(md_bases[0])
    s.xr["spec"]["template"]["spec"]["engines"][0]["copies"] = 1.5
    s.clusters.append(copy.deepcopy(s.clusters[0]))
    over_grpc = as_dict(grpc_function(s.request()))
    assert (over_grpc, over_grpc["conditions"][0]["reason"]) == (as_dict(servicer(s.request())), "InvalidSpec")
