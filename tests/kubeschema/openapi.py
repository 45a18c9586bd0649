"""Kubernetes OpenAPI v3 and CRD structural schemas as JSON Schema 2020-12, checked by jsonschema.

The conversion keeps what the API server enforces: `nullable`, `x-kubernetes-int-or-string`,
`x-kubernetes-embedded-resource` (apiVersion, kind and ObjectMeta required), OpenAPI 3.0's
boolean `exclusiveMinimum`/`exclusiveMaximum`, `$ref` into the document's components, and
closed objects: a field the schema does not declare is an error, because the API server prunes
it (CRDs) or rejects it (strict field validation of built-in kinds). CRD objects without
properties are closed too (everything in them would be pruned) unless they preserve unknown
fields; built-in objects without properties (RawExtension, FieldsV1) stay open.

`pattern` is matched with RE2, the engine of Go's regexp that the API server uses, so
RE2-only syntax (`\\z`, `\\p{L}`) is checked rather than skipped. Formats the API server checks
on strings we emit are checked too: `date-time` and `byte`.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators

from tests.kubeschema.cel import re2_search
from tests.kubeschema.paths import Path, render

Schema = Mapping[str, Any]
JsonSchema = dict[str, Any]

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# The grammar of resource.Quantity, as controller-gen writes it into every CRD that has one.
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_REF_PREFIX = "#/components/schemas/"
_COPIED = (
    "enum",
    "const",
    "required",
    "minimum",
    "maximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "format",
)
# jsonschema keywords whose failure the API server reports as NotSupported, Required, TooLong,
# TooMany or TypeInvalid: with one of those it does not evaluate CEL rules (hasBlockingErr).
BLOCKING = frozenset({"enum", "required", "maxLength", "maxItems", "maxProperties", "type"})


def to_json_schema(node: Schema, *, structural: bool, closed: bool = True) -> JsonSchema:
    """One schema node, converted; `structural` for CRD schemas, `closed` False inside anyOf/allOf/oneOf/not."""
    out: JsonSchema = {}
    if "$ref" in node:
        out["$ref"] = "#/$defs/" + str(node["$ref"]).removeprefix(_REF_PREFIX)
    types = _types(node)
    if types:
        out["type"] = types[0] if len(types) == 1 else types
    for key in _COPIED:
        if key in node:
            out[key] = node[key]
    if node.get("nullable") and "enum" in out:
        out["enum"] = [*out["enum"], None]
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(exclusive) is True and bound in out:
            out[exclusive] = out.pop(bound)
    props = cast("Mapping[str, Schema]", node.get("properties") or {})
    if props:
        out["properties"] = {k: to_json_schema(v, structural=structural, closed=closed) for k, v in props.items()}
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        out["additionalProperties"] = to_json_schema(cast("Schema", extra), structural=structural, closed=closed)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    items = node.get("items")
    if isinstance(items, Mapping):
        out["items"] = to_json_schema(cast("Schema", items), structural=structural, closed=closed)
    for junctor in ("allOf", "anyOf", "oneOf"):
        if isinstance(node.get(junctor), list):
            branches = cast("list[Schema]", node[junctor])
            out[junctor] = [to_json_schema(b, structural=structural, closed=False) for b in branches]
    if isinstance(node.get("not"), Mapping):
        out["not"] = to_json_schema(cast("Schema", node["not"]), structural=structural, closed=False)
    if node.get("x-kubernetes-embedded-resource"):
        _embed(out)
    if closed and _closes(node, structural=structural):
        out["additionalProperties"] = False
    return out


def _types(node: Schema) -> list[str]:
    if node.get("x-kubernetes-int-or-string"):
        types = ["integer", "string"]
    elif isinstance(node.get("type"), str):
        types = [str(node["type"])]
    else:
        return []
    return [*types, "null"] if node.get("nullable") else types


def _embed(out: JsonSchema) -> None:
    props = out.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string", "minLength": 1})
    props.setdefault("kind", {"type": "string", "minLength": 1})
    props["metadata"] = {"$ref": "#/$defs/" + OBJECT_META}
    out["required"] = sorted({*out.get("required", []), "apiVersion", "kind"})


def _closes(node: Schema, *, structural: bool) -> bool:
    """Whether fields the node does not declare are errors."""
    is_object = node.get("type") == "object" or "properties" in node
    if not is_object or "additionalProperties" in node or "$ref" in node:
        return False
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return False
    return structural or "properties" in node


def builtin_defs(components: Mapping[str, Schema], roots: list[str]) -> dict[str, JsonSchema]:
    """The converted closure of `roots` over an OpenAPI document's components."""
    defs: dict[str, JsonSchema] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in defs or name not in components:
            continue
        defs[name] = to_json_schema(components[name], structural=False)
        pending.extend(_refs(components[name]))
    if QUANTITY in defs:
        # The OpenAPI says only "string"; the API server parses the quantity grammar and accepts numbers.
        defs[QUANTITY] = {"anyOf": [{"type": "string", "pattern": QUANTITY_PATTERN}, {"type": "number"}]}
    return defs


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in cast("Mapping[str, Any]", node).items():
            if key == "$ref" and isinstance(value, str):
                yield value.removeprefix(_REF_PREFIX)
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in cast("list[Any]", node):
            yield from _refs(value)


def _re2_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    del schema
    if validator.is_type(instance, "string") and not re2_search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_formats = FormatChecker(formats=())


@_formats.checks("date-time")
def _is_date_time(instance: object) -> bool:
    return not isinstance(instance, str) or _RFC3339.match(instance) is not None


@_formats.checks("byte")
def _is_base64(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        base64.b64decode(instance, validate=True)
    except binascii.Error:
        return False
    return True


# validators.extend is untyped in types-jsonschema.
_Validator: Any = validators.extend(Draft202012Validator, {"pattern": _re2_pattern})  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def new_validator(schema: JsonSchema) -> Any:
    return _Validator(schema, format_checker=_formats)


@dataclass(frozen=True, slots=True)
class SchemaError:
    path: Path
    message: str
    blocking: bool  # the API server would not evaluate CEL rules after it


def schema_errors(validator: Any, value: Any) -> list[SchemaError]:
    """Every error of `value`, one per problem, in a stable order."""
    out: list[SchemaError] = []
    for error in cast("Iterator[ValidationError]", validator.iter_errors(value)):
        path: Path = tuple(error.absolute_path)
        blocking = error.validator in BLOCKING
        out.extend(SchemaError(p, m, blocking) for p, m in _describe(error, path))
    return sorted(set(out), key=lambda e: (render(e.path), e.message))


def _describe(error: ValidationError, path: Path) -> list[tuple[Path, str]]:
    if error.validator == "additionalProperties" and error.validator_value is False:
        instance = cast("Mapping[str, Any]", error.instance)
        known = list(cast("Mapping[str, Any]", error.schema).get("properties", {}))
        return [((*path, k), _unknown(k, known)) for k in instance if k not in known]
    if error.validator in ("anyOf", "oneOf") and error.context:
        reasons = list(dict.fromkeys(e.message for e in error.context))
        return [(path, f"{_short(error.message)} ({' / '.join(_short(r) for r in reasons[:4])})")]
    return [(path, _short(error.message))]


def _unknown(field: str, known: list[str]) -> str:
    hint = difflib.get_close_matches(field, known, n=1)
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    return f"unknown field{suggestion}: not in the schema, the API server would prune or reject it"


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
