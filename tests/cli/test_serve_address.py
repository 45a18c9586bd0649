"""Where `modelplane serve` listens: plaintext stays on this host unless an address is given."""

from dataclasses import dataclass, field
from typing import Any

import pytest
from click.testing import CliRunner
from modelplane_function.cli import main as cli
from modelplane_function.server import server


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    want: str
    env: dict[str, str] = field(default_factory=dict[str, str])


CASES = [
    Case(name="--insecure alone listens on this host only", args=("--insecure",), want="127.0.0.1:9443"),
    Case(
        name="--insecure with an address given listens there",
        args=("--insecure", "--address", "0.0.0.0:9443"),
        want="0.0.0.0:9443",
    ),
    Case(
        name="--insecure with ADDRESS set (as the image sets it) listens there",
        args=("--insecure",),
        env={"ADDRESS": "0.0.0.0:9443"},
        want="0.0.0.0:9443",
    ),
    Case(
        name="INSECURE from the environment listens on this host only",
        args=(),
        env={"INSECURE": "true"},
        want="127.0.0.1:9443",
    ),
    Case(
        name="mTLS keeps the SDK's default of every interface",
        args=("--tls-certs-dir", "/nonexistent"),
        want="0.0.0.0:9443",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_serve_listens_where_it_should(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    async def listen(address: str, *_: Any) -> None:
        msg = f"listening on {address}"
        raise server.ServeError(msg)  # stop before binding anything

    monkeypatch.setattr(cli, "_serve", listen)
    monkeypatch.setattr(cli, "LoggedRunner", lambda **_: None)
    monkeypatch.setattr(server, "load_credentials", lambda _: object())
    env = {"ADDRESS": None, "INSECURE": None, "TLS_SERVER_CERTS_DIR": None, **case.env}
    got = CliRunner().invoke(cli.main, ["serve", *case.args], env=env)
    assert (got.exit_code, got.stderr) == (1, f"Error: listening on {case.want}\n")
