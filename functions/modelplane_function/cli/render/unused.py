"""Input documents no requirement read, each named with why, so a typo'd fleet file is not silent.

The store records every selector it answers and every document an answer held (`Usage`). After a
render, each required-resource document never handed to the function is one of: of a kind the
function never asked for (a misspelt kind, or a file that does not belong), of a kind it asked for
under another apiVersion, shadowed by a later document with the same apiVersion, kind, namespace
and name, or simply not selected (a Namespace no deployment lives in).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelplane_function.cli.render.wire import Doc
from modelplane_function.cli.render.xr import name_of, namespace_of


def _key(head: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (str(head.get("apiVersion", "")), str(head.get("kind", "")), namespace_of(head), name_of(head))


@dataclass(slots=True)
class Usage:
    """What the function asked for and was given, across every store of one run."""

    asked: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])  # (apiVersion, kind)
    given: set[int] = field(default_factory=set[int])  # id() of each Doc an answer held
    given_keys: set[tuple[str, str, str, str]] = field(default_factory=set[tuple[str, str, str, str]])

    def record(self, api_version: str, kind: str, docs: Iterable[Doc]) -> None:
        self.asked.add((api_version, kind))
        for doc in docs:
            self.given.add(id(doc))
            self.given_keys.add(_key(doc.head))


def _why(head: Mapping[str, Any], usage: Usage) -> str:
    api_version, kind = str(head.get("apiVersion", "")), str(head.get("kind", ""))
    if _key(head) in usage.given_keys:
        return "a later document with the same apiVersion, kind, namespace and name replaced it"
    versions = sorted({v for v, k in usage.asked if k == kind})
    if not versions:
        kinds = sorted({k for _, k in usage.asked})
        close = difflib.get_close_matches(kind, kinds, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"the function reads no kind {kind!r}{hint}, only {', '.join(kinds)}"
    if api_version not in versions:
        return f"the function reads {kind} as apiVersion {' or '.join(versions)}, not {api_version!r}"
    return f"the function asked for no {kind} of this name or labels"


def notes(inputs: Iterable[tuple[Path, Doc]], usage: Usage) -> list[str]:
    """One line per input document the function was never given, with its file and why, in input order.

    Nothing is said when the function asked for nothing at all: it failed first, and says why."""
    if not usage.asked:
        return []
    out: list[str] = []
    for file, doc in inputs:
        if id(doc) in usage.given:
            continue
        head = doc.head
        ns = namespace_of(head)
        what = f"{head.get('kind') or '(no kind)'} {ns + '/' if ns else ''}{name_of(head) or '(no name)'}"
        out.append(f"{file}: {what} was left out: {_why(head, usage)}")
    return out
