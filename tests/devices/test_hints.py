"""The hint after a missing key: where else the key is published, never a domain the selector reads."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.devices import DeviceMatcher

from tests.devices.factories import attr, device, pool, request

NIC = device("ib", driver="ib.example.com", synthetic=True, attributes={"speed": attr(400)})
H100 = device("h100", attributes={"productName": attr("NVIDIA H100")}, capacity={"memory": "80Gi"})
PUBLISHED = (
    "devices here publish attributes gpu.nvidia.com/{productName}, ib.example.com/{speed} and capacity "
    "gpu.nvidia.com/{memory}"
)


@dataclass(frozen=True)
class Hint:
    name: str
    selector: str
    want: str


HINTS = [
    Hint(
        name="a Synthetic NIC's domain, read already, is not suggested: the devices lacking it are",
        selector='device.attributes["ib.example.com"].speed >= 800',
        want='no device passes selector 1 (device.attributes["ib.example.com"].speed >= 800); it failed to evaluate '
        'on 1 of 2: no such key "speed" (only devices of driver ib.example.com publish ib.example.com/speed: on the '
        f'others the selector errs; test device.driver == "ib.example.com" first); {PUBLISHED}',
    ),
    Hint(
        name="a domain the selector does not read is still suggested",
        selector='device.attributes["mellanox.com"].speed >= 400',
        want='selector 1 (device.attributes["mellanox.com"].speed >= 400) failed to evaluate on every device here: '
        f'no such key "speed" (speed is published under ib.example.com); {PUBLISHED}',
    ),
    Hint(
        name="a misspelt key gets the close name",
        selector='device.attributes["ib.example.com"].sped >= 400',
        want='selector 1 (device.attributes["ib.example.com"].sped >= 400) failed to evaluate on every device here: '
        f'no such key "sped" (did you mean speed?); {PUBLISHED}',
    ),
]


@pytest.mark.parametrize("case", HINTS, ids=lambda c: c.name)
def test_why_a_request_matches_nothing_hints_only_what_helps(case: Hint) -> None:
    assert DeviceMatcher().unmatched(request("nic", case.selector), [pool(H100, NIC)]) == case.want
