"""`make test` says why each skipped test was skipped, with the project's own pytest settings."""

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Case:
    name: str
    test: str
    want: list[str]


CASES = [
    Case(
        name="a test that skips itself names its reason in the summary",
        test='import pytest\n\n\ndef test_a():\n    pytest.skip("needs the presets")\n',
        want=["SKIPPED [1] test_x.py:5: needs the presets"],
    ),
    Case(
        name="a skipif marker's reason is printed too",
        test='import pytest\n\n\n@pytest.mark.skipif(True, reason="chromium is absent")\ndef test_a():\n    pass\n',
        want=["SKIPPED [1] test_x.py:4: chromium is absent"],
    ),
    Case(
        name="a passing test adds no summary line",
        test="def test_a():\n    pass\n",
        want=[],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_skip_reasons_are_printed(case: Case, tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(case.test)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), "test_x.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")] == case.want
