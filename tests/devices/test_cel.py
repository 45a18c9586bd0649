from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from modelplane.devices import MAX_COST, MAX_EXPRESSION_LENGTH, CelCompileError, compile_selector
from modelplane.model import Device

from tests.devices.factories import attr, device

GPU = device(
    "h100",
    attributes={
        "productName": attr("NVIDIA H100 80GB HBM3"),
        "cudaComputeCapability": attr("9.0.0", version=True),
        "driverVersion": attr("550.54.15", version=True),
        "index": attr(3),
        "mig": attr(value=False),
        "net.example.com/rail": attr("rail-2"),
    },
    capacity={"memory": "80Gi", "net.example.com/bandwidth": "400G", "power": "700"},
)
NV = 'device.attributes["gpu.nvidia.com"]'
CAP = 'device.capacity["gpu.nvidia.com"]'


@dataclass(frozen=True)
class Case:
    name: str
    expression: str
    want: bool | str  # a str: the evaluation error
    device: Device = field(default=GPU)


CASES = [
    Case("the driver is visible as device.driver", 'device.driver == "gpu.nvidia.com"', want=True),
    Case("a different driver does not match", 'device.driver == "amd.com"', want=False),
    # quantities
    Case(
        "binary capacity is greater than a smaller binary quantity",
        f'{CAP}.memory.isGreaterThan(quantity("79Gi"))',
        want=True,
    ),
    Case("binary capacity is not greater than itself", f'{CAP}.memory.isGreaterThan(quantity("80Gi"))', want=False),
    Case("80Gi exceeds 80G (binary vs decimal suffix)", f'{CAP}.memory.isGreaterThan(quantity("80G"))', want=True),
    Case("80Gi is less than 86G", f'{CAP}.memory.isLessThan(quantity("86G"))', want=True),
    Case(
        "compareTo is zero across equal binary and plain forms",
        f'{CAP}.memory.compareTo(quantity("85899345920")) == 0',
        want=True,
    ),
    Case("equality is by value, not spelling", f'{CAP}.memory == quantity("81920Mi")', want=True),
    Case("decimal exponent form compares by value", f'{CAP}.power.compareTo(quantity("7e2")) == 0', want=True),
    Case("milli quantities compare exactly", 'quantity("1500m").isGreaterThan(quantity("1.4"))', want=True),
    Case("asInteger converts a whole quantity", f"{CAP}.memory.asInteger() == 85899345920", want=True),
    Case("isInteger is false for a fractional quantity", 'quantity("0.5").isInteger()', want=False),
    Case("asApproximateFloat gives a double", 'quantity("1.5k").asApproximateFloat() == 1500.0', want=True),
    Case(
        "add and sub do exact arithmetic",
        f'{CAP}.memory.sub(quantity("16Gi")).add(1).compareTo(quantity("64Gi").add(1)) == 0',
        want=True,
    ),
    Case("sign works as a member", 'quantity("-1").sign() == -1', want=True),
    Case(
        "another domain's capacity uses its own key",
        'device.capacity["net.example.com"].bandwidth.isGreaterThan(quantity("200G"))',
        want=True,
    ),
    Case("isQuantity rejects an upper-case K suffix", 'isQuantity("200K")', want=False),
    Case("isQuantity accepts the nano suffix", 'isQuantity("100n")', want=True),
    Case("isQuantity accepts the micro suffix", 'isQuantity("1500u")', want=True),
    Case("micro and milli compare by value", 'quantity("1500u") == quantity("1.5m")', want=True),
    Case(
        "binary quantities beyond int64 saturate as in Kubernetes",
        'quantity("8Ei").compareTo(quantity("10Ei")) == 0',
        want=True,
    ),
    Case("decimal quantities beyond int64 do not saturate", 'quantity("10E").isGreaterThan(quantity("9E"))', want=True),
    Case("isQuantity refuses text over the length bound", f'isQuantity("{"1" * 1025}")', want=False),
    Case(
        "a double overflow in asApproximateFloat is an infinity",
        'quantity("1e400").asApproximateFloat() > 1.0e308',
        want=True,
    ),
    # semver
    Case("version attribute greater than a semver", f'{NV}.driverVersion.isGreaterThan(semver("550.0.0"))', want=True),
    Case("version attribute less than a semver", f'{NV}.driverVersion.isLessThan(semver("550.54.14"))', want=False),
    Case(
        "version parts are ints",
        f"{NV}.driverVersion.major() == 550 && {NV}.driverVersion.minor() == 54 && {NV}.driverVersion.patch() == 15",
        want=True,
    ),
    Case("pre-release ranks below its release", 'semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', want=True),
    Case(
        "numeric pre-release identifiers compare numerically",
        'semver("1.0.0-rc.2").isLessThan(semver("1.0.0-rc.10"))',
        want=True,
    ),
    Case(
        "normalize accepts a v prefix and short form", 'semver("v9.0", true).compareTo(semver("9.0.0")) == 0', want=True
    ),
    Case("isSemver rejects leading zeros", 'isSemver("01.2.3")', want=False),
    Case(
        "a malformed semver literal is an evaluation error",
        f'{NV}.driverVersion.isGreaterThan(semver("x"))',
        want="not a semantic version: 'x'",
    ),
    Case(
        "comparing a version with a quantity is an evaluation error",
        f'{NV}.driverVersion.isGreaterThan(quantity("1"))',
        want="expected a semantic version",
    ),
    # typed attributes
    Case("string attribute", f'{NV}.productName.startsWith("NVIDIA H100")', want=True),
    Case("int attribute", f"{NV}.index == 3", want=True),
    Case("bool attribute", f"!{NV}.mig", want=True),
    Case("int attribute compared as a string does not match", f'{NV}.index == "3"', want=False),
    # domains
    Case("a bare attribute name lives in the driver's domain", f'{NV}.productName != ""', want=True),
    Case(
        "a qualified attribute name lives in its own domain",
        'device.attributes["net.example.com"].rail == "rail-2"',
        want=True,
    ),
    Case("a qualified name is not visible in the driver's domain", f"has({NV}.rail)", want=False),
    Case("domain presence with in", '"net.example.com" in device.attributes', want=True),
    Case("an absent domain is not in the map", '"amd.com" in device.attributes', want=False),
    Case("has() on a present attribute", f"has({NV}.mig)", want=True),
    Case("has() on an absent attribute of a present domain", f"has({NV}.absent)", want=False),
    Case(
        "cel.bind shortens domain lookups",
        f'cel.bind(nv, {NV}, nv.index > 2 && nv.productName.contains("H100"))',
        want=True,
    ),
    # evaluation errors are values, never a match
    Case("a missing attribute is an evaluation error", f"{NV}.absent == 1", want='no such key "absent"'),
    Case("a missing attribute under negation is still an error", f"!({NV}.absent == 1)", want='no such key "absent"'),
    Case("an error absorbed by || matches", f"{NV}.absent == 1 || true", want=True),
    Case("an error absorbed by && does not match", f"{NV}.absent == 1 && false", want=False),
    Case("a non-boolean result is an error", f"{NV}.productName", want="the result is string, not bool"),
    Case("a bool attribute is a selector by itself", f"{NV}.mig", want=False),
    Case("division by zero is an error", "1 / 0 == 1", want="divide by zero"),
    Case("int overflow is an error", "9223372036854775807 + 1 > 0", want="integer overflow"),
    Case(
        "a case typo in an attribute name is an error",
        f'{NV}.productname.startsWith("NVIDIA")',
        want='no such key "productname"',
    ),
    Case(
        "a device with an unparsable capacity matches nothing",
        "true",
        want="the device's own values do not parse: 'lots' is not a quantity",
        device=device("bad", capacity={"memory": "lots"}),
    ),
    Case(
        "a device with an unparsable version matches nothing",
        "true",
        want="the device's own values do not parse: not a semantic version",
        device=device("bad", attributes={"v": attr("1.0", version=True)}),
    ),
    # a domain the device lacks reads as an empty map, as in Kubernetes
    Case("has() on a missing domain's attribute is false", 'has(device.attributes["amd.com"].x)', want=False),
    Case(
        "a missing domain's attribute is a missing key", 'device.attributes["amd.com"].x == 1', want='no such key "x"'
    ),
    Case("a missing domain is an empty map", 'device.attributes["amd.com"].size() == 0', want=True),
    Case("a missing capacity domain is an empty map", 'device.capacity["amd.com"].size() == 0', want=True),
    Case(
        "a presence test guards a missing domain",
        '"amd.com" in device.attributes && device.attributes["amd.com"].x == 1',
        want=False,
    ),
    Case(
        "a selector that also observes the domains reads a missing domain as an error (known gap)",
        '!("amd.com" in device.attributes) && device.attributes["amd.com"].size() == 0',
        want='no such key "amd.com"',
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_evaluate(case: Case) -> None:
    got = compile_selector(case.expression).evaluate(case.device)
    if isinstance(case.want, str):
        assert isinstance(got, str)
        assert case.want in got
    else:
        assert got is case.want


@dataclass(frozen=True)
class CompileCase:
    name: str
    expression: str
    want_detail: str  # a fragment of the detail


ALL4 = "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, true))))"


def blowup(levels: int) -> str:
    """100 strings, each quadrupled by concatenation at every nested map() level."""
    names = "abcdefgh"
    last = names[levels - 1]
    body = f"{last}+{last}+{last}+{last}"
    for level in range(levels - 1, 0, -1):
        outer, inner = names[level - 1], names[level]
        body = f"[{outer}+{outer}+{outer}+{outer}].map({inner}, {body})"
    strings = ",".join(['"xxxxxxxxxx"'] * 100)
    return f"[{strings}].map(a, {body}).size() > 0"


COMPILE_CASES = [
    CompileCase("a syntax error", 'device.driver == "x" &&', "Syntax error"),
    CompileCase("an unknown function", 'device.driver.frobnicate("x")', "undeclared reference to 'frobnicate'"),
    CompileCase("a non-boolean result", '"x"', "must evaluate to bool, not string"),
    CompileCase("the driver alone is a string", "device.driver", "must evaluate to bool, not string"),
    CompileCase("a capacity alone is a quantity", f"{CAP}.memory", "must evaluate to bool, not quantity"),
    CompileCase(
        "ordering a quantity against an int",
        f"{CAP}.memory > 5",
        "operator > does not order quantity; use compareTo(), isGreaterThan() or isLessThan()",
    ),
    CompileCase(
        "comparing a quantity to an int",
        f"{CAP}.memory == 85899345920",
        "compares quantity with int, which never match",
    ),
    CompileCase("an unknown device field", "device.name == 'x'", "device has no field 'name'"),
    CompileCase("a field of an attribute value", f"{NV}.productName.vendor == 'x'", "has no field 'vendor'"),
    CompileCase("a quantity method on a string", 'device.driver.isGreaterThan(quantity("1"))', "applies to quantity"),
    CompileCase("a string test on a quantity", f'{CAP}.memory.startsWith("8")', "startsWith() applies to strings"),
    CompileCase("a non-bool operand of &&", "device.driver && true", "operator && needs bool operands, not string"),
    CompileCase(
        "an expression over the length limit", "true && " * 1300 + "true", f"over the limit of {MAX_EXPRESSION_LENGTH}"
    ),
    CompileCase("four nested comprehensions over attribute maps", ALL4, f"budget of {MAX_COST}"),
    CompileCase("string blow-up through six nested map() levels", blowup(6), f"budget of {MAX_COST}"),
    CompileCase("nesting past the parser's recursion limit", "[" * 40 + "1" + "]" * 40 + " == []", "recursion limit"),
]


@pytest.mark.parametrize("case", COMPILE_CASES, ids=lambda c: c.name)
def test_compile_errors(case: CompileCase) -> None:
    with pytest.raises(CelCompileError) as raised:
        compile_selector(case.expression)
    assert case.want_detail in raised.value.detail


@dataclass(frozen=True)
class CostCase:
    name: str
    expression: str
    low: int
    high: int


COST_CASES = [
    CostCase("a plain comparison is cheap", 'device.driver == "x"', 1, 20),
    CostCase("one comprehension over the domains costs its 32 entries", 'device.attributes.all(d, d != "")', 32, 1_000),
    CostCase("five quadrupling map() levels cost over 4**5 x 100 string bytes", blowup(5), 4**5 * 100, MAX_COST),
    CostCase(
        "three nested comprehensions stay within budget",
        "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, true)))",
        32**3,
        MAX_COST,
    ),
]


@pytest.mark.parametrize("case", COST_CASES, ids=lambda c: c.name)
def test_cost_estimates(case: CostCase) -> None:
    cost = compile_selector(case.expression).cost
    assert case.low <= cost <= case.high


def test_compilation_is_cached() -> None:
    expression = 'device.driver == "cached.example.com"'
    assert compile_selector(expression) is compile_selector(expression)


def test_compile_errors_are_cached_and_raised_again() -> None:
    with pytest.raises(CelCompileError) as first:
        compile_selector("1 +")
    with pytest.raises(CelCompileError) as second:
        compile_selector("1 +")
    assert first.value.detail == second.value.detail


D = 'device.attributes["dra.example.com"]'
ACCEPTED = [
    f'{D}.model == "LATEST-GPU-MODEL"',
    'device.capacity["dra.example.com"].memory.compareTo(quantity("10Gi")) >= 0',
    f'{D}.driverVersion.isGreaterThan(semver("12.0.0"))',
    f"{D}.driverVersion.major() >= 12",
    '"dra.example.com" in device.attributes',
    f"cel.bind(dra, {D}, dra.oneBool && dra.anotherBool)",
    f"{D}.index < 4",
    f"{D}.a == {D}.b",
    f'{D}.name.matches("^a.*")',
    f"size({D}) > 0",
    f'{D}.name in ["a", "b"]',
    f"int({D}.v) > 3",
    'device.attributes.exists(d, d.startsWith("gpu"))',
    'device.capacity["x"].memory.asApproximateFloat() > 1e9',
    'device.capacity["x"].memory.asInteger() > 1000',
    'quantity("1Gi").add(1).isGreaterThan(quantity("1"))',
    'sign(quantity("1")) > 0',
    'device.driver == "a" ? true : false',
    f"{D}.oneBool",
    f"!{D}.oneBool || {D}.index + 1 > 2",
    f'has({D}.model) && {D}.model.startsWith("H")',
    f'dyn({D}.model) == "x"',
]


@pytest.mark.parametrize("expression", ACCEPTED)
def test_selectors_kubernetes_accepts_compile(expression: str) -> None:
    """The static type pass refuses only what can never work: these are all valid DRA selectors."""
    assert compile_selector(expression).cost > 0
