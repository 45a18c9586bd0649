"""Write a generated docs page, or with --check say how the committed one differs from it.

Shared by the scripts that generate pages from the project's own sources, so every generated page
is written and checked the same way.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

_DIFF_LINES = 40


def main(
    script: str,
    *,
    output: Path,
    repo: Path,
    generate: Callable[[], str],
    description: str,
    argv: Sequence[str] | None = None,
) -> int:
    """Write `generate()` to `output`; with --check, exit 1 and print a diff when the file is stale."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed reference is stale")
    args = parser.parse_args(argv)
    want = generate()
    if not args.check:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(want)
        return 0
    have = output.read_text() if output.is_file() else ""
    if have == want:
        return 0
    rel = output.relative_to(repo)
    diff = list(
        difflib.unified_diff(
            have.splitlines(), want.splitlines(), f"{rel} (committed)", f"{rel} (generated)", lineterm=""
        )
    )
    sys.stderr.write(f"{rel} is stale: run .venv/bin/python scripts/{script}\n")
    sys.stderr.write("\n".join(diff[:_DIFF_LINES]) + ("\n..." if len(diff) > _DIFF_LINES else "") + "\n")
    return 1
