"""The fast YAML reader gives what PyYAML's safe loader gives, as JSON-shaped data, and encodes it
exactly as protobuf's Struct does."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_function.cli.render import blockyaml, yamlio
from modelplane_function.cli.render.wire import Doc, required_resources
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.reader import ReaderError
from yaml.scanner import ScannerError


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    want: list[Any] | None = None  # None: what yaml.safe_load_all gives, keys as strings


CASES = [
    Case(name="a Kubernetes object", text="apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {x: 'y'}}\n"),
    Case(
        name="YAML 1.1 scalars resolve as the safe loader resolves them",
        text="a: yes\nb: off\nc: 010\nd: 0x1f\ne: 1_000\nf: .inf\ng: -.5\nh: ~\ni: null\nj: '010'\nk: 1e3\nl: 3.0\n",
    ),
    Case(name="explicit string tags win", text="a: !!str 10\nb: !!int '7'\n"),
    # A Python dict would merge 1 and True (the safe loader keeps one key); JSON keeps both.
    Case(name="keys 1 and yes stay two keys", text="? 1\n? yes\n", want=[{"1": None, "True": None}]),
    Case(name="several documents and an empty one", text="---\na: 1\n---\n---\n- 1\n- [2, {b: c}]\n"),
    Case(name="anchors and aliases are copied", text="a: &x {b: [1, 2]}\nc: *x\n"),
    Case(name="merge keys take the stock constructor", text="base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n"),
    Case(
        name="non-string keys become strings",
        text="1: a\ntrue: b\n2.5: c\n",
        want=[{"1": "a", "True": "b", "2.5": "c"}],
    ),
    Case(
        name="timestamps stay the strings they were written as",
        text="t: 2024-01-01T00:00:00Z\nd: 2024-01-02\nu: 2024-01-01 10:00:00.5\n",
        want=[{"t": "2024-01-01T00:00:00Z", "d": "2024-01-02", "u": "2024-01-01 10:00:00.5"}],
    ),
    Case(
        name="timestamps in a document with merge keys become RFC 3339 strings",
        text="b: &b {x: 1}\nd: {<<: *b}\nt: 2024-01-01 00:00:00Z\n",
        want=[{"b": {"x": 1}, "d": {"x": 1}, "t": "2024-01-01T00:00:00Z"}],
    ),
    Case(name="block scalars keep their text", text="a: |\n  line one\n  line two\nb: >-\n  folded\n  text\n"),
    Case(name="unicode survives", text='name: "caf\\u00e9 \\U0001F600"\n'),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_load_all_matches_the_safe_loader(case: Case) -> None:
    want = case.want if case.want is not None else [_jsonable(d) for d in yaml.safe_load_all(case.text)]
    assert yamlio.load_all(case.text) == want


@pytest.mark.parametrize("case", [c for c in CASES if "- 1" not in c.text], ids=lambda c: c.name)
def test_encoded_documents_are_the_struct_of_the_loaded_ones(case: Case) -> None:
    loaded = [d for d in yamlio.load_all(case.text) if d is not None]
    want = []
    for d in loaded:
        s = struct_pb2.Struct()
        s.update(d)
        want.append(s)
    got = [fnv1.Resources.FromString(d.item).items[0].resource for d in yamlio.encode_all(case.text)]
    assert got == want


def test_a_document_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(yamlio.NotAnObjectError):
        yamlio.encode_all("a: 1\n---\n- 1\n")


def test_required_resources_keep_every_name_even_with_nothing_found() -> None:
    a = Doc.from_dict({"kind": "A", "metadata": {"name": "a"}, "spec": {"n": 1}})
    req = fnv1.RunFunctionRequest.FromString(required_resources({"found": [a, a], "none": []}))
    want = fnv1.RunFunctionRequest()
    want.required_resources["none"].SetInParent()
    for _ in range(2):
        want.required_resources["found"].items.add().resource.update(
            {"kind": "A", "metadata": {"name": "a"}, "spec": {"n": 1}}
        )
    assert req == want


def test_dump_all_writes_block_yaml_with_sorted_keys() -> None:
    got = yamlio.dump_all([{"b": {"y": [1, "two"]}, "a": "x: y"}, {"c": None}])
    assert got == "---\na: 'x: y'\nb:\n  y:\n  - 1\n  - two\n---\nc: null\n"


def test_dump_all_prints_a_shared_value_in_full_without_anchors() -> None:
    env = [{"name": "HF_TOKEN", "value": "x"}]  # an input written with a YAML alias shares it
    got = yamlio.dump_all([{"a": env, "b": env}])
    assert got == "---\na:\n- name: HF_TOKEN\n  value: x\nb:\n- name: HF_TOKEN\n  value: x\n"


# --- the block-style reader against PyYAML ----------------------------------------------------

_TEXT = st.text(alphabet="abcXYZ019 -._/:", max_size=10) | st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from(" :#-'\"{}[]&*!|>%@`,?"),
    max_size=12,
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, width=32)
    | _TEXT
    | st.sampled_from(["yes", "off", "~", "010", "0x1f", "1_000", ".inf", "2024-01-01", "1:20", "-", "a #b", "*x"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=20,
)
_DOCS = st.lists(st.dictionaries(_TEXT, _VALUES, min_size=1, max_size=5), min_size=1, max_size=3)


def _dumped(docs: list[Any], style: str) -> str:
    dumper = yaml.CSafeDumper if style == "c" else yaml.SafeDumper
    return yaml.dump_all(
        docs, Dumper=dumper, default_flow_style=False, sort_keys=style == "c", allow_unicode=True, width=1 << 20
    )


@given(docs=_DOCS, style=st.sampled_from(["c", "python"]), shared=st.booleans())
@settings(max_examples=300, deadline=None)
def test_the_block_reader_reads_what_pyyaml_reads_or_declines(docs: list[Any], style: str, shared: bool) -> None:
    if shared:  # the same object twice: dumpers write an anchor and an alias
        docs = [{**d, "again": d.get(next(iter(d), ""), [1])} for d in docs]
    text = _dumped(docs, style)
    want = [_jsonable(d) for d in yaml.load_all(text, Loader=yaml.CSafeLoader)]
    try:
        got = blockyaml.load_all(text, yamlio._plain_reader())
    except blockyaml.Unsupported:
        return  # declined: libyaml reads it
    assert got == want


@dataclass(frozen=True)
class Block:
    name: str
    text: str
    fast: bool  # whether the block reader takes it (else libyaml does); either way the result is PyYAML's


BLOCKS = [
    Block(
        name="kubectl-style nesting and an indentless list",
        text="a:\n  b:\n  - c: 1\n    d: [ ]\n  - - x\n",
        fast=False,
    ),
    Block(name="comments and a document marker", text="# c\n---\na: b  # tail\n# c\nc: 'it''s'\n", fast=True),
    Block(name="an anchored list and its alias", text="a: &id1\n- 1\nb: *id1\n", fast=True),
    Block(name="a multi-line plain scalar", text="a: one\n  two\n", fast=False),
    Block(name="a block scalar", text="a: |\n  x\n", fast=False),
    Block(name="a flow mapping", text="a: {b: 1}\n", fast=False),
    Block(name="a double-quoted escape JSON lacks", text='a: "\\x41"\n', fast=False),
    Block(name="a quoted key", text="'a b': 1\n\"c\": [ ]\n", fast=False),
    Block(name="empty flow collections", text="a: {}\nb: []\n", fast=True),
    Block(name="an empty stream and empty documents", text="---\n---\na: 1\n---\n", fast=True),
]


@pytest.mark.parametrize("case", BLOCKS, ids=lambda c: c.name)
def test_block_reader_cases(case: Block) -> None:
    want = [_jsonable(d) for d in yaml.safe_load_all(case.text)]
    try:
        got: list[Any] | None = blockyaml.load_all(case.text, yamlio._plain_reader())
    except blockyaml.Unsupported:
        got = None
    assert (got is not None, yamlio.load_all(case.text)) == (case.fast, want)
    if got is not None:
        assert got == want


# --- fuzzed text: the block reader agrees with the safe loader, or declines ---------------------

_FUZZ_KEYS = ["", "k: ", "a b: ", "&a k: ", "'q': ", "- ", "- k: ", "- &a ", "- - ", "? ", "&x:", "k: &b "]
_FUZZ_VALUES = [
    "x", "1", "yes", "~", "", "*a", "*b", "&a x", "&b", "{}", "[]", "[1, 2]", "'it''s'", '"d\\n"', "x: y", "x #c",
    "#c", "-", ":", "|", "9" * 400, "9" * 5000, "0x1f", "1e3", "a\u2028b", "a\u0085b", "\ufeff", "\x01", "\t", "'", "*", "&",
]  # fmt: skip
_FUZZ_LINE = st.tuples(st.sampled_from([0, 1, 2, 4]), st.sampled_from(_FUZZ_KEYS), st.sampled_from(_FUZZ_VALUES))
_FUZZ_TEXT = st.lists(_FUZZ_LINE | st.sampled_from([(0, "---", ""), (0, "", "")]), min_size=1, max_size=8).map(
    lambda lines: "".join(" " * indent + key + value + "\n" for indent, key, value in lines)
)


class _StringKeys(yaml.CSafeLoader):
    """The safe loader with each key made a string as it is read, as YAML-to-JSON conversion (and so
    Kubernetes) makes it: `1` and `yes` stay two keys, where a Python dict would merge 1 and True."""


def _string_keyed(loader: _StringKeys, node: yaml.MappingNode) -> dict[str, Any]:
    loader.flatten_mapping(node)
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        hash(key)  # an unhashable key is refused, as the safe loader refuses it
        out[str(key)] = loader.construct_object(value_node, deep=True)
    return out


_StringKeys.add_constructor("tag:yaml.org,2002:map", _string_keyed)


def _safe_loader(text: str) -> tuple[str, Any]:
    try:
        return "read", [_jsonable(d) for d in yaml.load_all(text, Loader=_StringKeys)]
    except (yaml.YAMLError, RecursionError, TypeError, ValueError) as e:  # an unhashable key, 5,000 digits
        return "refused", type(e).__name__


def _too_large(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_too_large(v) for v in value.values())  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return any(_too_large(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return type(value) is int and value.bit_length() > 1024  # past float64's range


def _yamlio(text: str) -> tuple[str, Any]:
    try:
        return "read", yamlio.load_all(text)
    except yamlio.NumberTooLargeError:
        return "too large", None
    except (yaml.YAMLError, RecursionError) as e:
        return "refused", type(e).__name__


@given(text=_FUZZ_TEXT)
@settings(max_examples=1500, deadline=None)
def test_fuzzed_text_reads_as_the_safe_loader_reads_it_or_is_declined(text: str) -> None:
    want = _safe_loader(text)
    try:
        got = blockyaml.load_all(text, yamlio._plain_reader())
    except blockyaml.Unsupported:
        got = None  # declined: libyaml reads it
    if got is not None:
        assert ("read", got) == want
    # And whichever reader took it, yamlio reads what the safe loader reads, and refuses what it
    # refuses and what no JSON number holds (the first error met may differ: a stream is read in order).
    # A too-large integer is refused even where a duplicate key overwrites it.
    kind, value = _yamlio(text)
    if kind == "too large":
        assert re.search(r"[0-9]{309}", text)
    elif want[0] == "read" and not _too_large(want[1]):
        assert (kind, value) == want
    else:
        assert kind != "read", value


@dataclass(frozen=True)
class Refused:
    name: str
    text: str
    error: type[Exception]
    message: str  # how str(error) starts


REFUSED = [
    Refused(
        name="an anchor defined twice",
        text="a: &x 1\nb: &x 2\nc: *x\n",
        error=ComposerError,
        message="found duplicate anchor; first occurrence",
    ),
    Refused(name="an anchor with a colon", text="a: &x:\n", error=ScannerError, message="mapping values"),
    Refused(name="a line separator", text="a: b\u2028c\n", error=ScannerError, message="while scanning"),
    Refused(name="a control character", text="a: x\x01\n", error=ReaderError, message="unacceptable"),
    Refused(
        name="an integer no JSON number holds",
        text="a: " + "9" * 400 + "\n",
        error=yamlio.NumberTooLargeError,
        message="an integer of 400 digits is too large for a JSON number",
    ),
    Refused(
        name="an integer past Python's limit on digits",
        text="a: " + "9" * 5000 + "\n",
        error=yamlio.NumberTooLargeError,
        message="an integer of 5000 digits is too large for a JSON number",
    ),
    Refused(
        name="a date that does not exist, where the stock constructor reads it",
        text="b: &b {x: 1}\nc: {<<: *b, d: 2024-13-45}\n",
        error=ConstructorError,
        message="month must be in 1..12",
    ),
    Refused(
        name="an integer no JSON number holds, merged",
        text="b: &b {x: 1}\nc: {<<: *b, y: " + "9" * 400 + "}\n",
        error=yamlio.NumberTooLargeError,
        message="an integer of 400 digits is too large for a JSON number",
    ),
]


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c.name)
@pytest.mark.parametrize("read", [yamlio.load_all, yamlio.encode_all], ids=["load_all", "encode_all"])
def test_text_the_safe_loader_refuses_is_refused(case: Refused, read: Any) -> None:
    with pytest.raises(case.error) as got:
        read(case.text)
    assert str(got.value).lstrip().startswith(case.message)


def test_an_anchor_on_the_key_of_a_sequence_entry_is_the_keys() -> None:
    text = "- &a x: y\n- *a\n"
    assert (yamlio.load_all(text), yamlio.load_all(text)) == ([[{"x": "y"}, "x"]], _safe_loader(text)[1])
