"""A fast reader for block-style YAML, the way kubectl and YAML dumpers write it: exact, or it declines.

A fleet's input is mostly machine-written: block mappings and sequences, one scalar per line. For
that subset a line-by-line reader is several times faster than libyaml plus PyYAML's per-node
Python work (a 1,000-cluster fleet's 18 MB: ~1.5 s instead of ~5 s). Scalars mean what PyYAML's
safe loader makes of them: plain ones are typed by its own resolver and constructors, quoted ones
are strings. Anything else (flow collections other than `{}` and `[]`, tags, block
or multi-line scalars, complex or merge keys, directives, tabs, escapes JSON lacks) raises
`Unsupported` and the caller reads the text with libyaml instead; errors are libyaml's to report,
so malformed text is declined too, and so is text libyaml reads differently line by line
(characters it refuses or takes for line breaks, a byte-order mark past the start, anchor names it
would not scan, an anchor defined twice). Anchors and aliases of whole values are read (dumpers
write shared objects so) without copying: the reader counts the nodes a document expands into and
how many come through aliases, so the caller can bound the expansion before anything copies it.
Tests compare both readers on generated documents and on fuzzed text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_DOUBLE = re.compile(r'"(?:[^"\\]|\\["\\bfnrt])*"')
_SINGLE = re.compile(r"'(?:[^']|'')*'")
_FLOW_START = frozenset("[{&*!|>%@`")
_ANCHOR = re.compile(r"[0-9A-Za-z_-]+")  # what libyaml scans as an anchor or alias name
# Characters libyaml refuses (not printable), takes as line breaks (NEL, LS, PS) or the lines
# here would keep (tab, CR); a byte-order mark is read only at the very start.
_LINE_BY_LINE_UNSAFE = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_BOM = "\ufeff"


class Unsupported(Exception):  # noqa: N818 - control flow: "read this text with libyaml"
    pass


_NESTED = object()  # a `key:` line whose value is on the following lines


class _Reader:
    def __init__(
        self, lines: list[tuple[int, str]], plain: Callable[[str], Any], known: dict[str, tuple[Any, ...]]
    ) -> None:
        self.lines = lines  # (indent, content) of every line that is not blank or a comment
        self.plain = plain  # a plain scalar's value, as the safe loader types it
        self.i = 0
        self.anchors: dict[str, Any] = {}
        # Nodes the document expands into, as go-yaml counts its decodes (yamlio.py): each
        # collection adds its entries' keys and values or its items when it ends, an alias the
        # nodes under its anchor's value.
        self.nodes = 1
        self.aliased = 0
        self.inner: dict[str, int] = {}  # an anchor's value: the nodes under it
        # `key: value` lines repeat across a fleet ("count: 8"): each distinct one is read once.
        # Only immutable values are kept, so no two documents share a dict or a list.
        self.known = known

    def _anchor(self, rest: str) -> tuple[str | None, str]:
        """`&name` before a value (dumpers write shared objects so): the name and the rest of the line."""
        if not rest.startswith("&"):
            return None, rest
        name, _, after = rest[1:].partition(" ")
        if not _ANCHOR.fullmatch(name) or name in self.anchors:  # libyaml's names; a duplicate is an error
            raise Unsupported
        return name, after.lstrip(" ")

    def _define(self, name: str, value: Any, nodes_before: int) -> None:
        if name in self.anchors:  # defined again inside its own value
            raise Unsupported
        self.anchors[name] = value
        self.inner[name] = self.nodes - nodes_before

    def block(self, indent: int) -> Any:
        content = self.lines[self.i][1]
        if content == "-" or content.startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def _nested(self, indent: int) -> Any:
        """The block value after `key:` or `-` with nothing on its line: deeper lines, or null."""
        lines = self.lines
        if self.i < len(lines) and lines[self.i][0] > indent:
            return self.block(lines[self.i][0])
        return None

    def sequence(self, indent: int) -> list[Any]:
        lines, out = self.lines, []
        while self.i < len(lines):
            col, content = lines[self.i]
            if col != indent or not (content == "-" or content.startswith("- ")):
                break
            anchor, rest = self._anchor(content[1:].lstrip(" "))
            before = self.nodes
            starts_block = rest == "-" or rest.startswith("- ") or (bool(rest) and _key_end(rest) >= 0)
            if anchor is not None and starts_block:  # `- &a x: y` anchors the key x, not the mapping
                raise Unsupported
            if not rest:
                self.i += 1
                value = self._nested(indent)
            elif starts_block:
                # The item starts on the dash's line: read it as if it began on its own line there.
                lines[self.i] = (indent + len(content) - len(rest), rest)
                value = self.block(lines[self.i][0])
            else:
                self.i += 1
                value = self.scalar(rest, indent)
            if anchor is not None:
                self._define(anchor, value, before)
            out.append(value)
        self.nodes += len(out)
        return out

    def mapping(self, indent: int) -> dict[str, Any]:
        lines, out = self.lines, {}
        while self.i < len(lines):
            col, content = lines[self.i]
            if col != indent:
                if col > indent:
                    raise Unsupported
                break
            known = self.known.get(content)
            if known is not None:
                self.i += 1
                key, value = known
                if value is _NESTED:
                    value = self._block_value(indent)
                elif self.i < len(lines) and lines[self.i][0] > indent:
                    raise Unsupported  # continues on the next line: a multi-line scalar
                out[key] = value
                continue
            if content == "-" or content.startswith("- "):
                break
            end = _key_end(content)
            if end < 0:
                raise Unsupported
            key = self.key(content[:end])
            anchor, rest = self._anchor(content[end + 1 :].lstrip(" "))
            before = self.nodes
            self.i += 1
            if anchor is None and (not rest or rest[0] == "#"):
                self.known[content] = (key, _NESTED)
            if not rest or rest[0] == "#":
                value = self._block_value(indent)  # an indentless sequence is how dumpers write lists
            else:
                value = self.scalar(rest, indent)
                if anchor is None and rest[0] != "*" and value.__class__ not in (dict, list):
                    self.known[content] = (key, value)
            if anchor is not None:
                self._define(anchor, value, before)
            out[key] = value
        self.nodes += 2 * len(out)
        return out

    def _block_value(self, indent: int) -> Any:
        """After `key:`: an indentless sequence at the key's indent, deeper lines, or null."""
        lines = self.lines
        nxt = lines[self.i] if self.i < len(lines) else None
        if nxt is not None and nxt[0] == indent and (nxt[1] == "-" or nxt[1].startswith("- ")):
            return self.sequence(indent)
        return self._nested(indent)

    def key(self, text: str) -> str:
        if text[:1] in ('"', "'"):
            return self.quoted(text, whole=True)
        text = text.rstrip(" ")
        if not text or text[0] in _FLOW_START or "#" in text or text == "<<" or text[0] == ",":
            raise Unsupported
        if text[0] in "-?:" and (len(text) == 1 or text[1] == " "):
            raise Unsupported
        value = self.plain(text)
        return value if isinstance(value, str) else str(value)

    def quoted(self, text: str, *, whole: bool = False) -> str:
        match = (_DOUBLE if text[0] == '"' else _SINGLE).match(text)
        if match is None:
            raise Unsupported  # escapes JSON lacks, or a quote that does not close on this line
        tail = text[match.end() :].lstrip(" ")
        if tail and (whole or tail[0] != "#"):
            raise Unsupported
        inner = match.group()
        if inner[0] == "'":
            return inner[1:-1].replace("''", "'")
        try:
            return json.loads(inner)  # the escapes the pattern admits mean the same in JSON
        except ValueError as e:  # a control character JSON refuses
            raise Unsupported from e

    def scalar(self, text: str, indent: int) -> Any:
        if self.i < len(self.lines) and self.lines[self.i][0] > indent:
            raise Unsupported  # continues on the next line: a multi-line scalar
        first = text[0]
        if first in "\"'":
            return self.quoted(text)
        if first == "*":  # an alias of a value anchored earlier in the document
            name = text[1:].split(" #", maxsplit=1)[0].rstrip(" ")
            if name not in self.anchors or not _ANCHOR.fullmatch(name):
                raise Unsupported
            inner = self.inner[name]
            self.nodes += inner
            self.aliased += inner + 1
            return self.anchors[name]
        if first in _FLOW_START:
            if text in ("{}", "[]"):
                return {} if text == "{}" else []
            raise Unsupported
        cut = text.find(" #")
        if cut >= 0:
            text = text[:cut].rstrip(" ")
        if first in "-?:" and (len(text) == 1 or text[1] == " "):
            raise Unsupported
        if ": " in text or text.endswith(":") or first in {"#", ","}:
            raise Unsupported
        return self.plain(text)


