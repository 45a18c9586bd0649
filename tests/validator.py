"""The schema validator every test calls: tests/kubeschema over schemas/upstream and this repository's XRDs.

It runs in-process on the repository's own files, so every schema test runs on any clone.
`../shared/tools/validate-manifests`, when checked out next to the repository, is an independent
second opinion: tests/kubeschema/test_agreement.py and .ci/run compare against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.kubeschema.report import Run, validate_files
from tests.kubeschema.validate import Validator

ROOT = Path(__file__).resolve().parents[1]
APIS = ROOT / "apis"
SHARED_VALIDATOR = ROOT.parent / "shared" / "tools" / "validate-manifests"


@cache
def validator(*, xrds: bool = True) -> Validator:
    """One validator per process (schemas are read once), knowing this repository's XRDs when `xrds`."""
    return Validator(xrds=[APIS] if xrds else [])


def run_validator(*files: Path, xrds: bool = True) -> Run:
    """Validate files against the upstream schemas (and, with `xrds`, this repository's XRDs)."""
    return validate_files(validator(xrds=xrds), files)


def validate_documents(docs: Sequence[dict[str, Any]], tmp_path: Path) -> tuple[int, list[str]]:
    """Exit code and error lines of validating `docs` as one YAML stream."""
    path = tmp_path / "emitted.yaml"
    path.write_text(yaml.safe_dump_all(list(docs)))
    out = run_validator(path)
    return out.returncode, [line for line in out.stdout.splitlines() if "error:" in line]
