"""The function parses each fleet object once per content, across calls (modelplane_function.handlers.memo)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from modelplane.errors import SpecError
from modelplane_function.handlers.memo import Memo, converted, identity


def _struct(obj: Mapping[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(dict(obj), struct_pb2.Struct())


def _obj(name: str, *, nodes: int = 1, order: str = "ab") -> dict[str, Any]:
    fields = {"a": 1, "b": nodes}
    return {"metadata": {"name": name}, "spec": {k: fields[k] for k in order}}


SIZE = len(_struct(_obj("x")).SerializeToString(deterministic=True))  # every test object has this size


class Counting:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, obj: Mapping[str, Any]) -> tuple[str, int]:
        name = obj["metadata"]["name"]
        self.calls.append(name)
        if name == "bad":
            msg = "spec.b: must be positive"
            raise SpecError(msg)
        return (name, obj["spec"]["b"])


@dataclass(frozen=True)
class Case:
    name: str
    calls: tuple[list[dict[str, Any]], ...]  # the objects of successive calls
    limit: int
    want_values: list[tuple[str, int]]  # of the last call
    want_parsed: list[str]  # every parse actually run, in order
    limit_bytes: int = 2**30


CASES = [
    Case(
        name="the same objects in a second call are not parsed again",
        calls=([_obj("x"), _obj("y")], [_obj("x"), _obj("y")]),
        limit=10,
        want_values=[("x", 1), ("y", 1)],
        want_parsed=["x", "y"],
    ),
    Case(
        name="a changed object is parsed again and the unchanged one is not",
        calls=([_obj("x"), _obj("y")], [_obj("x", nodes=2), _obj("y")]),
        limit=10,
        want_values=[("x", 2), ("y", 1)],
        want_parsed=["x", "y", "x"],
    ),
    Case(
        name="key order inside an object does not make it new content",
        calls=([_obj("x", order="ab")], [_obj("x", order="ba")]),
        limit=10,
        want_values=[("x", 1)],
        want_parsed=["x"],
    ),
    Case(
        name="beyond the limit the least recently used object is parsed again",
        calls=([_obj("x"), _obj("y")], [_obj("z")], [_obj("y"), _obj("x")]),
        limit=2,
        want_values=[("y", 1), ("x", 1)],
        want_parsed=["x", "y", "z", "x"],
    ),
    Case(
        name="beyond the byte budget the least recently used object is parsed again",
        calls=([_obj("x"), _obj("y")], [_obj("z")], [_obj("y"), _obj("x")]),
        limit=10,
        limit_bytes=2 * SIZE,
        want_values=[("y", 1), ("x", 1)],
        want_parsed=["x", "y", "z", "x"],
    ),
    Case(
        name="an object larger than the budget is still returned, and held until the next one",
        calls=([_obj("x")], [_obj("x")]),
        limit=10,
        limit_bytes=1,
        want_values=[("x", 1)],
        want_parsed=["x"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_objects_are_parsed_once_per_content(case: Case) -> None:
    parse = Counting()
    memo = Memo("Thing", converted(parse), limit=case.limit, limit_bytes=case.limit_bytes)
    values: list[tuple[str, int]] = []
    for objs in case.calls:
        values = memo.parse_all([_struct(o) for o in objs])
    assert (values, parse.calls) == (case.want_values, case.want_parsed)
    assert memo.held_bytes <= max(case.limit_bytes, SIZE)


def test_an_object_that_does_not_parse_raises_with_its_name_every_time() -> None:
    parse = Counting()
    memo = Memo("Thing", converted(parse))
    bad = _struct({"metadata": {"name": "bad", "namespace": "ns"}, "spec": {"b": 0}})
    errors = []
    for _ in range(2):
        with pytest.raises(SpecError) as info:
            memo.parse(bad)
        errors.append(str(info.value))
    assert (errors, parse.calls) == (["Thing ns/bad: spec.b: must be positive"] * 2, ["bad", "bad"])


@dataclass(frozen=True)
class IdentityCase:
    name: str
    obj: dict[str, Any]
    want: tuple[str, str]


IDENTITY_CASES = [
    IdentityCase(
        "namespace and name are read as they are", {"metadata": {"namespace": "ns", "name": "x"}}, ("ns", "x")
    ),
    IdentityCase("a cluster-scoped object has an empty namespace", {"metadata": {"name": "x"}}, ("", "x")),
    IdentityCase("no metadata gives empty strings", {"spec": {}}, ("", "")),
    IdentityCase("metadata that is not an object gives empty strings", {"metadata": "x"}, ("", "")),
    IdentityCase("a number is spelled as the converted dict would spell it", {"metadata": {"name": 3}}, ("", "3")),
]


@pytest.mark.parametrize("case", IDENTITY_CASES, ids=lambda c: c.name)
def test_identity_reads_namespace_and_name_without_converting(case: IdentityCase) -> None:
    assert identity(_struct(case.obj)) == case.want
