"""YAML in and out for the offline commands, fast enough for a whole fleet's input.

Loading has PyYAML's safe semantics (YAML 1.1 scalars, as Kubernetes' YAML reader resolves them),
with three differences that only make it faster or closer to what the API server stores:

- libyaml parses, and each distinct plain scalar's type is resolved once (PyYAML runs a list of
  regular expressions per scalar: most of the parse of a fleet with millions of scalars).
- Documents are built straight from the parsed nodes into plain dicts and lists (the stock
  constructor goes through generators per collection). Anything beyond JSON-shaped data (merge
  keys, explicit tags such as `!!binary` or `!!set`) takes the stock constructor instead.
- Timestamps stay the strings they were written as, and non-string keys become strings: a
  Kubernetes object carries both as JSON strings.

Bytes are decoded as libyaml detects an encoding: UTF-8, or UTF-16 when a byte-order mark says so,
and a leading byte-order mark is not part of the text (Windows editors write one). An integer no
JSON number can hold (a float64: what protobuf's Struct and the API server store) is refused.

A document whose aliases expand past what Kubernetes' YAML reader accepts is refused too. An alias
repeats what its anchor holds, so a few hundred bytes of nested aliases describe billions of nodes
(a "billion laughs"), and every later step that copies the document (encoding it for the
function, printing it) would take minutes and gigabytes. go-yaml v2 and v3 (decode.go
`allowedAliasRatio`, which sigs.k8s.io/yaml and so kubectl and the API server use) count the nodes
a document decodes into and how many of them come through an alias, and fail once more than 100
did, more than 1,000 were decoded, and the aliased share exceeds 99% (up to 400,000 nodes, then
falling linearly to 10% at 4,000,000). The same rule is applied here: to the counts the block
reader keeps while reading (`refuse_excessive`), and over libyaml's node graph, where an alias is
the same node reached again, by a walk that stops as soon as the rule fails (`check_aliases`):
either costs at most a few hundred thousand steps whatever the expansion.

The cycle collector is paused while loading: the parse allocates millions of objects that all
survive, and each collection would rescan everything loaded so far (a 1,000-cluster fleet's parse
took 2.5 times longer with it).
"""

from __future__ import annotations

import codecs
import datetime
import gc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from modelplane_function.cli.render import blockyaml
from modelplane_function.cli.render.wire import HEAD_KEYS, Doc, NodeEncoder, ObjectEncoder, Unusual

_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ, _TIMESTAMP = _TAG + "str", _TAG + "map", _TAG + "seq", _TAG + "timestamp"
_CONSTRUCTED = frozenset({_TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"})

RATIO_RANGE_LOW = 400_000
RATIO_RANGE_HIGH = 4_000_000


class ExcessiveAliasingError(yaml.YAMLError):
    pass


_MESSAGE = "document contains excessive aliasing (Kubernetes' YAML reader refuses it too)"


def allowed_ratio(decoded: int) -> float:
    """The share of decoded nodes that may come through aliases (go-yaml `allowedAliasRatio`)."""
    if decoded <= RATIO_RANGE_LOW:
        return 0.99
    if decoded >= RATIO_RANGE_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - RATIO_RANGE_LOW) / (RATIO_RANGE_HIGH - RATIO_RANGE_LOW)


def _excessive(decoded: int, aliased: int) -> bool:
    return aliased > 100 and decoded > 1000 and aliased / decoded > allowed_ratio(decoded)  # noqa: PLR2004 - go-yaml's


def refuse_excessive(decoded: int, aliased: int) -> None:
    """Raise ExcessiveAliasingError when a document decoded into `decoded` nodes, `aliased` through aliases."""
    if _excessive(decoded, aliased):
        raise ExcessiveAliasingError(_MESSAGE)


def check_aliases(root: Any, children: Callable[[Any], Iterable[Any] | None]) -> None:
    """Raise ExcessiveAliasingError when `root` expands as go-yaml would refuse to decode it.

    `children` gives a collection's members (a mapping's keys and values) and None for a scalar.
    A collection met again is an alias: it and everything under it count as aliased.
    """
    decoded = aliased = 0
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, in_alias = stack.pop()
        members = children(node)
        if members is not None:
            if id(node) in seen:
                in_alias = True
            else:
                seen.add(id(node))
        decoded += 1
        aliased += in_alias
        if _excessive(decoded, aliased):
            raise ExcessiveAliasingError(_MESSAGE)
        if members is not None:
            stack.extend((m, in_alias) for m in members)


def node_children(node: Node) -> Iterable[Node] | None:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, SequenceNode):
        return node.value  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return None


