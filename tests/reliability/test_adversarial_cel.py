"""Adversarial DRA selectors: huge, deeply nested, or exponentially costly expressions.

Each is rejected with InvalidNodeSelector through the real function (over gRPC) while the existing
replica is kept, and the work done to reject it is bounded by counts: the cost estimator visits at
most one node per AST node (never more than the expression has characters), stops early once the
budget is passed, and no selector is ever evaluated against a device.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane import api
from modelplane.devices import MAX_COST, MAX_EXPRESSION_LENGTH, CelCompileError, compile_selector
from modelplane.errors import InvalidNodeSelectorError, short_expression
from modelplane.scheduler import schedule

from tests.function.conftest import as_dict
from tests.function.factories import cluster, deployment, request, resolved, with_ready
from tests.function.wants import MD_REQUIREMENTS, condition, placement_entry, replica, response, result

from .cel_counting import ast_nodes, counting
from .conftest import RunFunction

OVER_BUDGET = f"estimated worst-case cost exceeds the Kubernetes budget of {MAX_COST}; simplify the expression"
TOO_DEEP = "compilation failed: CANCELLED: Expression recursion limit exceeded. limit: 32 [CANCELLED]"


def nested_all(depth: int, over: str = "device.attributes") -> str:
    """`depth` comprehensions over the attribute domains, each nested in the previous one."""
    body = "true"
    for i in range(depth):
        body = f"{over}.all(v{i}, {body})"
    return body


def doubled(times: int) -> str:
    """A string doubled `times` times through cel.bind: 2^times times its seed's length."""
    body = f"s{times}.size() > 0"
    for i in range(times, 0, -1):
        body = f"cel.bind(s{i}, s{i - 1} + s{i - 1}, {body})"
    return f"cel.bind(s0, device.driver, {body})"


def squared_lists(depth: int) -> str:
    numbers = "[" + ", ".join(str(i) for i in range(100)) + "]"
    body = "1"
    for i in range(depth):
        body = f"{numbers}.map(x{i}, {body})"
    return f"{body}.size() > 0"


def string_blowup_over_maps() -> str:
    """Concatenating every attribute's text with every capacity's, inside four nested comprehensions."""
    return (
        "device.attributes.all(a, device.attributes[a].all(b, device.capacity.all(c, device.capacity[c].all(d, "
        "(string(device.attributes[a][b]) + a + b + c + d + a + b + c + d).contains(device.driver)))))"
    )


@dataclass(frozen=True)
class Case:
    name: str
    cel: str
    detail: str  # the rejection the lib reports; the function relays it verbatim


CASES = [
    Case(
        name="a selector one character over the Kubernetes length limit",
        cel='device.driver == "' + "x" * (MAX_EXPRESSION_LENGTH - 18) + '"',
        detail=f"expression is {MAX_EXPRESSION_LENGTH + 1} characters long, over the limit of {MAX_EXPRESSION_LENGTH}",
    ),
    Case(
        name="five thousand nested parentheses",
        cel="(" * 5000 + "true" + ")" * 5000,
        detail=TOO_DEEP,
    ),
    Case(
        name="a list literal nested four hundred deep",
        cel="[" * 400 + "1" + "]" * 400 + " == []",
        detail=TOO_DEEP,
    ),
    Case(
        name="forty cel.bind string doublings nest past the recursion limit",
        cel=doubled(40),
        detail=TOO_DEEP,
    ),
    Case(
        name="five comprehensions over the attribute domains nested in each other",
        cel=nested_all(5),
        detail=OVER_BUDGET,
    ),
    Case(
        name="a string doubled twenty times through cel.bind",
        cel=doubled(20),
        detail=OVER_BUDGET,
    ),
    Case(
        name="a hundred-element list mapped inside itself three times",
        cel=squared_lists(3),
        detail=OVER_BUDGET,
    ),
    Case(
        name="string concatenation inside four nested comprehensions over attributes and capacities",
        cel=string_blowup_over_maps(),
        detail=OVER_BUDGET,
    ),
]

PREVIOUS_STATUS = {"placement": [placement_entry("a")], "replicas": {"total": 1, "ready": 1}}


def observed_replica() -> dict[str, Any]:
    return with_ready(replica("a"))


