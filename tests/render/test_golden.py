"""Golden renderer cases: tests/render/golden/<case>/input.yaml -> want.yaml.

want.yaml holds either `objects` (key, readinessSource, manifest per rendered object) or `error`
(reason and message of the RenderError). `pytest --update-golden` rewrites want.yaml from the
current output. Every rendered Object, and the manifest inside it, must pass the upstream schemas
and webhook rules (tests/validator.py).
"""

from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane.render import RenderError, render_replica

from tests.render.loader import load_replica
from tests.validator import run_validator

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())
# cases whose golden output is objects (not an error): those are validated
RENDERING = [c for c in CASES if "objects" in (yaml.safe_load((GOLDEN / c / "want.yaml").read_text()) or {})]


def _render(case: str) -> dict[str, Any]:
    replica = load_replica(yaml.safe_load((GOLDEN / case / "input.yaml").read_text()))
    try:
        rendered = render_replica(replica)
    except RenderError as err:
        return {"error": {"reason": err.reason, "message": str(err)}}
    return {
        "objects": [{"key": o.key, "readinessSource": o.readiness_source, "manifest": o.manifest} for o in rendered]
    }


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=True, default_flow_style=False, width=1000)


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, request: pytest.FixtureRequest) -> None:
    got = _dump(_render(case))
    want_file = GOLDEN / case / "want.yaml"
    if request.config.getoption("--update-golden"):
        want_file.write_text(got)
    assert got == want_file.read_text()


@pytest.fixture(scope="module")
def validation(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Validator output per case, from one run over every case's rendered Objects."""
    out_dir = tmp_path_factory.mktemp("rendered")
    files = {case: out_dir / f"{case}.yaml" for case in RENDERING}
    for case, path in files.items():
        path.write_text(yaml.safe_dump_all([o["manifest"] for o in _render(case)["objects"]], sort_keys=True))
    run = run_validator(*files.values(), xrds=False)
    reports: dict[str, list[str]] = {case: [] for case in files}
    current: list[str] = []
    for line in run.stdout.splitlines():
        if not line.startswith(" "):  # an object line; indented lines are its errors
            current = next((reports[c] for c, p in files.items() if f"{p}#" in line), [])
        current.append(line)
    return {case: "\n".join(lines) for case, lines in reports.items()}


@pytest.mark.parametrize("case", RENDERING)
def test_rendered_objects_validate(case: str, validation: dict[str, str]) -> None:
    report = validation[case]
    objects = len(_render(case)["objects"])
    assert "FAIL" not in report, report
    assert report.count("OK   ") == 2 * objects, report  # each Object and the manifest inside it