_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode(data: bytes) -> str:
    """A YAML file's text: UTF-8, or the encoding its byte-order mark names (the mark dropped).

    Raises UnicodeDecodeError.
    """
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), "utf-8")
    return data.decode(encoding)


class NumberTooLargeError(yaml.YAMLError):
    pass


def _json_number(value: Any) -> Any:
    """`value`, unless it is an integer too large for a float64 (Struct and JSON numbers are ones)."""
    if value.__class__ is int:
        try:
            float(value)
        except OverflowError:
            msg = f"an integer of {len(str(abs(value)))} digits is too large for a JSON number"
            raise NumberTooLargeError(msg) from None
    return value


_CLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_CDumper):  # type: ignore[misc, valid-type]
    """The C dumper without anchors: an input that shared a list (a YAML alias) prints it in full."""

    def ignore_aliases(self, data: Any) -> bool:  # noqa: ARG002 - PyYAML's hook signature
        return True


class _Loader(_CLoader):  # type: ignore[misc, valid-type]
    """A safe loader resolving each distinct plain scalar once (the result depends on the text only)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        if kind is ScalarNode and implicit[0]:
            tag = self._tags.get(value)
            if tag is None:
                tag = self._tags[value] = super().resolve(kind, value, implicit)
            return tag
        return super().resolve(kind, value, implicit)


class _Builder:
    def __init__(self, loader: _Loader) -> None:
        self._loader = loader
        self._scalars: dict[tuple[str, str], Any] = {}

    def scalar(self, node: ScalarNode) -> Any:
        tag, text = node.tag, node.value
        if tag == _STR:
            return text
        key = (tag, text)
        if key in self._scalars:
            return self._scalars[key]
        if tag == _TIMESTAMP:
            value = text
        elif tag in _CONSTRUCTED:
            try:
                value = _json_number(self._loader.construct_object(node))
            except (NumberTooLargeError, ValueError):  # ValueError: past Python's own limit on digits
                digits = sum(c.isdigit() for c in text)
                msg = f"an integer of {digits} digits is too large for a JSON number{node.start_mark or ''}"
                raise NumberTooLargeError(msg) from None
        else:
            raise Unusual
        self._scalars[key] = value
        return value

    def key(self, node: ScalarNode) -> str:
        """A mapping key as the string JSON makes of it (a key is never a number, however large)."""
        if node.tag == _STR:
            return node.value
        try:
            value = self.scalar(node)
        except NumberTooLargeError:
            value = self._loader.construct_object(node)
        return value if isinstance(value, str) else str(value)

    def document(self, node: Node) -> Any:
        """A document the stock constructor builds (merge keys, tags), as JSON-shaped data."""
        try:
            return _jsonable(self._loader.construct_document(node))
        except ValueError as e:  # a constructor's: a date that does not exist, an integer past Python's limit
            raise ConstructorError(None, None, str(e), node.start_mark) from None

    def build(self, node: Node) -> Any:
        cls = node.__class__
        if cls is ScalarNode:
            return self.scalar(node)  # type: ignore[arg-type]
        if cls is MappingNode and node.tag == _MAP:
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.__class__ is not ScalarNode:
                    raise Unusual
                out[self.key(key_node)] = self.build(value_node)
            return out
        if cls is SequenceNode and node.tag == _SEQ:
            return [self.build(item) for item in node.value]
        raise Unusual


def _jsonable(value: Any) -> Any:
    """What the stock constructor built, as JSON-shaped data (timestamps as RFC 3339 strings)."""
    if isinstance(value, datetime.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return _json_number(value)


@contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _plain_reader() -> Callable[[str], Any]:
    """A plain scalar's value as the safe loader types it (timestamps kept as text), memoised."""
    loader = _Loader("")
    builder = _Builder(loader)
    values: dict[str, Any] = {}

    def plain(text: str) -> Any:
        if text in values:
            return values[text]
        tag = loader.resolve(ScalarNode, text, (True, False))
        try:
            value = values[text] = builder.scalar(ScalarNode(tag, text))
        except (Unusual, NumberTooLargeError) as e:  # libyaml's path says where the number is
            raise blockyaml.Unsupported from e
        return value

    return plain