def lib_message(xr: dict[str, Any]) -> str:
    """What the lib itself raises for the spec, independent of the function."""
    with pytest.raises(InvalidNodeSelectorError) as e:
        schedule(api.parse_deployment(xr), [api.parse_cluster(cluster("a"))], [])
    return str(e.value)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_adversarial_selector_is_rejected_and_the_replica_kept(
    grpc_function: RunFunction, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    xr = deployment(cel=case.cel, status=PREVIOUS_STATUS)
    message = (
        f"engine main member Standalone device request gpu selector 1 ({short_expression(case.cel)}): {case.detail}"
    )
    req = request(
        xr,
        observed={"replica-a-0": observed_replica()},
        required=resolved(clusters=[cluster("a"), cluster("b")], replicas=[observed_replica()]),
    )
    with counting(monkeypatch) as counts:
        got = as_dict(grpc_function(req))
    assert got == response(
        status=PREVIOUS_STATUS,
        resources={"replica-a-0": (replica("a"), True)},
        conditions=[
            condition("ReplicasScheduled", "False", "InvalidNodeSelector", message),
            condition("ReplicasReady", "True", "AllReplicasReady", "1 of 1 replicas are ready."),
        ],
        results=[result("WARNING", "InvalidNodeSelector", message)],
        requirements=MD_REQUIREMENTS,
    )
    assert lib_message(xr) == message
    nodes = ast_nodes(case.cel)
    # The estimator runs only on what compiled, visits each node at most once, and never more
    # nodes than the expression has characters; nothing is ever evaluated.
    assert (counts.evaluations, counts.estimator_visits <= (nodes or 0), (nodes or 0) <= len(case.cel)) == (
        0,
        True,
        True,
    )


@pytest.mark.parametrize("case", [c for c in CASES if c.detail == OVER_BUDGET], ids=lambda c: c.name)
def test_the_estimator_stops_as_soon_as_the_budget_is_passed(monkeypatch: pytest.MonkeyPatch, case: Case) -> None:
    """Exponential cost is detected before the whole tree is walked, not after evaluating it."""
    nodes = ast_nodes(case.cel)
    with counting(monkeypatch) as counts, pytest.raises(CelCompileError):
        compile_selector(case.cel)
    assert nodes is not None
    assert 0 < counts.estimator_visits < nodes


def test_an_expensive_accepted_selector_is_evaluated_once_per_distinct_device(
    grpc_function: RunFunction, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under budget is allowed; evaluations then scale with distinct devices, not replicas x clusters."""
    cel = " && ".join(
        [nested_all(2), *(f'device.driver != "x{i}"' for i in range(50)), 'device.driver == "gpu.nvidia.com"']
    )
    fleet = [cluster(f"c{i:02d}") for i in range(20)]  # twenty clusters, one device kind
    with counting(monkeypatch) as counts:
        compiled = compile_selector(cel)
        got = as_dict(grpc_function(request(deployment(replicas=10, cel=cel), required=resolved(clusters=fleet))))
    assert (
        compiled.cost <= MAX_COST,
        got["desired"]["composite"]["resource"]["status"]["replicas"],
        counts.evaluations,
    ) == (
        True,
        {"total": 10, "ready": 0, "updated": 10, "available": 0},
        1,
    )


# Random compositions of the blow-up constructions: whatever the mix, compiling either succeeds
# within the budget or raises CelCompileError (never another exception), after a bounded walk.
PIECES = st.one_of(
    st.integers(0, 6).map(nested_all),
    st.integers(0, 24).map(doubled),
    st.integers(0, 4).map(squared_lists),
    st.integers(0, 6).map(lambda d: nested_all(d, over="device.capacity")),
    st.just(string_blowup_over_maps()),
    st.integers(1, 60).map(lambda d: "(" * d + "true" + ")" * d),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=6), st.sampled_from([" && ", " || "]))
def test_any_mix_of_blowups_compiles_within_budget_or_is_rejected(pieces: list[str], joiner: str) -> None:
    expression = joiner.join(pieces)
    nodes = ast_nodes(expression)
    with pytest.MonkeyPatch.context() as monkeypatch, counting(monkeypatch) as counts:
        try:
            cost = compile_selector(expression).cost
        except CelCompileError:
            cost = None
    assert counts.evaluations == 0
    assert counts.estimator_visits <= (nodes or 0) <= len(expression)
    assert cost is None or cost <= MAX_COST
