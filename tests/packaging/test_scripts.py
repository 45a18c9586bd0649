"""The shell scripts and the flake: linted, parseable, and wired to the same check commands."""

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ROOT / "scripts" / "checks.sh"
VENV_BIN = Path(sys.executable).parent
BASH = shutil.which("bash")

# The flake's checks, one per concern (conventions §13), and the checks.sh subcommand each runs.
FLAKE_CHECKS = {
    "ruff-format": "format",
    "ruff-check": "lint",
    "pyright": "typecheck",
    "pytest": "unit",
    "shell-lint": "shell",
    "nix-lint": "nix",
}


def run_checks(*args: str) -> subprocess.CompletedProcess[str]:
    assert BASH is not None
    env = {**os.environ, "VENV": str(VENV_BIN.parent)}
    return subprocess.run([BASH, str(CHECKS), *args], env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("tool", ["shellcheck", "shfmt"])
def test_shell_linters_are_installed_in_the_venv(tool: str) -> None:
    assert (VENV_BIN / tool).is_file(), f"{tool} is missing: pip install {tool}-py (a dev dependency)"


def test_shell_scripts_pass_shellcheck_and_shfmt() -> None:
    result = run_checks("shell")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_shell_lint_rejects_a_script_with_a_quoting_bug(tmp_path: Path) -> None:
    # The same tool and mode checks.sh uses, fed a known-bad script, so a silently passing
    # linter (wrong binary, wrong arguments) cannot hide behind the test above.
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/usr/bin/env bash\nrm -rf $1/cache\n")
    result = subprocess.run(
        [str(VENV_BIN / "shellcheck"), "--format=gcc", str(bad)], capture_output=True, text=True, check=False
    )
    assert (result.returncode, re.findall(r"\[(SC\d+)\]", result.stdout)) == (1, ["SC2086"])


@pytest.mark.skipif(shutil.which("nix-instantiate") is None, reason="nix is not installed")
def test_flake_parses_as_nix() -> None:
    result = subprocess.run(
        ["nix-instantiate", "--parse", str(ROOT / "flake.nix")], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")


def test_every_flake_check_runs_a_checks_sh_subcommand() -> None:
    flake = (ROOT / "flake.nix").read_text()
    block = re.search(r"checkScripts = \{(.*?)\};", flake, re.DOTALL)
    assert block is not None, "flake.nix has no checkScripts attribute set"
    wired = dict(re.findall(r'^\s*([\w-]+) = "(\w+)";', block.group(1), re.MULTILINE))
    listed = run_checks("list").stdout.split()
    assert (wired, sorted(set(wired.values()) - set(listed))) == (FLAKE_CHECKS, [])


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    want_exit: int
    want_stderr: str


USAGE_CASES = [
    Case(
        name="no subcommand prints the usage",
        args=(),
        want_exit=2,
        want_stderr="usage: scripts/checks.sh lint|format|typecheck|unit|shell|nix|all|fix|list [ARGS...]\n",
    ),
    Case(
        name="an unknown subcommand names the known ones",
        args=("deploy",),
        want_exit=2,
        want_stderr="checks: unknown subcommand 'deploy'; expected one of: lint format typecheck unit shell nix all fix\n",
    ),
]


@pytest.mark.parametrize("case", USAGE_CASES, ids=lambda c: c.name)
def test_checks_sh_rejects_bad_invocations(case: Case) -> None:
    result = run_checks(*case.args)
    assert (result.returncode, result.stderr) == (case.want_exit, case.want_stderr)
