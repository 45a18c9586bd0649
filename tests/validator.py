"""The shared schema validator (`../shared/tools/validate-manifests`) as every test calls it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
VALIDATOR = ROOT.parent / "shared" / "tools" / "validate-manifests"
APIS = ROOT / "apis"


def require_validator() -> None:
    """Skip, saying why, when the shared tools are not checked out next to the repository."""
    if not VALIDATOR.is_file():
        pytest.skip(f"{VALIDATOR} is absent: the shared schema validator is not checked out next to the repo")


def run_validator(*files: Path, xrds: bool = True) -> subprocess.CompletedProcess[str]:
    """Validate files against the upstream schemas (and, with `xrds`, this repository's XRDs)."""
    require_validator()
    args: Sequence[str] = ("--xrd", str(APIS)) if xrds else ()
    return subprocess.run(
        [sys.executable, str(VALIDATOR), *args, *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )


def validate_documents(docs: Sequence[dict[str, Any]], tmp_path: Path) -> tuple[int, list[str]]:
    """Exit code and error lines of validating `docs` as one YAML stream."""
    path = tmp_path / "emitted.yaml"
    path.write_text(yaml.safe_dump_all(list(docs)))
    out = run_validator(path)
    return out.returncode, [line for line in out.stdout.splitlines() if "error:" in line]
