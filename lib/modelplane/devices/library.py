"""The Kubernetes `quantity` and `semver` CEL libraries on cel-cpp, and the DRA device encoding.

cel-cpp (cel-expr-python) cannot carry opaque Python objects as CEL values, so a quantity or a
semantic version travels as a one-entry map tagged with a key no device attribute can have
(`@quantity`, `@semver`) whose value is a canonical string: the exact rational value of a
quantity, or the version without build metadata. Canonical strings make `==` agree with
Kubernetes (`quantity("1Gi") == quantity("1024Mi")`), and because the values are maps, ordering
operators and arithmetic on them (`capacity.memory > 5`) fail to evaluate, so they never match.
The library functions below decode the tags in Python and raise on anything else.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, cast

from cel_expr_python import cel  # pyright: ignore[reportMissingTypeStubs]
from cel_expr_python.ext.ext_bindings import ExtBindings  # pyright: ignore[reportMissingTypeStubs]

from modelplane.devices.quantity import as_int64, compare, is_quantity, parse_quantity
from modelplane.devices.semver import Semver, is_semver, parse_semver
from modelplane.model import AttributeType, Device

QUANTITY_TAG = "@quantity"
SEMVER_TAG = "@semver"

_T = cel.Type


class LibraryError(ValueError):
    """A library function got a value of the wrong kind; CEL reports it as an evaluation error."""


def quantity_value(value: Fraction) -> dict[str, str]:
    return {QUANTITY_TAG: str(value)}


def semver_value(version: Semver) -> dict[str, str]:
    return {SEMVER_TAG: str(version)}


def _tagged(value: object, tag: str) -> str | None:
    if isinstance(value, dict):
        text = cast("dict[object, object]", value).get(tag)
        return text if isinstance(text, str) else None
    return None


def _quantity(value: object) -> Fraction:
    text = _tagged(value, QUANTITY_TAG)
    if text is None:
        msg = "expected a quantity"
        raise LibraryError(msg)
    return Fraction(text)


def _semver(value: object) -> Semver:
    text = _tagged(value, SEMVER_TAG)
    if text is None:
        msg = "expected a semantic version"
        raise LibraryError(msg)
    return parse_semver(text)


def _compare(left: object, right: object) -> int:
    if _tagged(left, SEMVER_TAG) is not None:
        return _semver(left).compare(_semver(right))
    return compare(_quantity(left), _quantity(right))


def _operand(value: object) -> Fraction:
    return Fraction(_int(value)) if isinstance(value, int) else _quantity(value)


def _int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    msg = "expected an int"
    raise LibraryError(msg)


def _as_integer(value: object) -> int:
    result = as_int64(_quantity(value))
    if result is None:
        msg = "cannot convert value to integer"
        raise LibraryError(msg)
    return result


def _add(left: object, right: object) -> dict[str, str]:
    return quantity_value(_quantity(left) + _operand(right))


def _sub(left: object, right: object) -> dict[str, str]:
    return quantity_value(_quantity(left) - _operand(right))


def _sign(value: object) -> int:
    return compare(_quantity(value), Fraction(0))


def _new_quantity(text: str) -> dict[str, str]:
    return quantity_value(parse_quantity(text))


def _new_semver(text: str, normalize: bool = False) -> dict[str, str]:  # noqa: FBT001, FBT002 - CEL arity
    return semver_value(parse_semver(text, normalize=normalize))


def _is_semver(text: str, normalize: bool = False) -> bool:  # noqa: FBT001, FBT002 - CEL arity
    return is_semver(text, normalize=normalize)


def _greater(left: object, right: object) -> bool:
    return _compare(left, right) > 0


def _less(left: object, right: object) -> bool:
    return _compare(left, right) < 0


def _major(value: object) -> int:
    return _semver(value).major


def _minor(value: object) -> int:
    return _semver(value).minor


def _patch(value: object) -> int:
    return _semver(value).patch


def _is_integer(value: object) -> bool:
    return as_int64(_quantity(value)) is not None


def _as_float(value: object) -> float:
    exact = _quantity(value)
    try:
        return float(exact)
    except OverflowError:  # Kubernetes gives an infinity where the value exceeds a double
        return math.inf if exact > 0 else -math.inf


def _overload(name: str, result: Any, params: list[Any], impl: Callable[..., object], *, member: bool = True) -> Any:
    return cel.Overload(name, result, params, is_member=member, impl=impl)


def _declarations() -> list[Any]:
    m, s, b, i = _T.MAP, _T.STRING, _T.BOOL, _T.INT
    overloads: dict[str, list[Any]] = {
        "quantity": [_overload("string_to_quantity", m, [s], _new_quantity, member=False)],
        "isQuantity": [_overload("is_quantity_string", b, [s], is_quantity, member=False)],
        "semver": [
            _overload("string_to_semver", m, [s], _new_semver, member=False),
            _overload("string_bool_to_semver", m, [s, b], _new_semver, member=False),
        ],
        "isSemver": [
            _overload("is_semver_string", b, [s], _is_semver, member=False),
            _overload("is_semver_string_bool", b, [s, b], _is_semver, member=False),
        ],
        # Quantity and semver share these; the implementation dispatches on the tag.
        "isGreaterThan": [_overload("is_greater_than", b, [m, m], _greater)],
        "isLessThan": [_overload("is_less_than", b, [m, m], _less)],
        "compareTo": [_overload("compare_to", i, [m, m], _compare)],
        "major": [_overload("semver_major", i, [m], _major)],
        "minor": [_overload("semver_minor", i, [m], _minor)],
        "patch": [_overload("semver_patch", i, [m], _patch)],
        # Kubernetes documents `q.sign()` but declares `sign(q)`; accept both.
        "sign": [
            _overload("quantity_sign", i, [m], _sign, member=False),
            _overload("quantity_sign_member", i, [m], _sign),
        ],
        "asInteger": [_overload("quantity_get_int", i, [m], _as_integer)],
        "isInteger": [_overload("quantity_is_integer", b, [m], _is_integer)],
        "asApproximateFloat": [_overload("quantity_get_float", _T.DOUBLE, [m], _as_float)],
        "add": [_overload("quantity_add", m, [m, m], _add), _overload("quantity_add_int", m, [m, i], _add)],
        "sub": [_overload("quantity_sub", m, [m, m], _sub), _overload("quantity_sub_int", m, [m, i], _sub)],
    }
    return [cel.FunctionDecl(name, decls) for name, decls in sorted(overloads.items())]


def new_env() -> Any:
    """The DRA selector environment: `device` plus the Kubernetes quantity and semver libraries."""
    return cel.NewEnv(variables={"device": _T.MAP}, functions=_declarations(), extensions=[ExtBindings()])


def device_value(device: Device) -> dict[str, object]:
    """The `device` variable for one device, as Kubernetes builds it from a ResourceSlice entry.

    Qualified names (`domain/name`) split on the first `/`; bare names take the driver as domain.
    Raises ValueError when an attribute or capacity does not parse (the device then matches nothing).
    """
    attributes: dict[str, dict[str, object]] = {}
    for key, attribute in device.attributes.items():
        domain, name = _qualified(key, device.driver)
        attributes.setdefault(domain, {})[name] = _attribute_value(attribute.type, attribute.value)
    capacity: dict[str, dict[str, object]] = {}
    for key, text in device.capacity.items():
        domain, name = _qualified(key, device.driver)
        capacity.setdefault(domain, {})[name] = quantity_value(parse_quantity(text))
    return {"driver": device.driver, "attributes": attributes, "capacity": capacity}


def _qualified(key: str, driver: str) -> tuple[str, str]:
    domain, sep, name = key.partition("/")
    return (domain, name) if sep else (driver, key)


def _attribute_value(kind: AttributeType, value: object) -> object:
    match kind:
        case AttributeType.VERSION if isinstance(value, str):
            return semver_value(parse_semver(value))
        case AttributeType.BOOL if isinstance(value, bool):
            return value
        case AttributeType.INT if isinstance(value, int) and not isinstance(value, bool):
            return value
        case AttributeType.STRING if isinstance(value, str):
            return value
        case _:
            msg = f"attribute value {value!r} is not of type {kind}"
            raise ValueError(msg)
