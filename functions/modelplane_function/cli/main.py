"""The `modelplane` command: `serve` the function over gRPC, or `render` XRs offline through it."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from crossplane.function import cli as sdkcli
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import names
from modelplane.fleet import FleetView, page, plan_page, plan_text, text
from modelplane.fleet.preview import preview_text

from modelplane_function.cli.plan import MAX_ROUNDS
from modelplane_function.cli.plan import plan as plan_fleet
from modelplane_function.cli.render import RenderFailure, load, render_documents, render_files, yamlio
from modelplane_function.cli.render import output as output_module
from modelplane_function.cli.render.cause import with_causes
from modelplane_function.cli.render.contained import contained
from modelplane_function.cli.render.defaults import namespace_notes
from modelplane_function.cli.render.driver import FileInputs
from modelplane_function.cli.render.explain import clusters_of, fleet_view
from modelplane_function.cli.render.unmatched import unmatched
from modelplane_function.cli.render.unused import Usage
from modelplane_function.cli.render.verdict import Exit, Finding, exit_code, failures
from modelplane_function.server import server
from modelplane_function.server.logged import LoggedRunner, configure, line_buffered
from modelplane_function.server.workers import DEFAULT_DEADLINE_SECONDS

_MIB = 1024 * 1024
# Plaintext is for local development: without an address given, --insecure listens on this host only.
# The image sets ADDRESS, so a container started with --insecure (crossplane render) stays reachable.
LOCAL_ADDRESS = "127.0.0.1:9443"


def listen_address(address: str, *, insecure: bool, given: bool) -> str:
    """Where serve listens: the address asked for, or this host only when serving plaintext by default."""
    return LOCAL_ADDRESS if insecure and not given else address


_EXIT_HELP = """Exit codes: 0 success; 1 nothing rendered (unreadable input, a fatal result, the
function unreachable); 2 bad command line; 3 the function rejected some input (a False
ReplicasScheduled, ReplicaRendered or GPUPoolsPublished condition: InvalidSpec,
InvalidNodeSelector, NoClusters, CannotRender, ...; or an InferenceCluster or ModelReplica it
could not read and left out of the fleet); 4 every input valid but replicas left
unplaced (InsufficientCapacity, NoSuitableCluster), which --allow-partial turns into 0. With 3 or 4
the output is complete and stderr names each failure."""
_PACKAGE = "function-modelplane-scheduler"


@click.group(epilog=_EXIT_HELP)
@click.version_option(package_name=_PACKAGE, prog_name="modelplane")
def main() -> None:
    """Modelplane fleet scheduler: a Crossplane composition function."""


async def _serve(address: str, creds: object, options: list[tuple[str, int]], runner: LoggedRunner) -> None:
    srv, _ = await server.start(runner, address, creds=creds, options=options)  # type: ignore[arg-type]
    limits = dict(options)
    logging.get_logger().info(  # once listening: a server that cannot start says only why
        "Serving function",
        version=importlib.metadata.version(_PACKAGE),
        address=address,
        transport="insecure" if creds is None else "mTLS",
        max_recv_message_size_mib=limits["grpc.max_receive_message_length"] // _MIB,
        max_send_message_size_mib=limits["grpc.max_send_message_length"] // _MIB,
        workers=runner.pool.workers if runner.pool is not None else 0,
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: asyncio.ensure_future(srv.stop(grace=5)))
    await srv.wait_for_termination()
    await runner.close()


@main.command()
@sdkcli.standard_options
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    envvar="WORKERS",
    help="Worker processes composing requests in parallel (one request each at a time).",
)
@click.option(
    "--call-deadline",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_DEADLINE_SECONDS,
    show_default=True,
    envvar="CALL_DEADLINE",
    help="Seconds a request may run; past it, its worker is replaced and the answer is a FATAL result.",
)
def serve(
    *,
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
    workers: int,
    call_deadline: float,
) -> None:
    """Serve the function over gRPC (mTLS with --tls-certs-dir; --insecure wins when both are given).

    With --insecure and no --address (or ADDRESS) it listens on 127.0.0.1:9443 only; give
    --address 0.0.0.0:9443 to accept plaintext calls from other hosts or containers.

    Logs JSON lines on stdout (human-readable with --debug): one at start, one per request with its
    tag, the composite, the duration and the outcome; with --debug also each decision.
    """
    level = logging.Level.DEBUG if debug else logging.Level.INFO
    configure(level, sys.stdout)
    line_buffered(sys.stdout)  # a log redirected to a file or a pipe shows each line as it happens
    if not insecure and not tls_certs_dir:
        msg = "serving needs --tls-certs-dir (or TLS_SERVER_CERTS_DIR) for mTLS, or --insecure"
        raise click.UsageError(msg)
    source = click.get_current_context().get_parameter_source("address")
    given = source not in (click.core.ParameterSource.DEFAULT, click.core.ParameterSource.DEFAULT_MAP)
    address = listen_address(address, insecure=insecure, given=given)
    send = max_send_message_size or max_recv_message_size
    options = [
        ("grpc.max_receive_message_length", max_recv_message_size * _MIB),
        ("grpc.max_send_message_length", send * _MIB),
    ]
    try:
        creds = None if insecure else server.load_credentials(str(tls_certs_dir))
        asyncio.run(_serve(address, creds, options, LoggedRunner(workers=workers, deadline=call_deadline, level=level)))
    except server.ServeError as e:
        raise click.ClickException(str(e)) from e


def _finish(
    found: Sequence[Finding], *, allow_partial: bool, code: Exit | None = None, notes: Sequence[str] = ()
) -> None:
    """Say what was assumed, name every finding on stderr and exit with the code that classifies them (or `code`)."""
    for note in notes:
        click.echo(f"modelplane: note: {note}", err=True)
    for f in found:
        if not (f.partial and allow_partial):
            click.echo(f"modelplane: {f.line()}", err=True)
    code = code or exit_code(found, allow_partial=allow_partial)
    if code is not Exit.OK:
        sys.exit(int(code))


_DEBUG = click.option(
    "--debug",
    "-d",
    is_flag=True,
    help="Log the function's debug output to stderr (coloured on a terminal, unless NO_COLOR is set).",
)
_ALLOW_PARTIAL = click.option(
    "--allow-partial",
    is_flag=True,
    help="Exit 0 when the only failure is replicas left unplaced (previewing partial placement).",
)

_ASSUME_READY = click.option(
    "--assume-ready",
    is_flag=True,
    help="Treat every given ModelReplica without a Ready condition as Ready (a previous render's output has "
    "none), for a rollout preview that keeps replicas serving as a running fleet would.",
)


def _inputs(*, observed_short: bool) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The inputs `render` and `fleet` share: the XR, required and observed resources, Compositions.

    render takes crossplane render's -o for observed resources; `fleet` and `plan` (like kubectl)
    take -o for the output format, so theirs is only the long flag.
    """
    flags = ("--observed-resources", "-o") if observed_short else ("--observed-resources",)
    options = (
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
            *flags,
            "observed",
            multiple=True,
            type=(_ObservedPath if observed_short else click.Path)(exists=True, path_type=Path),
            help="YAML file or directory of composed resources that already exist (repeatable)."
            + (" -o is this, as in crossplane render: render always writes YAML." if observed_short else ""),
        ),
        click.option(
            "--apis",
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            default=None,
            help="Directory searched for Compositions (default: this repository's apis/).",
        ),
    )

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


