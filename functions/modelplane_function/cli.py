"""The `modelplane` command: `serve` the function over gRPC, or `render` XRs offline through it."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import click
from crossplane.function import cli as sdkcli
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import names
from modelplane.fleet import FleetView, page, text

from modelplane_function import server
from modelplane_function.fn import FunctionRunner
from modelplane_function.render import RenderFailure, load, render_documents, render_stream
from modelplane_function.render.explain import fleet_view

_MIB = 1024 * 1024


@click.group()
def main() -> None:
    """Modelplane fleet scheduler: a Crossplane composition function."""


async def _serve(address: str, creds: object, options: list[tuple[str, int]]) -> None:
    srv, _ = await server.start(FunctionRunner(), address, creds=creds, options=options)  # type: ignore[arg-type]
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: asyncio.ensure_future(srv.stop(grace=5)))
    await srv.wait_for_termination()


@main.command()
@sdkcli.standard_options
def serve(
    *,
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
) -> None:
    """Serve the function over gRPC (mTLS with --tls-certs-dir; --insecure wins when both are given)."""
    logging.configure(level=logging.Level.DEBUG if debug else logging.Level.INFO)
    if not insecure and not tls_certs_dir:
        msg = "serving needs --tls-certs-dir (or TLS_SERVER_CERTS_DIR) for mTLS, or --insecure"
        raise click.UsageError(msg)
    options = [
        ("grpc.max_receive_message_length", max_recv_message_size * _MIB),
        ("grpc.max_send_message_length", (max_send_message_size or max_recv_message_size) * _MIB),
    ]
    try:
        creds = None if insecure else server.load_credentials(str(tls_certs_dir))
        asyncio.run(_serve(address, creds, options))
    except server.ServeError as e:
        raise click.ClickException(str(e)) from e


def _inputs(command: Callable[..., None]) -> Callable[..., None]:
    """The inputs `render` and `fleet` share: the XR, required and observed resources, Compositions."""
    for option in reversed(_INPUT_OPTIONS):
        command = option(command)
    return command


_INPUT_OPTIONS = (
    click.argument("xr_file", type=click.Path(exists=True, dir_okay=False, path_type=Path)),
    click.option(
        "--required-resources",
        "-e",
        "required",
        multiple=True,
        type=click.Path(exists=True, path_type=Path),
        help="YAML file or directory of resources the function may require (repeatable).",
    ),
    click.option(
        "--observed-resources",
        "-o",
        "observed",
        multiple=True,
        type=click.Path(exists=True, path_type=Path),
        help="YAML file or directory of composed resources that already exist (repeatable).",
    ),
    click.option(
        "--apis",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=None,
        help="Directory searched for Compositions (default: this repository's apis/).",
    ),
)


_RENDER_HELP = """Render XR_FILE offline through the real function, as `crossplane render` would.

The function is started behind a gRPC server on a free local port and driven like the engine
flavour of `crossplane render` (CLI >= v2.3): up to 6 calls per pipeline step until the function's
requirements stop changing; required resources are fetched by apiVersion/kind plus name or labels,
and the namespace of a requirement IS honoured (classic render ignores it). Observed and required
resources are both visible to requirements, as in a real cluster. Composed resources get the
crossplane.io/composite label, the composition-resource-name annotation, a controller
ownerReference with the XR's deterministic render UID, and engine-style deterministic names when
the function sets none. The XR is printed with its input metadata and spec (like -x), the
function's status, and Responsive/custom/Synced/Ready conditions; timestamps are fixed at
2024-01-01T00:00:00Z.

Unless --no-recurse, every composed ModelReplica is then rendered with the ModelReplica
Composition: its status is shown on its document and its composed objects follow the
deployment's documents. Observed resources belong to the XR named by their controller
ownerReference (kind and name), or to XR_FILE's XR when they have none.
"""


@main.command(help=_RENDER_HELP)
@_inputs
@click.option("--no-recurse", is_flag=True, help="Do not render the composed ModelReplicas.")
@click.option("--explain", is_flag=True, help="Print the placement and the scheduler's diagnosis to stderr.")
@click.option("--debug", "-d", is_flag=True, help="Log the function's debug output to stderr.")
def render(
    *,
    xr_file: Path,
    required: tuple[Path, ...],
    observed: tuple[Path, ...],
    apis: Path | None,
    no_recurse: bool,
    explain: bool,
    debug: bool,
) -> None:
    try:
        out = render_stream(
            xr_file,
            required=required,
            observed=observed,
            apis=apis,
            recurse=not no_recurse,
            explain=sys.stderr if explain else None,
            debug=debug,
        )
    except RenderFailure as e:
        raise click.ClickException(str(e)) from e
    sys.stdout.write(out)


def fleet_for(
    xr_file: Path, *, required: Sequence[Path] = (), observed: Sequence[Path] = (), apis: Path | None = None
) -> FleetView:
    """`modelplane fleet` as a function: render the ModelDeployment (not its replicas) and rebuild
    the fleet from the last request the function received. Raises RenderFailure."""
    xr = load.single(xr_file)
    if xr.get("kind") != names.KIND_DEPLOYMENT:
        msg = f"{xr_file}: fleet takes a {names.KIND_DEPLOYMENT}, got kind {xr.get('kind')!r}"
        raise RenderFailure(msg)
    requests: list[fnv1.RunFunctionRequest] = []
    render_documents(
        xr,
        required=load.documents(required),
        observed=load.documents(observed),
        compositions=load.compositions(apis or load.default_apis()),
        recurse=False,
        requests=requests,
    )
    if not requests:
        msg = f"{xr_file}: the function was never called for this {names.KIND_DEPLOYMENT}"
        raise RenderFailure(msg)
    view = fleet_view(requests[-1])
    if isinstance(view, str):
        raise RenderFailure(view)
    return view


@main.command()
@_inputs
@click.option("--output", type=click.Choice(["text", "html"]), default="text", show_default=True, help="Format.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file instead of stdout.",
)
def fleet(
    *,
    xr_file: Path,
    required: tuple[Path, ...],
    observed: tuple[Path, ...],
    apis: Path | None,
    output: str,
    out: Path | None,
) -> None:
    """Show the fleet after placing XR_FILE's ModelDeployment: every pool's nodes, who holds them, and why.

    Takes the inputs `render` takes and runs the same function, but prints no manifests: a table
    per cluster and pool (text), or one self-contained HTML page (html).
    """
    try:
        view = fleet_for(xr_file, required=required, observed=observed, apis=apis)
    except RenderFailure as e:
        raise click.ClickException(str(e)) from e
    rendered = page(view) if output == "html" else text(view)
    if out is None:
        sys.stdout.write(rendered)
    else:
        out.write_text(rendered)
