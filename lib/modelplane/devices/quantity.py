"""Kubernetes resource quantities as exact rationals, parsed as apimachinery's ParseQuantity does.

Accepted text: an optional sign, decimal digits with an optional fraction (either part may be
empty), then a suffix: decimal `n u m k M G T P E` (or none), binary `Ki Mi Gi Ti Pi Ei`, or an
exponent `e`/`E` followed by a signed integer. The value is the exact number, rounded up (away
from zero) to a multiple of 1n when finer, and a binary-suffixed value beyond int64 saturates at
2^63-1, as Kubernetes caps it (`8Ei` and `10Ei` are equal there and here). A number without any
digit (`Ki`, `.`, `-`) is zero where Kubernetes takes its int64 path, and an error where it needs
its arbitrary-precision path (`Pi`, `Ei`, `e-10`); that quirk is reproduced too.

Deliberate bounds Kubernetes does not have: text longer than MAX_TEXT characters and exponents
beyond +-MAX_EXPONENT are refused, so no input builds a number of millions of digits. The
scanner looks at each character once, so any text is judged in linear time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

MAX_TEXT = 1024
MAX_EXPONENT = 999
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_DIGITS = frozenset("0123456789")
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_SIGNS = frozenset("+-")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_NANO = 10**9
_NANO_SCALE = -9  # the finest power of ten Kubernetes keeps
_INT64_DIGITS = 18  # decimal digits that always fit an int64
_SHAPE = "a signed decimal number and a suffix (n, u, m, k, M, G, T, P, E, Ki..Ei, or an exponent as in 1e3)"


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


@dataclass(frozen=True, slots=True)
class _Parts:
    negative: bool
    digits: bool  # the number part holds at least one digit (leading zeros count)
    whole: str  # integer digits after leading zeros, possibly empty
    fraction: str  # digits after the point, possibly empty
    suffix: str


def _scan(text: str) -> _Parts | None:
    """Split the text in one forward pass; None when it is a zero without suffix ("0", "-00", "+")."""
    end, pos = len(text), 0
    negative = False
    if end and text[0] in _SIGNS:
        negative, pos = text[0] == "-", 1
    start = pos
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return None
    zeros = pos > start
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    whole = text[start:pos]
    fraction = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        fraction = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in _SIGNS:
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        msg = f"{text!r} is not a quantity: expected {_SHAPE}"
        raise QuantityError(msg)
    return _Parts(negative, zeros or bool(whole) or bool(fraction), whole, fraction, text[suffix_start:])


def _exponent(text: str, suffix: str) -> tuple[int, int, bool]:
    """(base, exponent, binary) of a suffix."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], False
    if suffix in _BINARY:
        return 2, _BINARY[suffix], True
    sign, digits = (suffix[1], suffix[2:]) if suffix[1:2] in _SIGNS else ("", suffix[1:])
    if suffix[:1] in ("e", "E") and digits and all(c in _DIGITS for c in digits):
        if len(digits.lstrip("0")) > len(str(MAX_EXPONENT)) or int(digits) > MAX_EXPONENT:
            msg = f"{text!r} is not a supported quantity: its exponent is beyond +-{MAX_EXPONENT}"
            raise QuantityError(msg)
        return 10, -int(digits) if sign == "-" else int(digits), False
    msg = f"{text!r} is not a quantity: unknown suffix {suffix!r}"
    raise QuantityError(msg)


def _int64_path(parts: _Parts, exponent: int, *, binary: bool) -> bool:
    """Whether Kubernetes parses this through its int64 fast path (which needs no digit)."""
    whole = parts.whole or "0"
    if binary:
        if parts.fraction:
            return False
        precision = 15 - len(whole) - exponent * 3 // 10 - 1
        scale = 0
    else:
        precision = _INT64_DIGITS - len(whole) - len(parts.fraction)
        scale = exponent - len(parts.fraction)
    if precision < 0 or scale < _NANO_SCALE:
        return False
    mantissa = int(whole + parts.fraction) * (2**exponent if binary else 1)
    return mantissa <= INT64_MAX


def parse_quantity(text: str) -> Fraction:
    """Parse a Kubernetes quantity string into its exact value; QuantityError when it is not one."""
    if len(text) > MAX_TEXT:
        msg = f"a quantity longer than {MAX_TEXT} characters is not supported"
        raise QuantityError(msg)
    if not text:
        msg = "an empty string is not a quantity"
        raise QuantityError(msg)
    parts = _scan(text)
    if parts is None:
        return Fraction(0)
    base, exponent, binary = _exponent(text, parts.suffix)
    if not parts.digits and not _int64_path(parts, exponent, binary=binary):
        msg = f"{text!r} is not a quantity: its number has no digits"
        raise QuantityError(msg)
    magnitude = Fraction(int((parts.whole or "0") + parts.fraction), 10 ** len(parts.fraction))
    magnitude *= Fraction(base) ** exponent
    if (magnitude * _NANO).denominator != 1:
        magnitude = Fraction(math.ceil(magnitude * _NANO), _NANO)
    if binary and magnitude > INT64_MAX:
        magnitude = Fraction(INT64_MAX)
    return -magnitude if parts.negative else magnitude


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def as_int64(value: Fraction) -> int | None:
    """The value as an int64, or None when it is fractional or out of range."""
    if value.denominator != 1 or not INT64_MIN <= value.numerator <= INT64_MAX:
        return None
    return value.numerator


def compare(left: Fraction, right: Fraction) -> int:
    return (left > right) - (left < right)