# Output format names of kubectl, `fleet` and `plan`, which a user may give to render's -o.
_FORMATS = frozenset({"text", "html", "yaml", "json", "wide", "name"})


class _ObservedPath(click.Path):
    """Observed resources: a format name given instead (render's -o) is said to be one."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.lower() in _FORMATS and not Path(value).exists():
            self.fail(
                f"{value!r} is an output format, not a file: render's -o is --observed-resources, as in "
                f"crossplane render, and render always writes YAML to stdout. Drop '-o {value}' "
                "(fleet and plan take -o text|html).",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


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
ownerReference (kind and name), or to XR_FILE's XR when they have none. As with crossplane
render, -o is short for --observed-resources here.
"""


@main.command(help=_RENDER_HELP, epilog=_EXIT_HELP)
@_inputs(observed_short=True)
@click.option("--no-recurse", is_flag=True, help="Do not render the composed ModelReplicas.")
@click.option(
    "--explain",
    is_flag=True,
    help="Print the placement, rendering and the diagnosis to stderr, then any rollout under way round by round.",
)
@_DEBUG
@_ALLOW_PARTIAL
@_ASSUME_READY
def render(
    *,
    xr_file: Path,
    required: tuple[Path, ...],
    observed: tuple[Path, ...],
    apis: Path | None,
    no_recurse: bool,
    explain: bool,
    debug: bool,
    allow_partial: bool,
    assume_ready: bool,
) -> None:
    requests: list[bytes] = []
    notes: list[str] = []
    try:
        docs = render_files(
            xr_file,
            required=required,
            observed=observed,
            apis=apis,
            recurse=not no_recurse,
            explain=sys.stderr if explain else None,
            debug=debug,
            requests=requests,
            notes=notes,
            assume_ready=assume_ready,
        )
    except RenderFailure as e:
        raise click.ClickException(str(e)) from e
    sys.stdout.write(output_module.dump(docs))
    sys.stdout.flush()
    found = [*contained(requests), *with_causes(failures(docs), requests, "--explain has the rest")]
    _finish(found, allow_partial=allow_partial, notes=[*notes, *namespace_notes(docs[:1])])


