"""The runtime image (Dockerfile) and the Function package metadata agree with the project."""

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
METADATA = yaml.safe_load((ROOT / "package" / "crossplane.yaml").read_text())

# What the spec and reference.md fix: Compositions reference this name, Crossplane dials 9443,
# and the XRDs' scale subresource exists only from Crossplane v2.3.0.
FUNCTION_NAME = "function-modelplane"
FUNCTION_PORT = "9443"
MIN_CROSSPLANE = "v2.3.0"
REQUIRED_ANNOTATIONS = frozenset({"source", "description", "license", "maintainer"})


@dataclass(frozen=True)
class Stage:
    image: str
    instructions: tuple[tuple[str, str], ...]

    def last(self, keyword: str) -> str | None:
        values = [value for key, value in self.instructions if key == keyword]
        return values[-1] if values else None


def parse_dockerfile(text: str) -> list[Stage]:
    """Split a Dockerfile into stages, with global ARG defaults substituted into FROM."""
    logical = re.sub(r"\\\n", " ", text)
    args: dict[str, str] = {}
    stages: list[Stage] = []
    image = ""
    body: list[tuple[str, str]] = []
    for raw in logical.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, value = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "ARG" and not image and "=" in value:
            name, _, default = value.partition("=")
            args[name] = default
        elif keyword == "FROM":
            if image:
                stages.append(Stage(image=image, instructions=tuple(body)))
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], value.split()[0])
            body = []
        else:
            body.append((keyword, value.strip()))
    stages.append(Stage(image=image, instructions=tuple(body)))
    return stages


STAGES = parse_dockerfile((ROOT / "Dockerfile").read_text())
FINAL = STAGES[-1]


def python_of(image: str) -> str:
    match = re.fullmatch(r"python:(\d+\.\d+)[-.\w]*", image)
    assert match, f"{image} is not an official python:<major>.<minor> image"
    return match.group(1)


def test_build_and_run_stages_use_the_python_the_code_is_checked_for() -> None:
    checked_for = PYPROJECT["tool"]["pyright"]["pythonVersion"]
    assert Version(checked_for) in SpecifierSet(PYPROJECT["project"]["requires-python"])
    assert [python_of(stage.image) for stage in STAGES] == [checked_for, checked_for]


def test_entrypoint_serves_through_the_projects_console_script() -> None:
    entrypoint = FINAL.last("ENTRYPOINT")
    assert entrypoint is not None
    script, *args = yaml.safe_load(entrypoint)  # exec form is a JSON array
    assert (script in PYPROJECT["project"]["scripts"], args) == (True, ["serve"])


def test_image_exposes_the_port_crossplane_dials() -> None:
    assert FINAL.last("EXPOSE") == FUNCTION_PORT


def test_image_listens_on_every_interface_even_when_render_runs_it_insecure() -> None:
    # `serve --insecure` alone binds 127.0.0.1; a published container port reaches only other interfaces.
    assert [v for k, v in FINAL.instructions if k == "ENV" and v.startswith("ADDRESS=")] == [
        f"ADDRESS=0.0.0.0:{FUNCTION_PORT}"
    ]


def test_image_runs_as_a_non_root_user() -> None:
    user = FINAL.last("USER")
    assert user is not None
    uid = user.split(":")[0]
    assert uid not in {"0", "root"}


def test_image_build_context_admits_only_the_distributions_inputs() -> None:
    lines = (line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines())
    ignore = [line for line in lines if line and not line.startswith("#")]
    admitted = sorted(line.removeprefix("!").rstrip("/") for line in ignore if line.startswith("!"))
    copied = sorted(src for key, value in STAGES[0].instructions if key == "COPY" for src in value.split()[:-1])
    assert (ignore[0], admitted) == ("*", copied)


def crossplane_admits(constraint: str, version: str) -> bool:
    """Evaluate the one constraint form we use, `>=vX.Y.Z`; anything else is a test failure."""
    match = re.fullmatch(r">=v(\d+\.\d+\.\d+)", constraint)
    assert match, f"unexpected constraint form {constraint!r}"
    return Version(version.removeprefix("v")) >= Version(match.group(1))


@dataclass(frozen=True)
class Case:
    name: str
    got: Callable[[dict[str, Any]], object]
    want: object


METADATA_CASES = [
    Case(
        name="the package is a Function package",
        got=lambda m: (m["apiVersion"], m["kind"]),
        want=("meta.pkg.crossplane.io/v1", "Function"),
    ),
    Case(
        name="the package is named as Compositions reference it",
        got=lambda m: m["metadata"]["name"],
        want=FUNCTION_NAME,
    ),
    Case(
        name="the package name carries the function- prefix Crossplane requires",
        got=lambda m: m["metadata"]["name"].startswith("function-"),
        want=True,
    ),
    Case(
        name="the function declares the composition capability",
        got=lambda m: m["spec"]["capabilities"],
        want=["composition"],
    ),
    Case(
        name="the crossplane constraint admits the first release with XRD scale and no older one",
        got=lambda m: {
            v: crossplane_admits(m["spec"]["crossplane"]["version"], v) for v in ("v2.2.4", MIN_CROSSPLANE, "v2.4.0")
        },
        want={"v2.2.4": False, MIN_CROSSPLANE: True, "v2.4.0": True},
    ),
    Case(
        name="the annotations give source, description, license and maintainer",
        got=lambda m: sorted(
            key.removeprefix("meta.crossplane.io/")
            for key, value in m["metadata"]["annotations"].items()
            if key.removeprefix("meta.crossplane.io/") in REQUIRED_ANNOTATIONS and str(value).strip()
        ),
        want=sorted(REQUIRED_ANNOTATIONS),
    ),
    Case(
        name="the license is Apache-2.0",
        got=lambda m: m["metadata"]["annotations"]["meta.crossplane.io/license"],
        want="Apache-2.0",
    ),
]


@pytest.mark.parametrize("case", METADATA_CASES, ids=lambda c: c.name)
def test_function_package_metadata(case: Case) -> None:
    assert case.got(METADATA) == case.want


def test_every_composition_references_this_function_package() -> None:
    refs = sorted(
        (path.parent.name, step["functionRef"]["name"])
        for path in (ROOT / "apis").glob("*/composition.yaml")
        for step in yaml.safe_load(path.read_text())["spec"]["pipeline"]
    )
    assert refs, "no Composition found under apis/"
    assert refs == [(kind, METADATA["metadata"]["name"]) for kind, _ in refs]
