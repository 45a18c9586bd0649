"""The parsed-object memo's keys: the API server's uid and resourceVersion where an object has them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from modelplane_function.handlers.memo import Memo


def _struct(obj: dict[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(obj, struct_pb2.Struct())


def obj(*, uid: str = "", version: str = "", value: str = "a") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "x"}
    if uid:
        meta["uid"] = uid
    if version:
        meta["resourceVersion"] = version
    return {"metadata": meta, "spec": {"value": value}}


@dataclass(frozen=True)
class Case:
    name: str
    first: dict[str, Any]
    second: dict[str, Any]
    parsed: int  # how often the reader ran for the two
    want: tuple[str, str] | None = None  # what each parse gives; None: each object's own value


CASES = [
    Case("the same uid and resourceVersion parse once", obj(uid="u", version="1"), obj(uid="u", version="1"), 1),
    Case("a new resourceVersion parses again", obj(uid="u", version="1"), obj(uid="u", version="2", value="b"), 2),
    Case("without a resourceVersion, equal content parses once", obj(uid="u"), obj(uid="u"), 1),
    Case("without a resourceVersion, new content parses again", obj(uid="u"), obj(uid="u", value="b"), 2),
    Case(
        "a hand-edited copy of a different size under the same stamp parses again",
        obj(uid="u", version="1"),
        obj(uid="u", version="1", value="a longer value"),
        2,
    ),
    Case("objects without stamps, keyed by content", obj(), obj(), 1),
    Case(
        "the stamp names the content: an object under the same stamp is not read again",
        obj(uid="u", version="1"),
        obj(uid="u", version="1", value="b"),
        1,
        want=("a", "a"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_memo_keys(case: Case) -> None:
    calls: list[str] = []

    def read(struct: struct_pb2.Struct) -> str:
        value = struct.fields["spec"].struct_value.fields["value"].string_value
        calls.append(value)
        return value

    memo: Memo[str] = Memo("Thing", read)
    got = (memo.parse(_struct(case.first)), memo.parse(_struct(case.second)))
    want = case.want or (case.first["spec"]["value"], case.second["spec"]["value"])
    assert (got, len(calls)) == (want, case.parsed)