def _key_end(content: str) -> int:
    """Where a `key: value` line's key ends (the colon), or -1 when the line is not one."""
    if content[0] in "\"'":
        match = (_DOUBLE if content[0] == '"' else _SINGLE).match(content)
        if match is None:
            return -1
        end = match.end()
        rest = content[end:].lstrip(" ")
        return len(content) - len(rest) if rest[:1] == ":" and (len(rest) == 1 or rest[1] == " ") else -1
    end = content.find(": ")
    if end >= 0:
        return end
    return len(content) - 1 if content.endswith(":") else -1


def _lines(text: str) -> list[list[tuple[int, str]]]:
    """Each document's significant lines; Unsupported for what only libyaml should read."""
    if text.startswith(_BOM):
        text = text[1:]
    if _LINE_BY_LINE_UNSAFE.search(text):
        raise Unsupported
    documents: list[list[tuple[int, str]]] = [[]]
    for line in text.split("\n"):
        content = line.lstrip(" ")
        if not content or content[0] == "#":
            continue
        indent = len(line) - len(content)
        if indent == 0 and content[0] in "-.%":
            if content.rstrip(" ") == "---":
                documents.append([])
                continue
            if content.startswith(("---", "...", "%")):
                raise Unsupported
        documents[-1].append((indent, content.rstrip(" ") if content[-1] == " " else content))
    if not documents[0]:
        documents.pop(0)  # the stream began with `---`
    return documents


def load_all(
    text: str, plain: Callable[[str], Any], expansion: Callable[[int, int], None] = lambda _n, _a: None
) -> list[Any]:
    """Every document of the stream (None for an empty one), or Unsupported.

    `expansion` is called with each document's (nodes, nodes through an alias) once it is read,
    before any document is returned: it may raise to refuse the stream.
    """
    out: list[Any] = []
    known: dict[str, tuple[Any, ...]] = {}
    for lines in _lines(text):
        if not lines:
            out.append(None)
            continue
        reader = _Reader(lines, plain, known)
        indent, content = lines[0]
        if content == "-" or content.startswith("- ") or _key_end(content) >= 0:
            value = reader.block(indent)
        elif len(lines) == 1:
            reader.i = 1
            value = reader.scalar(content, indent)
        else:
            raise Unsupported
        if reader.i != len(lines):
            raise Unsupported
        expansion(reader.nodes, reader.aliased)
        out.append(value)
    return out
