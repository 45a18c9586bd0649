"""A call of `modelplane plan` that runs out of time fails the plan: no round or deployment is dropped as "no change".

On a loaded machine a call can outlast the render deadline, or its worker can be stopped at the
function's own deadline (FATAL, which Crossplane treats as "change nothing"). Either way the plan
must stop and say so: carrying on without that deployment's answer would print another plan.
Nothing else is logged: the exchange with a stopped worker is read to its end.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from modelplane_function.cli.main import main
from modelplane_function.cli.render import driver
from modelplane_function.server.logged import LoggedRunner

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet-plan"
DEADLINE = 0.001  # seconds: shorter than any call


@dataclass(frozen=True)
class Case:
    name: str
    timeout: str  # what runs out of time: "render" (the gRPC call) or "worker" (the function's deadline)
    want: str  # what the plan prints on stderr


CASES = (
    Case(
        name="the render's own call deadline passes",
        timeout="render",
        want="Error: calling the function failed: DEADLINE_EXCEEDED: Deadline Exceeded\n",
    ),
    Case(
        name="the function stops the call's worker at its deadline",
        timeout="worker",
        want=(
            'Error: pipeline step "schedule" returned a fatal result: composing ModelDeployment failed: '
            f"it was still running after the {DEADLINE:g} s deadline, and was stopped; nothing was changed\n"
        ),
    ),
)


@pytest.fixture
def runners(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[LoggedRunner]]:
    """The runners the plan's server is given, composing in a worker under DEADLINE; stopped afterwards."""
    made: list[LoggedRunner] = []

    def with_worker() -> LoggedRunner:
        made.append(LoggedRunner(workers=1, deadline=DEADLINE))
        return made[-1]

    monkeypatch.setattr(driver, "LoggedRunner", with_worker)
    yield made
    for runner in made:
        assert runner.pool is not None
        for worker in runner.pool._idle:
            worker.stop()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_call_out_of_time_fails_the_plan_and_says_why(
    case: Case, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch, caplog.at_level(logging.WARNING, logger="asyncio"):
        if case.timeout == "render":
            monkeypatch.setattr(driver, "_TIMEOUT_SECONDS", DEADLINE)
        else:
            request.getfixturevalue("runners")
        got = CliRunner().invoke(main, ["plan", str(EXAMPLE), "--allow-partial"])
        gc.collect()  # an unread future says so when it is collected
    logged = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert (got.exit_code, got.stdout, got.stderr, logged) == (1, "", case.want, [])
