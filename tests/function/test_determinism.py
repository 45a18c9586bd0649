"""Same request, same answer: whatever the server answered before, whatever its caches hold, whichever worker.

Every call a `modelplane plan` makes is recorded with its answer, caches cold. The same requests are
then replayed through one long-lived gRPC server in other orders, interleaved with other fleets'
calls, after other fleets warmed every cache, with every cache cleared before each call or squeezed
so that each call evicts, and through a pool of worker processes several at a time; every answer
must equal the recorded one byte for byte. The plan itself, whole, must print the same after other
plans ran in the process. The main fleet is the one a plan once placed differently on a loaded
machine (fleets/plan-determinism); the others share its pool names and device kinds, one with
every pool shared (`packing: Devices`), so a cache keyed on less than what it answers would mix
them up.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane.fleet import plan_text
from modelplane_function.cli import plan as plan_module
from modelplane_function.cli.render import output

from tests.function.caches import clear_all, process_caches, squeeze_all
from tests.function.conftest import worker_server

REPO = Path(__file__).resolve().parents[2]
FLEET = Path(__file__).parent / "fleets" / "plan-determinism"
EXAMPLE = REPO / "examples" / "fleet-plan"


@dataclass(frozen=True)
class Exchange:
    request: bytes  # serialized RunFunctionRequest, as the plan sent it
    response: bytes  # the answer, serialized deterministically


@dataclass(frozen=True)
class Recorded:
    main: tuple[Exchange, ...]  # every call of the main fleet's plan, in the plan's order
    others: tuple[Exchange, ...]  # every call of the other fleets' plans
    output: str  # the main plan's whole output: its YAML stream, then its text


def _answer(rsp: fnv1.RunFunctionResponse) -> bytes:
    return rsp.SerializeToString(deterministic=True)


def _planned(paths: Sequence[Path]) -> tuple[list[Exchange], str]:
    """The plan's calls with their answers, and its whole output."""
    calls: list[Exchange] = []
    serving = plan_module.serving

    @asynccontextmanager
    async def recording() -> AsyncIterator[Callable[[bytes], object]]:
        async with serving() as call:

            async def recorded(request: bytes) -> fnv1.RunFunctionResponse:
                rsp = await call(request)
                calls.append(Exchange(request=request, response=_answer(rsp)))
                return rsp

            yield recorded

    with pytest.MonkeyPatch.context() as m:
        m.setattr(plan_module, "serving", recording)
        return calls, _output(plan_module.plan(list(paths)))


def _output(plan: plan_module.Plan) -> str:
    return output.dump(plan.stream) + plan_text(plan.view)


def _shared_pools(tmp: Path) -> Path:
    """The main fleet with every pool `packing: Devices`: same pool names and device kinds, other answers."""
    clusters = list(yaml.safe_load_all((FLEET / "clusters.yaml").read_text()))
    for cluster in clusters:
        for pool in cluster["spec"]["nodePools"]:
            pool["packing"] = "Devices"
    (tmp / "clusters.yaml").write_text(yaml.safe_dump_all(clusters))
    (tmp / "deployments.yaml").write_text((FLEET / "deployments.yaml").read_text())
    return tmp


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    clear_all()
    main, out = _planned([FLEET])
    others: list[Exchange] = []
    for fleet in (EXAMPLE, _shared_pools(tmp_path_factory.mktemp("shared-pools"))):
        clear_all()
        others += _planned([fleet])[0]
    return Recorded(main=tuple(main), others=tuple(others), output=out)


def test_every_process_cache_is_found() -> None:
    # The replays below clear and squeeze what this finds: were a cache missed, they would prove less.
    assert set(process_caches()) >= {
        "modelplane.devices.cel._cache",
        "modelplane.devices.kinds._by_content",
        "modelplane.devices.kinds._digests",
        "modelplane.devices.kinds._pools",
        "modelplane.stated._by_content",
        "modelplane.stated._by_pool",
        "modelplane_function.handlers.deployment.SELECTOR_RESULTS",
        "modelplane_function.handlers.ledger._ENGINES",
        "modelplane_function.handlers.pools._DEVICES",
        "modelplane_function.handlers.pools._LISTS",
        "modelplane_function.handlers.requirements._CLUSTERS",
        "modelplane_function.handlers.requirements._DEMANDS",
        "modelplane_function.handlers.requirements._LEDGER",
        "modelplane_function.handlers.requirements._REPLICAS",
    }


