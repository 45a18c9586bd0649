"""What the README and the documentation site show is what the program does.

Every `console` session on every page is run and its output compared, every block titled with a
file is compared with that file (tests/docs/blocks.py), and no page shows output any other way.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from sybil.example import SybilFailure
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

from tests.docs import blocks

REPO = blocks.REPO
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# Blocks nobody can run here: commands for a control plane, a cluster or a container runtime.
ELSEWHERE = {"sh"}
_FENCE_INFO = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<info>[^\n]*)$\n", re.MULTILINE))
# Phrases that tell the history of the code instead of what it does: history belongs in git.
CHANGELOG = re.compile(
    r"\b(earlier run|earlier release|this round|before this|previously|used to be|"
    r"the old code|was fixed|we fixed|now fixed)\b",
    re.IGNORECASE,
)
README_LINES = 300
# Generated from the commands' --help, and compared as a whole by test_reference_pages.
GENERATED = {REPO / "docs" / "reference" / "cli.md"}


def _id(path: Path) -> str:
    return str(path.relative_to(REPO))


def _infos(path: Path) -> list[str]:
    return [r.lexemes["info"].strip() for r in _FENCE_INFO(blocks.PAGES.parse(path))]


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_command_and_file_the_page_shows_is_what_the_program_prints(
    page: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if request.config.getoption("--update-golden"):
        blocks.rewrite_console_blocks(page, tmp_path / "update")
    failures: list[str] = []
    for example in blocks.parse(page, tmp_path / "sandbox").examples():
        try:
            example.evaluate()
        except SybilFailure as failure:
            failures.append(f"line {example.line}: {failure.result}")
    assert failures == []


@pytest.mark.parametrize("page", [p for p in PAGES if p not in GENERATED], ids=_id)
def test_every_block_is_checked_or_a_command_for_elsewhere(page: Path) -> None:
    unchecked = [info for info in _infos(page) if info != "console" and 'title="' not in info and info not in ELSEWHERE]
    assert unchecked == []


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_pages_say_what_is_not_how_it_came_to_be(page: Path) -> None:
    assert CHANGELOG.findall(page.read_text()) == []


def test_the_readme_opens_with_the_two_commands_and_stays_a_front_page() -> None:
    readme = (REPO / "README.md").read_text()
    first = readme.split("```")[1]
    assert (first.splitlines()[1:], len(readme.splitlines()) <= README_LINES) == (
        [
            "make render   # set-up + the main job: offline render of the default example fleet (YAML + placement summary)",
            "make test     # set-up + every check: ruff, ruff format, pyright, shellcheck/shfmt, pytest",
        ],
        True,
    )


def test_make_test_runs_every_check() -> None:
    # `make test` cannot run inside its own test suite: its recipe is checked instead.
    # Under `make test` itself, make's own variables would make this a sub-make that prints directories.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS"}}
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "-W", "pyproject.toml", "test"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert dry.stdout.splitlines()[-1] == "bash scripts/checks.sh all"


def test_every_page_is_in_the_site_nav() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())

    def walk(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [p for item in node for p in walk(item)]
        if isinstance(node, dict):
            return [p for value in node.values() for p in walk(value)]
        return []

    pages = sorted(str(p.relative_to(REPO / "docs")) for p in PAGES[1:])
    assert sorted(walk(config["nav"])) == pages


def test_every_link_of_the_readme_leads_to_a_file_of_the_repository() -> None:
    # The site's links are checked by `mkdocs build --strict`; the README is not part of the site.
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", (REPO / "README.md").read_text())
    assert [link for link in links if not (REPO / link).exists()] == []
