"""What the API server does around schema validation, restated from apiextensions-apiserver
pkg/apiserver/schema: null pruning and defaulting before validation (defaulting/), then
list-type uniqueness (listtype/), embedded-resource metadata (objectmeta/) and CEL rules
(cel/) over the defaulted object. Built-in kinds get the null pruning (Go decodes `null` as the
zero value) and the list-type checks (server-side apply refuses duplicate keys); CRDs all of it.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from tests.kubeschema import cel, metadata
from tests.kubeschema.paths import Path

Schema = Mapping[str, Any]
Resolve = Callable[[Schema], Schema]


def no_refs(node: Schema) -> Schema:
    return node


def _props(node: Schema) -> Mapping[str, Schema]:
    return cast("Mapping[str, Schema]", node.get("properties") or {})


def _extra(node: Schema) -> Schema | None:
    extra = node.get("additionalProperties")
    return cast("Schema", extra) if isinstance(extra, Mapping) else None


def _items(node: Schema) -> Schema | None:
    items = node.get("items")
    return cast("Schema", items) if isinstance(items, Mapping) else None


def prune_nulls(value: Any, node: Schema | None, resolve: Resolve = no_refs) -> None:
    """Drop fields whose value is null where the schema allows no null and gives no default."""
    if isinstance(value, dict):
        obj = cast("dict[str, Any]", value)
        for key in list(obj):
            sub = _field_schema(resolve(node), key) if node is not None else None
            if obj[key] is None and not (sub and (sub.get("nullable") or "default" in sub)):
                del obj[key]
            else:
                prune_nulls(obj[key], sub, resolve)
    elif isinstance(value, list) and node is not None:
        for item in cast("list[Any]", value):
            prune_nulls(item, _items(resolve(node)), resolve)


def _field_schema(node: Schema, key: str) -> Schema | None:
    return _props(node).get(key) or _extra(node)


def apply_defaults(value: Any, node: Schema) -> None:
    """Structural defaulting: a missing (or null) field with a default gets it, then recurse."""
    if isinstance(value, dict):
        obj = cast("dict[str, Any]", value)
        for key, prop in _props(node).items():
            if "default" in prop and (key not in obj or (obj[key] is None and not prop.get("nullable"))):
                obj[key] = copy.deepcopy(prop["default"])
        extra = _extra(node)
        for key in obj:
            sub = _props(node).get(key) or extra
            if sub is None:
                continue
            if obj[key] is None and not sub.get("nullable") and "default" in sub:
                obj[key] = copy.deepcopy(sub["default"])
            apply_defaults(obj[key], sub)
    elif isinstance(value, list) and (items := _items(node)) is not None:
        for item in cast("list[Any]", value):
            apply_defaults(item, items)


@dataclass
class Findings:
    """What the walk found: errors by path, and how CEL rules went."""

    errors: list[tuple[Path, str]] = field(default_factory=list[tuple[Path, str]])
    rules_passed: int = 0
    transition_rules: int = 0


def check(
    node: Schema,
    value: Any,
    *,
    resolve: Resolve = no_refs,
    rules: bool = True,
    skip_embedded: Path | None = None,
) -> Findings:
    """List-type uniqueness, embedded-resource metadata and (with `rules`) CEL rules over `value`."""
    found = Findings()
    _walk(resolve(node), value, (), found, resolve, rules=rules, skip_embedded=skip_embedded)
    return found


def _walk(
    node: Schema, value: Any, path: Path, found: Findings, resolve: Resolve, *, rules: bool, skip_embedded: Path | None
) -> None:
    if value is None:
        return
    if isinstance(value, list):
        found.errors.extend(_list_type_errors(node, cast("list[Any]", value), path))
    if rules:
        _rules(node, value, path, found)
        for branch in cast("list[Schema]", node.get("allOf") or []):
            _rules(resolve(branch), value, path, found)
    if node.get("x-kubernetes-embedded-resource") and isinstance(value, dict) and path and path != skip_embedded:
        meta = cast("dict[str, Any]", value).get("metadata")
        found.errors.extend(metadata.embedded_errors(meta, (*path, "metadata")))

    def descend(sub: Schema, item: Any, where: Path) -> None:
        _walk(resolve(sub), item, where, found, resolve, rules=rules, skip_embedded=skip_embedded)

    if isinstance(value, dict):
        extra = _extra(node)
        for key, item in cast("dict[str, Any]", value).items():
            sub = _props(node).get(key) or extra
            if sub is not None:
                descend(sub, item, (*path, key))
    elif isinstance(value, list) and (items := _items(node)) is not None:
        for index, item in enumerate(cast("list[Any]", value)):
            descend(items, item, (*path, index))


def _rules(node: Schema, value: Any, path: Path, found: Findings) -> None:
    entries = cast("list[Mapping[str, Any]]", node.get("x-kubernetes-validations") or [])
    if not entries:
        return
    self_value = cel.root_to_cel(value, node) if not path else cel.to_cel(value, node)
    for rule in entries:
        verdict = cel.evaluate(rule, self_value)
        where = (*path, *field_path(rule))
        if verdict.outcome is cel.Outcome.PASSED:
            found.rules_passed += 1
        elif verdict.outcome is cel.Outcome.TRANSITION:
            found.transition_rules += 1
        elif verdict.outcome is cel.Outcome.FAILED:
            found.errors.append((where, f"CEL validation failed: {verdict.detail}"))
        else:
            found.errors.append((where, f"CEL rule error: {verdict.detail}"))


_FIELD_PATH_PART = re.compile(r"\.([^.\[]+)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]")


def field_path(rule: Mapping[str, Any]) -> Path:
    """A rule's `fieldPath` (`.spec.x`, `.spec['x.y']`, `.list[0]`), as path parts."""
    parts: list[str | int] = []
    for name, key, index in _FIELD_PATH_PART.findall(str(rule.get("fieldPath") or "")):
        parts.append(int(index) if index else name or key.replace("\\'", "'"))
    return tuple(parts)


def _list_type_errors(node: Schema, items: list[Any], path: Path) -> list[tuple[Path, str]]:
    kind = node.get("x-kubernetes-list-type")
    if kind == "set":
        seen: set[str] = set()
        errors: list[tuple[Path, str]] = []
        for index, item in enumerate(items):
            key = json.dumps(item, sort_keys=True)
            if key in seen:
                errors.append(((*path, index), f"duplicate entry {item!r} in a list-type=set list"))
            seen.add(key)
        return errors
    if kind == "map":
        return _list_map_errors(cast("list[str]", node.get("x-kubernetes-list-map-keys") or []), items, path)
    return []


def _list_map_errors(keys: list[str], items: list[Any], path: Path) -> list[tuple[Path, str]]:
    first: dict[str, int] = {}
    errors: list[tuple[Path, str]] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            errors.append(((*path, index), "must be an object for an array of list-type map"))
            continue
        entry = cast("dict[str, Any]", item)
        key = json.dumps([entry.get(k) for k in keys])
        if key in first:
            named = ", ".join(f"{k}={entry.get(k)!r}" for k in keys)
            errors.append(((*path, index), f"duplicate entry for map key(s) {named} (same as index {first[key]})"))
        else:
            first[key] = index
    return errors