def _nodes(loader: _Loader, text: str) -> Iterator[Node]:
    """Each document's node, its alias expansion bounded (only a text with `*` can hold an alias)."""
    may_alias = "*" in text
    while loader.check_node():
        node = loader.get_node()
        if node is None:
            continue
        if may_alias:
            check_aliases(node, node_children)
        yield node


def _fast(text: str) -> list[Any] | None:
    """The documents by the block-style reader, or None when it declines the text."""
    try:
        with collector_paused():
            return blockyaml.load_all(text, _plain_reader(), refuse_excessive)
    except blockyaml.Unsupported:
        return None


def load_all(text: str) -> list[Any]:
    """Every document of a YAML stream (None for an empty one). Raises yaml.YAMLError and RecursionError."""
    fast = _fast(text)
    if fast is not None:
        return fast
    loader = _Loader(text)
    builder = _Builder(loader)
    out: list[Any] = []
    try:
        with collector_paused():
            for node in _nodes(loader, text):
                try:
                    out.append(builder.build(node))
                except Unusual:
                    out.append(builder.document(node))
    finally:
        loader.dispose()
    return out


class NotAnObjectError(ValueError):
    """A document of a stream is not a mapping (a list or a scalar)."""


def encode_all(text: str) -> list[Doc]:
    """Every non-empty document of a YAML stream, encoded for the function (see wire.py).

    Raises yaml.YAMLError, RecursionError and NotAnObjectError.
    """
    fast = _fast(text)
    if fast is not None:
        encoder = ObjectEncoder()
        out: list[Doc] = []
        for doc in fast:
            if doc is None:
                continue
            if not isinstance(doc, dict):
                raise NotAnObjectError
            head = {k: doc[k] for k in HEAD_KEYS if k in doc}  # pyright: ignore[reportUnknownVariableType]
            out.append(Doc.of(head, encoder.struct(doc)))  # pyright: ignore[reportUnknownArgumentType]
        return out
    loader = _Loader(text)
    builder = _Builder(loader)
    encoder = NodeEncoder(builder.scalar, builder.key)
    out = []
    try:
        with collector_paused():
            for node in _nodes(loader, text):
                try:
                    if not isinstance(node, MappingNode):
                        if builder.build(node) is None:
                            continue
                        raise NotAnObjectError
                    head = {
                        k.value: builder.build(v)
                        for k, v in node.value
                        if k.__class__ is ScalarNode and k.tag == _STR and k.value in HEAD_KEYS
                    }
                    out.append(Doc.of(head, encoder.struct(node)))
                except Unusual:
                    obj = builder.document(node)
                    if obj is None:
                        continue
                    if not isinstance(obj, Mapping):
                        raise NotAnObjectError from None
                    out.append(Doc.from_dict(obj))  # pyright: ignore[reportUnknownArgumentType]
    finally:
        loader.dispose()
    return out


def dump_all(docs: Sequence[Mapping[str, Any]]) -> str:
    """A YAML stream, `---` before each document, keys sorted, block style, no line folding."""
    return "".join(
        "---\n" + yaml.dump(dict(d), Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=1 << 20)
        for d in docs
    )
