"""Blocks inside a list item are indented as MkDocs' Markdown needs, so a list is not cut short.

Python-Markdown ends a list item at a blank line followed by a line indented less than 4 spaces
(its tab length): a table or paragraph meant to belong to a bullet, indented 2 spaces, becomes a
paragraph of its own and every bullet after it runs into one paragraph. Fenced code is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted((REPO / "docs").rglob("*.md"))
_ITEM = re.compile(r"^(\s*)([-*+]|\d+\.)\s")
_FENCE = re.compile(r"^\s*(```|~~~)")


def short_indents(text: str) -> list[int]:
    """1-based lines that follow a blank line inside a list item with 1 to 3 spaces of indentation, and
    list items that follow a block nested in the previous item with no blank line (Python-Markdown
    reads them as more of that block's text)."""
    found: list[int] = []
    in_list = in_fence = blank = nested = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not line.strip():
            blank = True
            continue
        indent = len(line) - len(line.lstrip(" "))
        if _ITEM.match(line):
            if nested and not blank and indent == 0:
                found.append(number)
            in_list, nested = True, False
        elif blank and indent == 0:
            in_list = nested = False
        elif blank and in_list and 0 < indent < 4:  # Python-Markdown's tab length
            found.append(number)
        elif blank and in_list:
            nested = True
        blank = False
    return found


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    want: list[int]


CASES = [
    Case("a table in a bullet indented 2 spaces", "- a\n  b\n\n  | x |\n  | - |\n- c\n", [4]),
    Case("a table in a bullet indented 4 spaces", "- a\n\n    | x |\n    | - |\n\n- c\n", []),
    Case("a lazy continuation line without a blank line", "- a\n  b\n- c\n", []),
    Case("a bullet right after a nested paragraph", "- a\n\n    b\n    c\n- d\n", [5]),
    Case("a bullet after a nested paragraph and a blank line", "- a\n\n    b\n\n- d\n", []),
    Case("a paragraph after the list", "- a\n\nb\n", []),
    Case("fenced code is not read", "- a\n\n    ```\n  x\n\n  y\n    ```\n", []),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_short_indents_are_found(case: Case) -> None:
    assert short_indents(case.text) == case.want


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_block_in_a_list_item_is_indented_four_spaces(page: Path) -> None:
    assert short_indents(page.read_text()) == []
