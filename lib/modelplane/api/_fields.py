"""The field names a wire model declares at a location, for "did you mean" on an unknown field.

pydantic reports an unknown field with its location only; the names the model would have taken
there are found by walking the model's annotations along that location: a model's field by its
wire name, a list's or tuple's item by index, a dict's value by key, every member of a union. A
part of the location that names no field (pydantic's label of a union member or validator) is
passed over.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

_SEQUENCES = (list, tuple, Sequence)


def _members(annotation: Any) -> list[Any]:
    """The types an annotation stands for: Annotated unwrapped, a union split into its members."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _members(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [m for arg in get_args(annotation) for m in _members(arg)]
    return [annotation]


def _model(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _wire_names(model: type[BaseModel]) -> dict[str, Any]:
    return {(f.alias or name): f.annotation for name, f in model.model_fields.items()}


def _step(annotation: Any, part: int | str) -> list[Any]:
    out: list[Any] = []
    for member in _members(annotation):
        origin, args = get_origin(member), get_args(member)
        model = _model(member)
        if isinstance(part, int) and origin in _SEQUENCES and args:
            out.append(args[0])
        elif isinstance(part, str) and model is not None and part in _wire_names(model):
            out.append(_wire_names(model)[part])
        elif isinstance(part, str) and origin is dict and len(args) == 2:  # noqa: PLR2004 (key and value types)
            out.append(args[1])
    return out


def declared(model: type[BaseModel], parent: Sequence[int | str]) -> list[str]:
    """Wire names of the fields declared at `parent` (an unknown field's location without its own name)."""
    found: list[Any] = [model]
    for part in parent:
        found = [t for a in found for t in _step(a, part)] or found
    return sorted({name for a in found for m in _members(a) if (k := _model(m)) for name in _wire_names(k)})


def suggestion(field: str, known: Sequence[str]) -> str:
    """` (did you mean 'x'?)` for the closest declared name, or nothing when none is close."""
    hint = difflib.get_close_matches(field, known, n=1)
    return f" (did you mean {hint[0]!r}?)" if hint else ""
