"""The install manifests the how-to applies are complete and agree with what the function renders.

examples/install/function.yaml is a valid Function under the name every Composition calls;
examples/install/cluster-provider-config.yaml is the kind, API group and name the rendered Objects
reference for the multinode-gang example's cluster, with every credential field its CRD requires;
the push command in docs/how-to/install.md pushes the file `make package` writes.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelplane_function.cli.main import main

from tests.validator import run_validator

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "examples" / "install"
GANG = ROOT / "examples" / "multinode-gang"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def _rendered_objects() -> list[dict[str, Any]]:
    got = CliRunner().invoke(
        main, ["render", str(GANG / "xr.yaml"), "-e", str(GANG / "required-resources.yaml"), "--allow-partial"]
    )
    return [d for d in yaml.safe_load_all(got.stdout) if d["kind"] == "Object"]


def _function_names() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "apis").glob("*/composition.yaml"):
        names |= {step["functionRef"]["name"] for step in _load(path)["spec"]["pipeline"]}
    return names


def test_the_function_manifest_is_valid_and_named_as_the_compositions_call_it() -> None:
    run = run_validator(INSTALL / "function.yaml")
    assert (run.returncode, {_load(INSTALL / "function.yaml")["metadata"]["name"]}) == (0, _function_names())


def test_the_cluster_provider_config_is_what_the_rendered_objects_reference() -> None:
    config = _load(INSTALL / "cluster-provider-config.yaml")
    objects = _rendered_objects()
    referenced = {
        (o["apiVersion"].split("/")[0], o["spec"]["providerConfigRef"]["kind"], o["spec"]["providerConfigRef"]["name"])
        for o in objects
    }
    credentials = config["spec"]["credentials"]
    assert (
        {(config["apiVersion"].split("/")[0], config["kind"], config["metadata"]["name"])},
        credentials["source"],
        sorted(credentials["secretRef"]),
    ) == (referenced, "Secret", ["key", "name", "namespace"])


@dataclass(frozen=True)
class Push:
    name: str
    pattern: str  # finds the value in docs/how-to/install.md
    want: str


PUSHES = [
    Push(
        name="the push command pushes the file make package writes",
        pattern=r"crossplane xpkg push --package-files=(\S+)",
        want=f"_output/function-modelplane-{VERSION}-amd64.xpkg",
    ),
    Push(
        name="the Function installs the reference the push command pushed",
        pattern=r"\\\n\s+(\S+:v\S+)\n",
        want=_load(INSTALL / "function.yaml")["spec"]["package"],
    ),
]


@pytest.mark.parametrize("case", PUSHES, ids=lambda c: c.name)
def test_the_install_steps_agree(case: Push) -> None:
    found = re.search(case.pattern, (ROOT / "docs" / "how-to" / "install.md").read_text())
    assert found is not None
    assert found.group(1) == case.want
