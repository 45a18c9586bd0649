"""Shared building blocks of the wire models: the base config, number coercion, error messages.

Numbers reach the function through protobuf Struct, where every number is a float. `Int` takes an
integral float (3.0) as the int it stands for and rejects a fractional one (3.5); strings and
booleans are not numbers. Quantities (`Quantity`) stay strings; a bare number is turned into
its string form, as the API server's int-or-string does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, ValidationError
from pydantic.alias_generators import to_camel

from modelplane.api._fields import declared, suggestion
from modelplane.errors import SpecError


class Wire(BaseModel):
    """Base of every wire model: immutable, closed, camelCase on the wire."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, alias_generator=to_camel)


class Observed(BaseModel):
    """Base for status written by others (Crossplane, other controllers): unknown fields are ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True, alias_generator=to_camel)


def _integral(value: object) -> object:
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        msg = f"must be a whole number, got {value}"
        raise ValueError(msg)
    return value


def _quantity(value: object) -> object:
    if isinstance(value, bool):
        return value  # left for the str validator to reject
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    return value


Int = Annotated[int, BeforeValidator(_integral), Strict()]
Count = Annotated[int, BeforeValidator(_integral), Strict(), Field(ge=1)]
Quantity = Annotated[str, BeforeValidator(_quantity), Field(min_length=1)]
Labels = dict[str, str]
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
R = TypeVar("R")


def _location(prefix: str, loc: tuple[int | str, ...]) -> str:
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else part
    return path or "<root>"


def _message(error: Mapping[str, Any], model: type[BaseModel] | None) -> str:
    if error["type"] == "extra_forbidden":
        loc: tuple[int | str, ...] = error["loc"]
        known = declared(model, loc[:-1]) if model is not None else []
        return f"unknown field{suggestion(str(loc[-1]), known)}"
    text = str(error["msg"]).replace(" after validation", "")
    return text.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def spec_error(prefix: str, error: ValidationError, model: type[BaseModel] | None = None) -> SpecError:
    """One readable SpecError from a pydantic ValidationError: `path: problem; path: problem`.

    With the `model` validated, an unknown field names the closest field declared beside it."""
    items = [
        # pydantic adds the union member or validator name to the location; keep only field names
        (tuple(p for p in item["loc"] if isinstance(p, int) or not _is_internal(p)), item)
        for item in error.errors(include_url=False)
    ]
    parts = [
        f"{_location(prefix, loc)}: {_message(item, model)}"
        for loc, item in items
        # a list whose item failed also reports being too short; the item's error is the real one
        if not (item["type"] == "too_short" and any(o[: len(loc)] == loc and o != loc for o, _ in items))
    ]
    return SpecError("; ".join(parts))


def _is_internal(part: str) -> bool:
    return part.startswith(("function-", "tagged-union")) or "[" in part


def unique(what: str, names: list[str]) -> None:
    """Reject repeated names of a list-map (the XRD's x-kubernetes-list-map-keys)."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        msg = f"{what} must be unique, repeated: {', '.join(repeated)}"
        raise ValueError(msg)


def validate(model: type[M], data: object, prefix: str, *, context: dict[str, Any] | None = None) -> M:
    """Validate `data` as `model`, turning validation errors into one SpecError naming the field paths."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as err:
        raise spec_error(prefix, err, model) from None


def dump(model: BaseModel) -> dict[str, Any]:
    """The wire form of a model: camelCase keys, unset optional fields left out, JSON types."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def maybe(value: T | None, convert: Callable[[T], R]) -> R | None:
    return None if value is None else convert(value)
