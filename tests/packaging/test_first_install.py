"""A first `make` installs the project quietly: no build-backend warning for a newcomer to puzzle over.

The test runs the commands `make docs` would run to create its venv (read with `make --dry-run`),
into a scratch venv and without the dependencies (`--no-deps`: only the project's own editable build is
of interest). Like `make` itself, it needs the package index for pip and the build's setuptools;
offline it is skipped, saying so.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _commands(venv: Path, target: str) -> list[str]:
    # Run under `make test` too: a sub-make would print "Entering directory" and inherit its flags.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS"}}
    flags = ["--no-print-directory", "--dry-run", "--always-make"]
    run = subprocess.run(
        ["make", *flags, f"VENV={venv}", f"PYTHON={sys.executable}", f"{venv}/{target}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.splitlines()


# What pip says when it cannot reach an index (offline, or a proxy refusing), as opposed to a failure
# of the install itself.
_OFFLINE = re.compile(
    r"Could not find a version that satisfies the requirement|No matching distribution found|"
    r"Failed to establish a new connection|Temporary failure in name resolution|Network is unreachable"
)


def _own(stderr: str) -> list[str]:
    """stderr without pip's notes about this machine's pip configuration and network (index locations,
    retries of an index that does not answer)."""
    return [line for line in stderr.splitlines() if not line.startswith(("WARNING: Location ", "WARNING: Retrying "))]


def test_the_first_install_prints_only_what_make_says(tmp_path: Path) -> None:
    """The docs stamp runs both installs: the project with its dev tools, then the documentation tools."""
    venv = tmp_path / "venv"
    stderr: list[str] = []
    for line in _commands(venv, ".docs-installed"):
        words = shlex.split(line)
        editable = "pip" in words and "-e" in words
        command = re.sub(r"-e '\.\[[a-z,]+\]'", "--no-deps -e .", line) if editable else line
        run = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, check=False)
        if run.returncode != 0 and _OFFLINE.search(run.stderr):
            pytest.skip("the package index is unreachable: make's own first install needs it too")
        assert run.returncode == 0, f"{command} failed:\n{run.stderr}"
        stderr += _own(run.stderr)
    assert stderr == [
        f"make: installing the project and its dev tools into {venv}",
        f"make: installing the documentation tools into {venv}",
    ]
