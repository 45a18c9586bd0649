"""A fleet object the function cannot read is left out, and every offline command says so on stderr.

The function contains another deployment's bad object (the rest of the fleet goes on); the CLI must
not hide it behind a clean exit: without --explain, stderr names it and the exit code is 3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from modelplane_function.cli.main import main

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"

BAD_REPLICA = """---
apiVersion: modelplane.ai/v1alpha1
kind: ModelReplica
metadata:
  name: other-eu-west-1-0
  namespace: team-other
  labels: {modelplane.ai/cluster: eu-west-1, modelplane.ai/deployment: other}
spec:
  clusterName: eu-west-1
  engines: oops
"""


def _bad_memory(fleet: str) -> str:
    # the first pool of us-east-1; its status.gpuPools is the same list, through a YAML alias
    return fleet.replace("memory: {value: 80Gi}", "memory: {value: 80GB}", 1)


def _bad_replica(fleet: str) -> str:
    return fleet + BAD_REPLICA


@dataclass(frozen=True)
class Case:
    name: str
    fleet: Callable[[str], str]
    want: str  # the stderr line, after "modelplane: "


CASES = [
    Case(
        name="an InferenceCluster with a quantity that is not one",
        fleet=_bad_memory,
        want="InferenceCluster us-east-1 cannot be read, so no new replica is placed on it: "
        "status.gpuPools[0].devices[0].capacity.memory.value: '80GB' is not a quantity: expected a signed decimal "
        "number and a suffix (n, u, m, k, M, G, T, P, E, Ki..Ei, or an exponent as in 1e3)",
    ),
    Case(
        name="another deployment's ModelReplica that cannot be read",
        fleet=_bad_replica,
        want="ModelReplica team-other/other-eu-west-1-0 cannot be read, so its cluster eu-west-1 takes no new "
        "replica: spec.engines: Input should be a valid tuple",
    ),
]

COMMANDS = {
    "render": lambda d: ["render", str(d / "xr.yaml"), "-e", str(d / "required-resources.yaml")],
    "fleet": lambda d: ["fleet", str(d / "xr.yaml"), "-e", str(d / "required-resources.yaml")],
    "plan": lambda d: ["plan", str(d)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_an_object_left_out_is_named_on_stderr_and_exits_3(case: Case, command: str, tmp_path: Path) -> None:
    (tmp_path / "xr.yaml").write_text((QUICKSTART / "xr.yaml").read_text())
    (tmp_path / "required-resources.yaml").write_text(case.fleet((QUICKSTART / "required-resources.yaml").read_text()))
    got = CliRunner().invoke(main, [*COMMANDS[command](tmp_path), "--allow-partial"])
    assert (got.exit_code, got.stderr) == (3, f"modelplane: {case.want}\n")
