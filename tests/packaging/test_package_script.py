"""`make package` (scripts/package.sh) against fake docker and crossplane binaries on a bare PATH.

The fakes record every call, so the test sees exactly which commands the script would run
without needing a Docker daemon or the crossplane CLI.
"""

import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "package.sh"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
BASH = shutil.which("bash")
# The only external commands package.sh may use besides docker and crossplane.
UTILITIES = ("dirname", "sed", "mkdir")
MISSING_EXIT = 2
HEADER = "package: cannot build the function package, missing prerequisites:"

FAKE = """#!{bash}
printf '%s\\n' "${{0##*/}} $*" >>"$FAKE_LOG"
case "${{0##*/}} $1" in
"docker info") [ "$FAKE_DAEMON" = up ] ;;
"docker version") echo "$FAKE_ARCH" ;;
esac
"""


@dataclass(frozen=True)
class Case:
    name: str
    tools: tuple[str, ...]
    daemon: str = "up"
    env: dict[str, str] = field(default_factory=dict)
    want_exit: int = 0
    want_missing: tuple[str, ...] = ()
    want_calls: tuple[str, ...] = ()


def build_calls(arch: str, out: str) -> tuple[str, ...]:
    tag = f"function-modelplane:{VERSION}-{arch}"
    return (
        f"docker build --platform linux/{arch} --tag {tag} .",
        "crossplane xpkg build --package-root=package --examples-root=package/examples "
        f"--embed-runtime-image={tag} --package-file={out}/function-modelplane-{VERSION}-{arch}.xpkg",
    )


CASES = [
    Case(
        name="neither docker nor crossplane is installed",
        tools=(),
        want_exit=MISSING_EXIT,
        want_missing=("docker", "crossplane"),
    ),
    Case(
        name="docker is installed but its daemon is down and crossplane is missing",
        tools=("docker",),
        daemon="down",
        want_exit=MISSING_EXIT,
        want_missing=("docker daemon", "crossplane"),
        want_calls=("docker info",),
    ),
    Case(
        name="docker answers but crossplane is missing",
        tools=("docker",),
        want_exit=MISSING_EXIT,
        want_missing=("crossplane",),
        want_calls=("docker info",),
    ),
    Case(
        name="crossplane is installed but docker is missing",
        tools=("crossplane",),
        want_exit=MISSING_EXIT,
        want_missing=("docker",),
    ),
    Case(
        name="with every tool present the image and xpkg are built for the daemon's architecture",
        tools=("docker", "crossplane"),
        want_calls=(
            "docker info",
            "docker version --format {{.Server.Arch}}",
            *build_calls("arm64", "OUT"),
        ),
    ),
    Case(
        name="listed platforms each get their own image and xpkg",
        tools=("docker", "crossplane"),
        env={"PLATFORMS": "amd64 arm64"},
        want_calls=("docker info", *build_calls("amd64", "OUT"), *build_calls("arm64", "OUT")),
    ),
]


def missing_names(stderr: str) -> tuple[str, ...]:
    """The prerequisite each `  - name: hint` line names, after checking the header and hints."""
    header, *items = stderr.splitlines()
    assert header == HEADER
    names: list[str] = []
    for item in items:
        name, _, hint = item.removeprefix("  - ").partition(": ")
        assert hint.startswith(("not found on PATH", "not reachable", "CLI not found on PATH")), item
        names.append(name)
    return tuple(names)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_package_script(case: Case, tmp_path: Path) -> None:
    assert BASH is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for utility in UTILITIES:
        found = shutil.which(utility)
        assert found is not None, utility
        (bin_dir / utility).symlink_to(found)
    for tool in case.tools:
        fake = bin_dir / tool
        fake.write_text(FAKE.format(bash=BASH))
        fake.chmod(0o755)
    log = tmp_path / "calls.log"
    log.touch()
    out = tmp_path / "out"
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "FAKE_LOG": str(log),
        "FAKE_DAEMON": case.daemon,
        "FAKE_ARCH": "arm64",
        "OUTPUT_DIR": str(out),
        **case.env,
    }

    result = subprocess.run([BASH, str(SCRIPT)], env=env, capture_output=True, text=True, check=False)

    calls = tuple(line.replace(str(out), "OUT") for line in log.read_text().splitlines())
    got_missing = missing_names(result.stderr) if result.returncode == MISSING_EXIT else ()
    assert (result.returncode, got_missing, calls) == (case.want_exit, case.want_missing, case.want_calls), (
        result.stderr
    )
    assert out.is_dir() == (case.want_exit == 0)


def test_make_package_runs_the_package_script() -> None:
    make = shutil.which("make")
    assert make is not None
    result = subprocess.run(
        [make, "--dry-run", "--no-print-directory", "package"],
        cwd=ROOT,
        env={**os.environ, "MAKEFLAGS": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.splitlines() == ["bash scripts/package.sh"]