def _shuffled(calls: Sequence[Exchange], seed: int) -> list[Exchange]:
    return random.Random(seed).sample(list(calls), len(calls))


def _interleaved(main: Sequence[Exchange], others: Sequence[Exchange]) -> list[Exchange]:
    """Each main call after some other fleet's call, both in shuffled orders."""
    rest = _shuffled(others, 3)
    return [call for i, mine in enumerate(_shuffled(main, 2)) for call in (rest[i % len(rest)], mine)]


@dataclass(frozen=True)
class Case:
    name: str
    calls: Callable[[Recorded], list[Exchange]]  # every call to make, in order; each answer is checked
    caches: str = "kept"  # kept | cleared (before every call) | squeezed (a few small entries each)


CASES = (
    Case(name="the plan's calls again, caches warm from the plan", calls=lambda r: list(r.main)),
    Case(name="the plan's calls in reverse", calls=lambda r: list(reversed(r.main))),
    Case(name="the plan's calls shuffled", calls=lambda r: _shuffled(r.main, 1)),
    Case(name="after other fleets' calls warmed every cache", calls=lambda r: [*r.others, *r.main]),
    Case(name="interleaved with other fleets' calls", calls=lambda r: _interleaved(r.main, r.others)),
    Case(
        name="shuffled with other fleets' calls, caches cleared before every call",
        calls=lambda r: _interleaved(r.main, r.others),
        caches="cleared",
    ),
    Case(
        name="shuffled with other fleets' calls, every cache squeezed to evict on every call",
        calls=lambda r: _interleaved(r.main, r.others),
        caches="squeezed",
    ),
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_one_long_lived_server_answers_each_request_as_it_did_the_first_time(
    case: Case,
    recorded: Recorded,
    run_function: Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = case.calls(recorded)
    if case.caches == "squeezed":
        squeeze_all(monkeypatch)
    got: list[bytes] = []
    for call in calls:
        if case.caches == "cleared":
            clear_all()
        got.append(_answer(run_function(fnv1.RunFunctionRequest.FromString(call.request))))
    assert got == [call.response for call in calls]


def test_worker_processes_answer_as_the_server_did_whichever_takes_a_call(recorded: Recorded) -> None:
    calls = _interleaved(recorded.main, recorded.others)
    with worker_server(workers=2, deadline=120, max_receive_mib=64) as (_, channel):
        stub = grpcv1.FunctionRunnerServiceStub(channel)

        def ask(call: Exchange) -> bytes:
            return _answer(stub.RunFunction(fnv1.RunFunctionRequest.FromString(call.request), timeout=180))

        with ThreadPoolExecutor(max_workers=4) as clients:  # more callers than workers: each worker serves many
            got = list(clients.map(ask, calls))
    assert got == [call.response for call in calls]


@dataclass(frozen=True)
class PlanCase:
    name: str
    before: tuple[Path, ...]  # fleets planned in the process first
    caches: str = "kept"


PLAN_CASES = (
    PlanCase(name="again in the same process", before=()),
    PlanCase(name="after the example fleet's plan", before=(EXAMPLE,)),
    PlanCase(name="with every cache cleared", before=(EXAMPLE,), caches="cleared"),
    PlanCase(name="with every cache squeezed to evict on every call", before=(EXAMPLE,), caches="squeezed"),
)


@pytest.mark.parametrize("case", PLAN_CASES, ids=lambda c: c.name)
def test_the_plan_prints_the_same_whatever_the_process_did_before(
    case: PlanCase, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    for fleet in case.before:
        plan_module.plan([fleet])
    if case.caches == "cleared":
        clear_all()
    elif case.caches == "squeezed":
        squeeze_all(monkeypatch)
    assert _output(plan_module.plan([FLEET])) == recorded.output
