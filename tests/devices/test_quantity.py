"""Quantity parsing matches Kubernetes' ParseQuantity: values, rounding, saturation and refusals.

The cases are those of apimachinery's own quantity tests (pkg/api/resource/quantity_test.go:
TestQuantityParse, TestParseQuantityString, TestParseQuantity), restated as exact values, plus the
digit-less inputs its scanner accepts or refuses and the bounds this project adds on purpose.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from fractions import Fraction

import pytest
from modelplane.devices.quantity import MAX_EXPONENT, MAX_TEXT, QuantityError, parse_quantity

N = Fraction(1, 10**9)  # one nano
MAX = 2**63 - 1


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    want: Fraction | int | None  # None: refused


def cases(sentence: str, *pairs: tuple[str, Fraction | int | None]) -> list[Case]:
    return [Case(f"{sentence}: {text!r}", text, want) for text, want in pairs]


CASES = [
    *cases("zero in every suffix", ("0", 0), ("0n", 0), ("0u", 0), ("0m", 0), ("0Ki", 0), ("0k", 0), ("0Mi", 0),
           ("0M", 0), ("0Gi", 0), ("0G", 0), ("0Ti", 0), ("0T", 0)),
    *cases("binary suffixes are powers of 1024", ("1Ki", 1024), ("8Ki", 8 * 1024), ("7Mi", 7 * 1024**2),
           ("6Gi", 6 * 1024**3), ("5Ti", 5 * 1024**4), ("4Pi", 4 * 1024**5), ("3Ei", 3 * 1024**6),
           ("10Ti", 10 * 1024**4), ("100Ti", 100 * 1024**4)),
    *cases("decimal suffixes include nano and micro", ("5n", 5 * N), ("4u", Fraction(4, 10**6)),
           ("3m", Fraction(3, 1000)), ("9", 9), ("8k", 8000), ("50k", 50_000), ("7M", 7 * 10**6), ("6G", 6 * 10**9),
           ("5T", 5 * 10**12), ("40T", 40 * 10**12), ("300T", 300 * 10**12), ("2P", 2 * 10**15), ("1E", 10**18),
           ("100n", Fraction(1, 10**7)), ("1500u", Fraction(3, 2000))),
    *cases("decimal exponents", ("1E-3", Fraction(1, 1000)), ("1e3", 1000), ("1E6", 10**6), ("1e9", 10**9),
           ("1E12", 10**12), ("1e15", 10**15), ("1E18", 10**18), ("1e14", 10**14), ("1e13", 10**13),
           ("1.2e3", 1200), ("1.3E+6", 1_300_000), ("1.40e9", 14 * 10**8), ("1.53E12", 153 * 10**10),
           ("1.6e15", 16 * 10**14), ("1.7E18", 17 * 10**17), ("0.5e0", Fraction(1, 2)), ("0.5e-1", Fraction(1, 20)),
           ("0.5e-2", Fraction(1, 200))),
    *cases("fractions are exact", ("100.035k", 100_035), ("0.001", Fraction(1, 1000)), ("0.0005k", Fraction(1, 2)),
           ("0.005", Fraction(1, 200)), ("0.05", Fraction(1, 20)), ("0.5", Fraction(1, 2)),
           ("0.00050k", Fraction(1, 2)), ("0.00500", Fraction(1, 200)), ("10.035M", 10_035_000),
           ("9.01", Fraction(901, 100)), ("8.1k", 8100), ("7.123456M", 7_123_456), ("6.987654321G", 6_987_654_321),
           ("5.444T", 5444 * 10**9), ("40.1T", 401 * 10**11), ("300.2T", 3002 * 10**11), ("2.5P", 25 * 10**14),
           ("1.01E", 101 * 10**16), ("100.035Ki", Fraction(10243584, 100)), ("0.5Mi", 512 * 1024),
           ("0.05Gi", Fraction(536870912, 10)), ("0.025Ti", Fraction(274877906944, 10))),
    *cases("precision finer than 1n rounds up, away from zero", ("3.001n", 4 * N), ("1.1E-9", 2 * N),
           ("0.0000000001", N), ("0.0000000005", N), ("0.00000000050", N), ("0.5e-9", N), ("0.9n", N),
           ("0.00000012345", 124 * N), ("0.00000012354", 124 * N), ("0.000000000001Ki", 2 * N),
           ("-0.0000000001", -N), ("-3.001n", -4 * N)),
    *cases("binary values beyond int64 saturate", ("9Ei", MAX), ("9223372036854775807Ki", MAX), ("8Ei", MAX),
           ("10Ei", MAX), ("-8Ei", -MAX), ("8.00001Ei", MAX), ("-9Ei", -MAX)),
    *cases("decimal values beyond int64 do not saturate", ("12E", 12 * 10**18), ("10E", 10**19),
           ("-10E", -(10**19)), ("9223372036854775808", 2**63), ("-9223372036854775809", -(2**63) - 1),
           ("9999999999999999999.1", Fraction(99999999999999999991, 10)), ("1.0000000000000000001E", 10**18 + N * 10**8)),
    *cases("signs, leading zeros and bare points", (".001", Fraction(1, 1000)), (".0001k", Fraction(1, 10)),
           ("1.", 1), ("1.G", 10**9), ("+1Ki", 1024), ("-1.025Ti", Fraction(-1025 * 1024**4, 1000)),
           ("0.025Ti", Fraction(25 * 1024**4, 1000)), ("007", 7), ("-000", 0), ("1E-3", Fraction(1, 1000))),
    *cases("a number without digits is zero where Kubernetes stays in int64", (".", 0), ("-.", 0), ("+", 0),
           ("-", 0), ("Ki", 0), ("Ti", 0), ("m", 0), ("n", 0), ("E", 0), ("e3", 0), ("e-9", 0), (".Ki", 0)),
    *cases("a number without digits is refused where Kubernetes needs arbitrary precision", ("Pi", None),
           ("Ei", None), ("-Ei", None), ("e-10", None)),
    *cases("malformed text is refused", ("", None), ("1.1.M", None), ("1+1.0M", None), ("0.1mi", None),
           ("0.1am", None), ("aoeu", None), (".5i", None), ("1i", None), ("-3.01i", None), ("-3.01e-", None),
           (" 1", None), ("1 ", None), ("80GB", None), ("NaN", None), ("Inf", None), ("1K", None), ("1ki", None),
           ("1e", None), ("1e+", None), ("1Ei5", None), ("1eE5", None), ("1e1.5", None), ("0x10", None),
           ("1_000", None), ("\u0661", None), ("1\u0663", None)),  # Arabic-Indic digits
    *cases("bounds of this project: exponents within three digits, text within the limit",
           (f"1e{MAX_EXPONENT}", 10**MAX_EXPONENT), (f"1e-{MAX_EXPONENT}", N), ("1e0999", 10**999),
           (f"1e{MAX_EXPONENT + 1}", None), ("1e999999999", None), ("1e4294967296", None),
           ("1" * MAX_TEXT, int("1" * MAX_TEXT)), ("1" * (MAX_TEXT + 1), None), ("1" * 10_000 + "x", None)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name[:120])
def test_parse_quantity(case: Case) -> None:
    try:
        got: Fraction | None = parse_quantity(case.text)
    except QuantityError:
        got = None
    assert got == case.want


class CountingText(str):
    """A string that counts how often the parser reads a character or a slice of it."""

    reads = 0

    def __getitem__(self, key: object) -> str:  # type: ignore[override]
        CountingText.reads += 1
        return str.__getitem__(self, key)  # type: ignore[index]


@dataclass(frozen=True)
class ScanCase:
    name: str
    text: str


SCAN_CASES = [
    ScanCase("a thousand digits then a bad suffix (quadratic in the old pattern)", "1" * (MAX_TEXT - 1) + "x"),
    ScanCase("a thousand digits then a decimal point", "1" * (MAX_TEXT - 1) + "."),
    ScanCase("a thousand digits split by a point with a suffix", "1" * 500 + "." + "2" * 500 + "Mi"),
    ScanCase("a thousand zeros", "0" * MAX_TEXT),
    ScanCase("an exponent of many leading zeros", "1e" + "0" * (MAX_TEXT - 3) + "5"),
]


@pytest.mark.parametrize("case", SCAN_CASES, ids=lambda c: c.name)
def test_the_scanner_reads_each_character_about_once(case: ScanCase) -> None:
    """Linear time, shown by counting reads: at most one per character plus a constant."""
    CountingText.reads = 0
    with contextlib.suppress(QuantityError):
        parse_quantity(CountingText(case.text))
    assert CountingText.reads <= len(case.text) + 16
