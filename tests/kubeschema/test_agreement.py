"""A second opinion: our validator and ../shared/tools/validate-manifests give every object the same verdict.

Inputs: every example's render output, this repository's XRDs and Compositions, and the API
samples (valid and invalid). The shared tool is an independent implementation (cel-python,
Python's re); it is present in CI and absent on a plain clone, where this one test skips.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from modelplane_function.cli.render import render_stream

from tests.validator import APIS, ROOT, SHARED_VALIDATOR, run_validator

EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/xr.yaml"))
SAMPLES = sorted((ROOT / "tests" / "api" / "samples").rglob("*.yaml"))

_OURS = re.compile(r"^(OK|FAIL)\s+(\S+) \[(\S+?)( > manifest)?\]")
_SHARED = re.compile(r"^(OK|FAIL)\s+(\S+) \[(\S+?)\](?: > (\S+))?")


def _inputs(directory: Path, kind: str) -> list[Path]:
    path = directory / f"{kind}-resources.yaml"
    return [path] if path.is_file() else []


def _rendered(tmp_path: Path) -> list[Path]:
    files: list[Path] = []
    for example in EXAMPLES:
        out = tmp_path / f"{example.name}.yaml"
        required, observed = _inputs(example, "required"), _inputs(example, "observed")
        out.write_text(render_stream(example / "xr.yaml", required=required, observed=observed))
        files.append(out)
    return files


def _verdicts(stdout: str, pattern: re.Pattern[str]) -> list[tuple[str, str, str]]:
    """(where, Kind/name, OK|FAIL) per object; a wrapped manifest is `where` + ' > manifest'."""
    out: list[tuple[str, str, str]] = []
    for line in stdout.splitlines():
        if m := pattern.match(line):
            status, name, where, inner = m.groups()
            if inner is not None and pattern is _SHARED:
                name = inner
            out.append((where + (" > manifest" if inner else ""), name, status))
    return sorted(out)


def test_both_validators_agree_on_every_object(tmp_path: Path) -> None:
    if not SHARED_VALIDATOR.is_file():
        pytest.skip(f"{SHARED_VALIDATOR} is not checked out next to the repository (CI has it)")
    files = [*_rendered(tmp_path), *sorted(APIS.glob("*/*.yaml")), *SAMPLES]
    shared = subprocess.run(
        [sys.executable, str(SHARED_VALIDATOR), "--xrd", str(APIS), *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    ours = _verdicts(run_validator(*files).stdout, _OURS)
    assert len(ours) > 100
    assert ours == _verdicts(shared.stdout, _SHARED)
