"""Every examples/<name>/ renders to its expected.yaml, validates, and documents its command.

Rendering goes through `render_stream`, the function behind `modelplane render` (and `make render`),
so an example's README output cannot drift from what the CLI prints. Outputs are compared as YAML
documents, the whole stream at once. `pytest --update-golden` rewrites expected.yaml.
"""

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane_function.cli.render import render_stream

from tests.validator import run_validator

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "xr.yaml").is_file())
PLANS = sorted(p.name for p in EXAMPLES.iterdir() if (p / "expected.txt").is_file())  # `modelplane plan` inputs


def _inputs(name: str, kind: str) -> list[Path]:
    path = EXAMPLES / name / f"{kind}-resources.yaml"
    return [path] if path.is_file() else []


@cache
def _render(name: str) -> str:
    """What `make render EXAMPLE=examples/<name>` prints on stdout."""
    return render_stream(
        EXAMPLES / name / "xr.yaml",
        required=_inputs(name, "required"),
        observed=_inputs(name, "observed"),
    )


def _documents(stream: str) -> list[Any]:
    return list(yaml.safe_load_all(stream))


@pytest.mark.parametrize("name", NAMES)
def test_example_renders_expected_output(name: str, request: pytest.FixtureRequest) -> None:
    got = _render(name)
    expected = EXAMPLES / name / "expected.yaml"
    if request.config.getoption("--update-golden"):
        expected.write_text(got)
    assert _documents(got) == _documents(expected.read_text())


@pytest.mark.parametrize("name", NAMES)
def test_example_output_validates(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.yaml"
    out.write_text(_render(name))
    run = run_validator(out)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("name", NAMES)
def test_example_readme_shows_its_render_commands(name: str) -> None:
    readme = (EXAMPLES / name / "README.md").read_text()
    assert f"make render EXAMPLE=examples/{name}" in readme
    observed = " --observed-resources observed-resources.yaml" if _inputs(name, "observed") else ""
    crossplane = (
        "crossplane render xr.yaml ../../apis/modeldeployment/composition.yaml ../functions.yaml"
        f" --required-resources required-resources.yaml{observed}"
    )
    assert crossplane in readme


def test_examples_readme_lists_exactly_the_examples() -> None:
    readme = (EXAMPLES / "README.md").read_text()
    assert sorted(set(re.findall(r"\]\(([a-z0-9-]+)/\)", readme))) == sorted(NAMES + PLANS)
