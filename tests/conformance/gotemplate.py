"""Test-only: the subset of Go's text/template that KServe's preset configs use.

KServe renders every preset by marshalling the merged LLMInferenceServiceConfig to JSON and running
text/template over that JSON text with the LLMInferenceService as data (`ReplaceVariables` in
KS pkg/controller/v1alpha2/llmisvc/config_merge.go). So a preset string is rendered here the same
way: as its JSON encoding, then decoded. That matters for the trim markers: `{{-` and `-}}` strip
only real whitespace, and inside JSON a line break is the two characters `\\n`, so only the
indentation around an action is trimmed, never the line break of a shell line continuation.

Supported: text and actions, `{{-`/`-}}` trimming, `if`/`else`/`else if`/`end`, field chains on the
data (`.A.B`), `nil`, integers, "quoted" and `raw` strings, function calls, lazy `and`/`or`, and
the functions given by the caller. Data is nested dicts: a missing key is Go's zero value (None),
and selecting a field of None is Go's "nil pointer evaluating" error. Anything else is a
TemplateError, so a preset using more of the language fails the tests rather than rendering wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Func = Callable[..., Any]


class TemplateError(Exception):
    """The template uses something this subset does not implement, or fails as Go would."""


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Action:
    words: tuple[str, ...]


@dataclass(frozen=True)
class _If:
    condition: tuple[str, ...]
    then: tuple[Any, ...]
    otherwise: tuple[Any, ...]


_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_WORD = re.compile(r'\s*("(?:[^"\\]|\\.)*"|`[^`]*`|[^\s]+)')
_GO_SPACE = " \t\r\n"


def _lex(source: str) -> list[str | tuple[str, ...]]:
    """Text pieces and actions (as word tuples), with the trim markers applied."""
    out: list[str | tuple[str, ...]] = []
    pos = 0
    trim_next = False
    for match in _ACTION.finditer(source):
        text = source[pos : match.start()]
        if trim_next:
            text = text.lstrip(_GO_SPACE)
        if match.group(1):
            text = text.rstrip(_GO_SPACE)
        out.append(text)
        body = match.group(2).strip(_GO_SPACE)
        if body.startswith("/*"):
            out.append(())
        else:
            out.append(tuple(m.group(1) for m in _WORD.finditer(body)))
        trim_next = bool(match.group(3))
        pos = match.end()
    tail = source[pos:]
    out.append(tail.lstrip(_GO_SPACE) if trim_next else tail)
    return out


def _parse(tokens: list[str | tuple[str, ...]], at: int, stop: frozenset[str]) -> tuple[tuple[Any, ...], int, str]:
    """Nodes up to one of the `stop` keywords; returns (nodes, next index, keyword met)."""
    nodes: list[Any] = []
    while at < len(tokens):
        token = tokens[at]
        at += 1
        if isinstance(token, str):
            if token:
                nodes.append(_Text(token))
            continue
        if not token:
            continue
        head = token[0]
        if head in stop:
            return tuple(nodes), at - 1, head
        if head == "if":
            node, at = _parse_if(tokens, at, token[1:])
            nodes.append(node)
        elif head in {"range", "with", "define", "template", "block"}:
            msg = f"unsupported action {head!r}"
            raise TemplateError(msg)
        else:
            nodes.append(_Action(token))
    if stop:
        msg = f"unexpected end of template, wanted {sorted(stop)}"
        raise TemplateError(msg)
    return tuple(nodes), at, ""


def _parse_if(tokens: list[str | tuple[str, ...]], at: int, condition: tuple[str, ...]) -> tuple[_If, int]:
    then, at, keyword = _parse(tokens, at, frozenset({"else", "end"}))
    otherwise: tuple[Any, ...] = ()
    if keyword == "else":
        words = tokens[at]
        assert isinstance(words, tuple)
        at += 1
        if len(words) > 1 and words[1] == "if":
            nested, at = _parse_if(tokens, at, words[2:])
            return _If(condition, then, (nested,)), at
        otherwise, at, keyword = _parse(tokens, at, frozenset({"end"}))
    return _If(condition, then, otherwise), at + 1


def _truth(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | str | list | tuple | Mapping):
        return bool(value) if not isinstance(value, Mapping) else True
    return True


class _Evaluator:
    def __init__(self, data: Mapping[str, Any], funcs: Mapping[str, Func]) -> None:
        self.data = data
        self.funcs = funcs

    def field(self, chain: str) -> Any:
        value: Any = self.data
        for name in chain.split(".")[1:]:
            if not name:
                continue
            if value is None:
                msg = f"nil pointer evaluating {chain}"
                raise TemplateError(msg)
            if not isinstance(value, Mapping):
                msg = f"can't evaluate field {name} in {chain}"
                raise TemplateError(msg)
            value = value.get(name)  # pyright: ignore[reportUnknownMemberType]
        return value

    def arg(self, word: str) -> Any:
        if word.startswith("."):
            return self.field(word)
        if word == "nil":
            return None
        if word in {"true", "false"}:
            return word == "true"
        if word.startswith("`"):
            return word[1:-1]
        if word.startswith('"'):
            return json.loads(word)
        if re.fullmatch(r"-?\d+", word):
            return int(word)
        msg = f"unsupported argument {word!r}"
        raise TemplateError(msg)

    def command(self, words: Sequence[str]) -> Any:
        head, rest = words[0], words[1:]
        if head in {"and", "or"}:
            value: Any = None
            for word in rest:  # lazy, as Go >= 1.18 evaluates them
                value = self.arg(word)
                if _truth(value) != (head == "and"):
                    return value
            return value
        if head in self.funcs:
            return self.funcs[head](*(self.arg(w) for w in rest))
        if rest:
            msg = f"unknown function {head!r}"
            raise TemplateError(msg)
        return self.arg(head)

    def run(self, nodes: Sequence[Any], out: list[str]) -> None:
        for node in nodes:
            if isinstance(node, _Text):
                out.append(node.text)
            elif isinstance(node, _If):
                self.run(node.then if _truth(self.command(node.condition)) else node.otherwise, out)
            else:
                value = self.command(node.words)
                if value is None:
                    msg = f"no value for {' '.join(node.words)}"
                    raise TemplateError(msg)
                out.append(str(value).lower() if isinstance(value, bool) else str(value))


def render(source: str, data: Mapping[str, Any], funcs: Mapping[str, Func]) -> str:
    """`source` rendered as Go's text/template would render it."""
    nodes, _, _ = _parse(_lex(source), 0, frozenset())
    out: list[str] = []
    _Evaluator(data, funcs).run(nodes, out)
    return "".join(out)


def render_json_string(value: str, data: Mapping[str, Any], funcs: Mapping[str, Func]) -> str:
    """A string of a preset as KServe renders it: through its JSON encoding (see the module docstring)."""
    return json.loads(render(json.dumps(value), data, funcs))
