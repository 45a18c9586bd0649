"""Sybil parsers for the code blocks the README and docs/ show, so none of them can drift.

- A `console` block is a terminal session: each `$ ` line is a command (a line ending in `\\`
  continues it), the lines up to the next `$ ` are what it prints, stdout and stderr together.
  Every command of a page runs in order, under bash with `pipefail`, in one scratch directory
  per page whose entries link to the repository's top level (so `make render` and
  `examples/...` work as in a clone) and where files the commands write stay. Each command must
  exit 0 and print exactly what is shown; a page shows a failing exit code with `; echo "exit: $?"`.
- A block with `title="PATH"` shows the file PATH of the repository: the whole file, or with
  `title="PATH (excerpt)"` some of its lines, in order (a line `...` only marks a cut).

Blocks of other languages are text the reader applies elsewhere (kubectl on a cluster, say);
tests/docs/test_pages.py says which those may be. `pytest tests/docs --update-golden` rewrites
each console block's output with what its commands print now; read the diff before committing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

REPO = Path(__file__).resolve().parents[2]
SANDBOX = "sandbox"
_PROMPT = "$ "
_CUT = "..."
_TIMEOUT_SECONDS = 120
# The shell keeps its own environment out of what is shown: no colour, a fixed width.
_ENV_FIXED = {"COLUMNS": "100", "NO_COLOR": "1", "LC_ALL": "C.UTF-8"}

_CONSOLE = RawFencedCodeBlockLexer(info_pattern=re.compile(r"console$\n", re.MULTILINE))
_TITLED = RawFencedCodeBlockLexer(
    info_pattern=re.compile(r'\w+ title="(?P<path>[^"(]+?)(?P<excerpt> \(excerpt\))?"$\n', re.MULTILINE)
)


@dataclass(frozen=True, slots=True)
class Command:
    line: str
    want: str


def commands(source: str) -> list[Command]:
    """The session's commands, each with the output shown under it."""
    found: list[Command] = []
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith(_PROMPT):
            msg = f"console block line {i + 1} is output before any command: {lines[i]!r}"
            raise ValueError(msg)
        command = lines[i][len(_PROMPT) :]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command += "\n" + lines[i]  # bash reads the backslash-newline as a continuation
        i += 1
        out: list[str] = []
        while i < len(lines) and not lines[i].startswith(_PROMPT):
            out.append(lines[i])
            i += 1
        found.append(Command(command, "".join(f"{line}\n" for line in out)))
    return found


def sandbox(root: Path) -> Path:
    """A scratch directory that reads like a clone: each top-level entry links to the repository's."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in sorted(REPO.iterdir()):
        if entry.name not in {".git", ".venv", "site"}:
            (root / entry.name).symlink_to(entry)
    # The interpreter running the tests is the project's environment, wherever it lives.
    (root / ".venv").symlink_to(Path(sys.prefix))
    return root


def run(command: str, cwd: Path) -> tuple[int, str]:
    env = {**os.environ, **_ENV_FIXED, "PATH": f"{cwd / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=_TIMEOUT_SECONDS,
        check=False,
    )
    return done.returncode, done.stdout


def _evaluate_console(example: Example) -> str | None:
    cwd: Path = example.namespace[SANDBOX]
    for command in commands(str(example.parsed)):
        code, got = run(command.line, cwd)
        if code != 0:
            return f"`{command.line}` exited {code}; it printed:\n{got}"
        if got != command.want:
            return f"`{command.line}` printed something else.\n--- shown\n{command.want}--- printed\n{got}"
    return None


def lines_in_order(shown: Iterable[str], lines: list[str]) -> str | None:
    """None when every shown line is a line of `lines`, in order; else the first that is not."""
    at = 0
    for line in shown:
        if line.strip() == _CUT:
            continue
        try:
            at = lines.index(line, at) + 1
        except ValueError:
            return line
    return None


def _evaluate_titled(example: Example) -> str | None:
    region = example.region
    path = REPO / region.lexemes["path"]
    if not path.is_file():
        return f"{region.lexemes['path']} is not a file of the repository"
    # The block as written less its fence's indent (a block in a list item): Sybil's source is
    # dedented as a whole, and an excerpt's indentation must be the file's.
    fence, *body, _ = example.document.text[region.start : region.end].splitlines(keepends=True)
    indent = len(fence) - len(fence.lstrip(" "))
    shown = "".join(line[indent:] if line.startswith(" " * indent) else line.lstrip(" ") for line in body)
    text = path.read_text()
    if not region.lexemes["excerpt"]:
        return None if shown == text else f"the block is not the whole of {region.lexemes['path']}: mark it (excerpt)"
    missing = lines_in_order(shown.splitlines(), text.splitlines())
    return None if missing is None else f"{region.lexemes['path']} has no line {missing!r} (or not in this order)"


def rewrite_console_blocks(path: Path, scratch: Path) -> None:
    """Rewrite the output under each command of the page's console blocks with what it prints now."""
    document = parse(path, scratch)
    text = document.text
    cwd: Path = document.namespace[SANDBOX]
    edits: list[tuple[int, int, str]] = []
    for region in _CONSOLE(document):
        fence, *_, closing = text[region.start : region.end].splitlines(keepends=True)
        indent = fence[: len(fence) - len(fence.lstrip(" "))]
        lines = [fence]
        for command in commands(str(region.lexemes["source"])):
            code, got = run(command.line, cwd)
            if code != 0:  # a page shows a failure with `; echo "exit: $?"`, never by recording one
                msg = f"{path.name}: `{command.line}` exited {code}, nothing rewritten; it printed:\n{got}"
                raise RuntimeError(msg)
            lines += [f"{indent}{_PROMPT}{command.line.replace(chr(10), chr(10) + indent)}\n"]
            lines += [f"{indent}{line}\n" if line else "\n" for line in got.splitlines()]
        edits.append((region.start, region.end, "".join([*lines, closing])))
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    path.write_text(text)


def _console(document: Document) -> Iterable[Region]:
    for region in _CONSOLE(document):
        region.parsed = region.lexemes["source"]
        region.evaluator = _evaluate_console
        yield region


def _titled(document: Document) -> Iterable[Region]:
    for region in _TITLED(document):
        region.parsed = region.lexemes["source"]
        region.evaluator = _evaluate_titled
        yield region


PAGES = Sybil(parsers=[_console, _titled])


def parse(path: Path, scratch: Path) -> Document:
    """The page's checkable blocks, its commands to run in `scratch`."""
    document = PAGES.parse(path)
    document.namespace[SANDBOX] = sandbox(scratch)
    return document
