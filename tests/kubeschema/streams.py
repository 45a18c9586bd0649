"""YAML streams read the way Kubernetes clients read them.

sigs.k8s.io/yaml goes through JSON, so unquoted dates stay strings, and the API server's strict
decoding refuses duplicate keys: both hold here. A document that does not parse is reported in
its place without hiding the documents after it. A `v1` `List` stands for its items.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar, cast

import yaml

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$", re.MULTILINE)


class YamlError(ValueError):
    """A document that is not valid YAML for Kubernetes."""


class _Loader(_BASE):  # pyright: ignore[reportUntypedBaseClass] - PyYAML's loaders are untyped
    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _BASE.yaml_implicit_resolvers.items()
    }


def _mapping(loader: Any, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            msg = f"duplicate key {key!r} at line {key_node.start_mark.line + 1}"
            raise YamlError(msg)
        seen.add(key)
    return cast("dict[Any, Any]", yaml.SafeLoader.construct_mapping(loader, node))


_Loader.add_constructor("tag:yaml.org,2002:map", _mapping)


def documents(text: str) -> Iterator[tuple[int, Any]]:
    """(index from 1, document or YamlError) for every non-empty document of a stream."""
    index = 0
    starts = [0, *(m.start() for m in _SEPARATOR.finditer(text))]
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        # Leading newlines keep the parser's line numbers those of the whole stream.
        chunk = "\n" * text.count("\n", 0, start) + text[start:end]
        try:
            doc = yaml.load(chunk, Loader=_Loader)
        except (yaml.YAMLError, YamlError) as error:
            index += 1
            yield index, YamlError(" ".join(str(error).split()))
            continue
        if doc is None:
            continue
        index += 1
        yield index, doc


def objects(text: str) -> Iterator[tuple[str, Any]]:
    """(`#index`, or `#index.items[i]` inside a List, object or YamlError) of a stream."""
    for index, doc in documents(text):
        body = cast("dict[str, Any]", doc) if isinstance(doc, dict) else {}
        items = body.get("items") if body.get("kind") == "List" else None
        if isinstance(items, list):
            for i, item in enumerate(cast("list[Any]", items)):
                yield f"#{index}.items[{i}]", item
        else:
            yield f"#{index}", doc