def fleet_for(
    xr_file: Path,
    *,
    required: Sequence[Path] = (),
    observed: Sequence[Path] = (),
    apis: Path | None = None,
    debug: bool = False,
    notes: list[str] | None = None,
    assume_ready: bool = False,
) -> tuple[FleetView, list[Finding]]:
    """`modelplane fleet` as a function: render the ModelDeployment (not its replicas), rebuild the
    fleet from the last request the function received, and the render's findings. Raises RenderFailure.

    `notes`, when given, receives a line for each required document the function was never given, and
    one when given ModelReplicas have no Ready condition; `assume_ready` gives them one."""
    xr = load.single(xr_file)
    if xr.get("kind") != names.KIND_DEPLOYMENT:
        msg = f"{xr_file}: fleet takes a {names.KIND_DEPLOYMENT}, got kind {xr.get('kind')!r}"
        raise RenderFailure(msg)
    requests: list[bytes] = []
    usage = Usage()
    with yamlio.collector_paused():
        inputs = FileInputs.read(required, observed, assume_ready=assume_ready)
        docs = render_documents(
            xr,
            required=inputs.stated.docs,
            observed=inputs.observed,
            compositions=load.compositions(apis or load.default_apis()),
            recurse=False,
            requests=requests,
            debug=debug,
            usage=usage,
        )
        if notes is not None:
            notes += [*inputs.unused(usage), *inputs.unready()]
        if not requests:
            msg = f"{xr_file}: the function was never called for this {names.KIND_DEPLOYMENT}"
            raise RenderFailure(msg)
        view = fleet_view(
            fnv1.RunFunctionRequest.FromString(requests[-1]), clusters_of([doc for _, doc in inputs.files])
        )
    if isinstance(view, str):
        # No view to draw: say at least what the clusterSelector wants of which clusters.
        found = unmatched(fnv1.RunFunctionRequest.FromString(requests[-1]))
        raise RenderFailure("\n".join([view, *(found.lines() if found is not None else [])]))
    return view, [*contained(requests), *with_causes(failures(docs), requests, "the fleet view has the rest")]


def _write(rendered: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(rendered)
        sys.stdout.flush()
    else:
        out.write_text(rendered)


_OUT = click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write to this file instead of stdout."
)


