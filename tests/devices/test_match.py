from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from modelplane.devices import DeviceMatcher, MemberMatch
from modelplane.errors import InvalidNodeSelectorError
from modelplane.model import Cluster, Deployment, Device, Engine, Member, NodePool, ResolvedDeviceRequest, Role

from tests.devices.factories import attr, device, member, pool, request

NVIDIA = 'device.driver == "gpu.nvidia.com"'
IB = 'device.driver == "ib.example.com"'
BIG = 'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))'


def resolved(name: str, device_class: str, count: int, *selectors: str) -> ResolvedDeviceRequest:
    return ResolvedDeviceRequest(name=name, device_class_name=device_class, count=count, selectors=selectors)


@dataclass(frozen=True)
class Case:
    name: str
    member: Member
    pool: NodePool
    want: MemberMatch | None


H100 = device("h100", capacity={"memory": "80Gi"})
A10 = device("a10", capacity={"memory": "24Gi"})
IB_NIC = device("ib", driver="ib.example.com", synthetic=True)
IB_DRA = device("ib-dra", driver="ib.example.com")

CASES = [
    Case("a member without device requests is claimless", member(), pool(H100), MemberMatch(resolved=())),
    Case(
        "one request resolves to the matching DRA device",
        member(request("gpu", BIG, count=4)),
        pool(A10, H100),
        MemberMatch(resolved=(resolved("gpu", "h100.class", 4, BIG),)),
    ),
    Case("no device satisfies the selector", member(request("gpu", BIG)), pool(A10), None),
    Case("a request larger than the per-node count does not fit", member(request("gpu", count=9)), pool(H100), None),
    Case(
        "requests sharing one kind fit when their counts sum within its budget",
        member(request("a", count=4), request("b", count=2), request("c", count=2)),
        pool(device("gpu", count=8)),
        MemberMatch(
            resolved=(
                resolved("a", "gpu.class", 4),
                resolved("b", "gpu.class", 2),
                resolved("c", "gpu.class", 2),
            )
        ),
    ),
    Case(
        "requests sharing one kind do not fit when their counts exceed its budget",
        member(request("a", count=4), request("b", count=4), request("c", count=1)),
        pool(device("gpu", count=8)),
        None,
    ),
    Case(
        "a flexible request leaves the only kind another request can use (greedy first-fit fails)",
        member(request("any", NVIDIA, count=6), request("big", BIG, count=6)),
        pool(
            device("a-h100", capacity={"memory": "80Gi"}, count=8),
            device("b-a10", capacity={"memory": "24Gi"}, count=8),
        ),
        MemberMatch(
            resolved=(
                resolved("any", "b-a10.class", 6, NVIDIA),
                resolved("big", "a-h100.class", 6, BIG),
            )
        ),
    ),
    Case(
        "a synthetic-only match does not place a claim-capable member",
        member(request("nic", IB)),
        pool(IB_NIC, H100),
        None,
    ),
    Case(
        "a synthetic match narrows placement alongside a DRA match",
        member(request("gpu", NVIDIA, count=8), request("nic", IB)),
        pool(IB_NIC, H100),
        MemberMatch(resolved=(resolved("gpu", "h100.class", 8, NVIDIA),)),
    ),
    Case(
        "a pool missing the synthetic device rejects the member",
        member(request("gpu", NVIDIA), request("nic", IB)),
        pool(H100),
        None,
    ),
    Case(
        "DRA is preferred over synthetic when a request matches both",
        member(request("nic", IB)),
        pool(IB_NIC, IB_DRA),
        MemberMatch(resolved=(resolved("nic", "ib-dra.class", 1, IB),)),
    ),
    Case(
        "ties between DRA kinds go to the first device name",
        member(request("gpu", NVIDIA)),
        pool(device("zeta"), device("alpha")),
        MemberMatch(resolved=(resolved("gpu", "alpha.class", 1, NVIDIA),)),
    ),
    Case(
        "all selectors of a request must hold",
        member(request("gpu", NVIDIA, BIG, 'device.attributes["gpu.nvidia.com"].arch == "hopper"')),
        pool(H100, device("h200", attributes={"arch": attr("hopper")}, capacity={"memory": "141Gi"})),
        MemberMatch(
            resolved=(
                resolved("gpu", "h200.class", 1, NVIDIA, BIG, 'device.attributes["gpu.nvidia.com"].arch == "hopper"'),
            )
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_match_member(case: Case) -> None:
    assert DeviceMatcher().match_member(case.member, case.pool) == case.want


def test_match_is_independent_of_device_order() -> None:
    the_member = member(request("any", NVIDIA, count=4), request("big", BIG, count=4), request("nic", IB))
    kinds = [
        device("k1", capacity={"memory": "80Gi"}),
        device("k2", capacity={"memory": "24Gi"}),
        device("k3"),
        IB_NIC,
        IB_DRA,
    ]
    results = set()
    rng = random.Random(7)
    for _ in range(20):
        rng.shuffle(kinds)
        results.add(DeviceMatcher().match_member(the_member, pool(*kinds)))
    assert len(results) == 1


def test_identical_devices_across_many_pools_cost_one_evaluation_per_selector() -> None:
    matcher = DeviceMatcher()
    the_member = member(request("gpu", NVIDIA, BIG, count=8))
    pools = [pool(device("h100", capacity={"memory": "80Gi"}), name=f"pool-{index}") for index in range(300)]
    results = {matcher.match_member(the_member, each) for each in pools}
    assert (results, matcher.cel_evaluations) == (
        {MemberMatch(resolved=(resolved("gpu", "h100.class", 8, NVIDIA, BIG),))},
        2,
    )


def test_members_with_the_same_requests_share_the_memo() -> None:
    matcher = DeviceMatcher()
    selectors = (NVIDIA,)
    pools = [pool(device(f"kind-{index % 3}", capacity={"memory": "80Gi"})) for index in range(30)]
    for the_member in (member(request("gpu", *selectors)), member(request("gpu", *selectors), role=Role.LEADER)):
        for each in pools:
            matcher.match_member(the_member, each)
    # Kinds differ by name only; selectors see content, so one evaluation serves all 60 matches.
    assert matcher.cel_evaluations == 1


def test_validate_reports_the_bad_selector() -> None:
    deployment = Deployment(
        namespace="ns",
        name="md",
        replicas=1,
        engines=(
            Engine(name="prefill", members=(member(request("gpu", NVIDIA)),)),
            Engine(name="decode", members=(member(request("gpu", NVIDIA), request("nic", "device.nope(")),)),
        ),
    )
    with pytest.raises(InvalidNodeSelectorError) as raised:
        DeviceMatcher().validate(deployment)
    error = raised.value
    assert (error.engine, error.role, error.request, error.detail.startswith("compilation failed")) == (
        "decode",
        "Standalone",
        "nic",
        True,
    )


GPU_DOMAIN = 'device.attributes["gpu.nvidia.com"]'
NIC = device("ib", driver="ib.example.com", synthetic=True, attributes={"speed": attr(400)})
H100 = device("h100", attributes={"productName": attr("NVIDIA H100")}, capacity={"memory": "80Gi"})


@dataclass(frozen=True)
class ValidateCase:
    name: str
    selectors: tuple[str, ...]
    fleet: tuple[Device, ...]  # one cluster, one pool per device
    want: str | None  # the error message, or None when the selectors are valid


VALIDATE_CASES = [
    ValidateCase(
        "a typo after a driver guard fails on every GPU it reaches, whatever the NICs say",
        (NVIDIA, f"{GPU_DOMAIN}.productname == 'x'"),
        (H100, NIC),
        'engine main member Standalone device request gpu selector 2 (device.attributes["gpu.nvidia.com"]'
        ".productname == 'x'): failed to evaluate on every device it reached (1 device kinds in the fleet): "
        'no such key "productname" (did you mean productName?); devices in the fleet publish attributes '
        "gpu.nvidia.com/{productName}, ib.example.com/{speed} and capacity gpu.nvidia.com/{memory}",
    ),
    ValidateCase(
        "a selector behind a guard no device passes is never reached, so it is no error",
        ('device.driver == "amd.com"', 'device.attributes["amd.com"].x == 1'),
        (H100, NIC),
        None,
    ),
    ValidateCase(
        "an unguarded selector that errs on the NIC but is false on the GPU matches nothing, and is valid",
        (f'{GPU_DOMAIN}.productName == "NVIDIA B200"',),
        (H100, NIC),
        None,
    ),
    ValidateCase(
        "an error on one device kind is fine when another matches",
        (f'{GPU_DOMAIN}.productName.startsWith("NVIDIA")',),
        (NIC, H100),
        None,
    ),
    ValidateCase("with no device in the fleet nothing can be judged", ("1 / 0 == 1",), (), None),
    ValidateCase(
        "a selector that does not compile is named by its position",
        (NVIDIA, "device.frobnicate()"),
        (H100,),
        "engine main member Standalone device request gpu selector 2 (device.frobnicate()): compilation failed: "
        "<input>:1:18: undeclared reference to 'frobnicate' (in container '')",
    ),
    ValidateCase(
        "distinct selectors may not total more than 64 KiB",
        tuple(f'device.driver != "{i}" && ' + "true && " * 1000 + "true" for i in range(9)),
        (H100,),
        "engine main member Standalone device request gpu: the deployment's distinct selectors total over 65536 "
        "characters",
    ),
]


@pytest.mark.parametrize("case", VALIDATE_CASES, ids=lambda c: c.name)
def test_validate_against_the_fleet(case: ValidateCase) -> None:
    deployment = Deployment(
        namespace="ns",
        name="md",
        replicas=1,
        engines=(Engine(name="main", members=(member(request("gpu", *case.selectors)),)),),
    )
    clusters = [Cluster(name="c", pools=tuple(pool(kind, name=f"p{i}") for i, kind in enumerate(case.fleet)))]
    try:
        DeviceMatcher().validate(deployment, clusters)
    except InvalidNodeSelectorError as error:
        got: str | None = str(error)
    else:
        got = None
    assert got == case.want
