"""Kubernetes resource quantities as exact rationals, for the CEL `quantity` library.

`parse_quantity` follows the Kubernetes Quantity grammar: an optionally signed decimal number
followed by a binary suffix (Ki..Ei), a decimal suffix (m, k, M..E) or a decimal exponent
(`e3`, `E-2`). As in Kubernetes, precision finer than 1n is rounded away from zero. Values
are `Fraction`s so comparisons between binary and decimal suffixes are exact.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_PATTERN = re.compile(r"([+-]?)(\d+\.?\d*|\.\d+)(?:([eE][+-]?\d+)|([KMGTPE]i)|([mkMGTPE]))?")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_NANO = Fraction(1, 10**9)
# Larger exponents only serve to build huge integers; Kubernetes cannot represent them either.
_MAX_EXPONENT = 1000
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


def parse_quantity(text: str) -> Fraction:
    """Parse a Kubernetes quantity string into its exact value."""
    match = _PATTERN.fullmatch(text)
    if match is None:
        msg = f"quantities must match the regular expression '{_PATTERN.pattern}': {text!r}"
        raise QuantityError(msg)
    sign, number, exponent, binary, decimal = match.groups()
    whole, _, fraction = number.partition(".")
    value = Fraction(int(whole or "0") * 10 ** len(fraction) + int(fraction or "0"), 10 ** len(fraction))
    if binary:
        value *= 1024 ** _BINARY[binary]
    else:
        power = int(exponent[1:]) if exponent else _DECIMAL[decimal or ""]
        if abs(power) > _MAX_EXPONENT:
            msg = f"quantity exponent out of range: {text!r}"
            raise QuantityError(msg)
        value *= Fraction(10) ** power
    if value.denominator > _NANO.denominator or _NANO.denominator % value.denominator:
        value = Fraction(math.ceil(value / _NANO), 10**9)
    return -value if sign == "-" else value


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def as_int64(value: Fraction) -> int | None:
    """The value as an int64, or None when it is fractional or out of range."""
    if value.denominator != 1 or not _INT64_MIN <= value.numerator <= _INT64_MAX:
        return None
    return value.numerator


def compare(left: Fraction, right: Fraction) -> int:
    return (left > right) - (left < right)