@main.command(epilog=_EXIT_HELP)
@_inputs(observed_short=False)
@click.option(
    "--output", "-o", type=click.Choice(["text", "html"]), default="text", show_default=True, help="Output format."
)
@_OUT
@_DEBUG
@_ALLOW_PARTIAL
@_ASSUME_READY
def fleet(
    *,
    xr_file: Path,
    required: tuple[Path, ...],
    observed: tuple[Path, ...],
    apis: Path | None,
    output: str,
    out: Path | None,
    debug: bool,
    allow_partial: bool,
    assume_ready: bool,
) -> None:
    """Show the fleet after placing XR_FILE's ModelDeployment: every pool's nodes and devices, who holds
    them, and why clusters turned the deployment down or were left out by its clusterSelector.

    Takes the inputs `render` takes (observed resources by their long flag only: -o is the output
    format, as in kubectl) and runs the same function, but prints no manifests: a table per cluster
    and pool (text), or one self-contained HTML page (html).
    """
    said: list[str] = []
    try:
        view, found = fleet_for(
            xr_file,
            required=required,
            observed=observed,
            apis=apis,
            debug=debug,
            notes=said,
            assume_ready=assume_ready,
        )
        notes = [*said, *namespace_notes([load.single(xr_file)])]
    except RenderFailure as e:
        raise click.ClickException(str(e)) from e
    _write(page(view) if output == "html" else text(view), out)
    _finish(found, allow_partial=allow_partial, notes=notes)


@main.command(epilog=_EXIT_HELP + " 5: the plan did not settle within --max-rounds.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--output",
    "-o",
    type=click.Choice(["text", "html", "yaml"]),
    default="text",
    show_default=True,
    help="text or html: the fleet plan; yaml: every deployment's render stream after the plan.",
)
@_OUT
@click.option(
    "--apis",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Directory searched for Compositions (default: this repository's apis/).",
)
@click.option("--max-rounds", type=click.IntRange(1, 100), default=MAX_ROUNDS, show_default=True)
@_DEBUG
@_ALLOW_PARTIAL
@_ASSUME_READY
@click.option(
    "--arrive-in-order",
    is_flag=True,
    help="Create the deployments one at a time, in the order the files give them, each once the ones before "
    "are placed and Ready (as teams create them over weeks), then settle with replicas Ready between rounds.",
)
def plan(
    *,
    paths: tuple[Path, ...],
    output: str,
    out: Path | None,
    apis: Path | None,
    max_rounds: int,
    debug: bool,
    allow_partial: bool,
    assume_ready: bool,
    arrive_in_order: bool,
) -> None:
    """Plan a whole fleet: will these deployments fit, and where?

    PATHS are YAML files or directories (their *.yaml and *.yml) holding ModelDeployments,
    InferenceClusters and, optionally, existing ModelReplicas and Namespaces. Every deployment is
    reconciled through the real function, in order of namespace then name, each seeing the replicas
    the previous ones composed; rounds repeat until a round changes nothing. Prints every
    deployment's placement, why any replica is unplaced, and the fleet's pools; the text ends with
    each rollout under way (replicas given on an older revision), round by round.
    """
    try:
        result = plan_fleet(
            list(paths),
            apis=apis,
            max_rounds=max_rounds,
            debug=debug,
            assume_ready=assume_ready,
            arrive_in_order=arrive_in_order,
        )
    except RenderFailure as e:
        raise click.ClickException(str(e)) from e
    if output == "yaml":
        rendered = output_module.dump(result.stream)
    else:
        rendered = plan_page(result.view) if output == "html" else plan_text(result.view)
    if output == "text" and result.rollouts:
        # the fleet plan shows where replicas end up; the preview, how the rollout gets there
        rendered += "".join("\n".join(preview_text(p)) + "\n" for p in result.rollouts)
    _write(rendered, out)
    settled = result.view.converged
    if not settled:
        click.echo(f"modelplane: the plan did not settle in {result.view.rounds} rounds", err=True)
    _finish(
        result.failures, allow_partial=allow_partial, code=None if settled else Exit.NOT_SETTLED, notes=result.notes
    )


def run() -> None:
    """The `modelplane` console script: `main`, then exit without freeing the heap object by object.

    A render holds a whole fleet in memory; the interpreter's orderly teardown spent ~1 s of a
    1,000-cluster render freeing it. Everything is written and flushed, and the gRPC server stopped,
    before this exits.
    """
    try:
        main.main(prog_name="modelplane")
        code: object = 0
    except SystemExit as e:
        code = e.code
    if isinstance(code, str):  # SystemExit's message form: print it, exit 1, as the interpreter does
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)
