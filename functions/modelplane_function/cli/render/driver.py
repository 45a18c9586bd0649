"""The render driver: a real gRPC server on a private Unix socket, the pipeline, the printed stream."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import grpc
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import names

from modelplane_function.cli.render import load, output, pipeline, yamlio
from modelplane_function.cli.render.demands import Stated, with_stated_demand
from modelplane_function.cli.render.errors import RenderFailure
from modelplane_function.cli.render.explain import explain as explain_placement
from modelplane_function.cli.render.ready import assumed, assumed_doc, unready_note
from modelplane_function.cli.render.store import Store
from modelplane_function.cli.render.unused import Usage
from modelplane_function.cli.render.unused import notes as unused_notes
from modelplane_function.cli.render.wire import Doc
from modelplane_function.cli.render.xr import controller_of, name_of, namespace_of, observed_by_key, observed_xr
from modelplane_function.handlers.convert import to_struct
from modelplane_function.server import server
from modelplane_function.server.logged import LoggedRunner, configure

_TIMEOUT_SECONDS = 60  # crossplane render's default --timeout
# The whole fleet travels in one request over loopback: a 1,000-cluster fleet is ~23 MiB, past
# gRPC's 4 MiB default. A deployed function is limited by its --max-recv-message-size instead.
_METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
_UNLIMITED = (("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1))


@dataclass(frozen=True, slots=True)
class _Inputs:
    compositions: Sequence[Mapping[str, Any]]
    required: Sequence[Mapping[str, Any] | Doc]
    observed: Sequence[Mapping[str, Any]]
    explain: TextIO | None
    requests: list[bytes] | None = None  # collects each ModelDeployment's last request
    usage: Usage | None = None  # collects what requirements asked for and were given


def _owned(xr: Mapping[str, Any], observed: Sequence[Mapping[str, Any]], *, top: bool) -> list[Mapping[str, Any]]:
    """The observed resources controlled by `xr` (by kind and name); for the top XR, also unowned ones."""
    out: list[Mapping[str, Any]] = []
    for obj in observed:
        ref = controller_of(obj)
        if ref is None:
            if top:
                out.append(obj)
        elif (ref.get("kind"), ref.get("name")) == (xr.get("kind"), name_of(xr)) and (
            not namespace_of(xr) or namespace_of(obj) in ("", namespace_of(xr))
        ):
            out.append(obj)
    return out


def _has_composition(obj: Mapping[str, Any], compositions: Sequence[Mapping[str, Any]]) -> bool:
    return any(
        ((c.get("spec") or {}).get("compositeTypeRef") or {}).get("kind") == obj.get("kind")
        and ((c.get("spec") or {}).get("compositeTypeRef") or {}).get("apiVersion") == obj.get("apiVersion")
        for c in compositions
    )


async def _render(
    call: pipeline.Call, xr: Mapping[str, Any], inputs: _Inputs, *, top: bool, recurse: bool
) -> list[dict[str, Any]]:
    """The XR's document, its composed documents, then (recursing) theirs."""
    composition = load.composition_for(xr, inputs.compositions)
    observed = observed_by_key(xr, _owned(xr, inputs.observed, top=top))
    composition_name = str((composition.get("metadata") or {}).get("name", ""))
    xr_seen = observed_xr(xr, composition_name, observed)
    store = Store([xr_seen, *observed.values(), *inputs.required], inputs.usage)
    state = fnv1.State(composite=fnv1.Resource(resource=to_struct(xr_seen)))
    for key, obj in observed.items():
        state.resources[key].resource.CopyFrom(to_struct(obj))
    result = await pipeline.run(call, composition, state, store)
    if inputs.requests is not None and xr.get("kind") == names.KIND_DEPLOYMENT and result.runs:
        inputs.requests.append(result.runs[-1].wire)
    composed = output.resource_docs(xr, result.desired, observed)
    head = output.xr_document(xr, result.desired, result.conditions, [obj for _, obj in composed])
    docs: list[dict[str, Any]] = []
    tail: list[dict[str, Any]] = []
    children: list[dict[str, Any]] = []
    for _, obj in composed:
        if recurse and _has_composition(obj, inputs.compositions):
            # The child's own render: show its status on its document, append what it composes.
            child = await _render(call, obj, inputs, top=False, recurse=recurse)
            docs.append(output.merge(obj, {"status": child[0].get("status"), "spec": child[0].get("spec")}))
            if obj.get("kind") == names.KIND_REPLICA:
                children.append(child[0])
            tail += child[1:]
        else:
            docs.append(obj)
    if inputs.explain is not None and xr.get("kind") == names.KIND_DEPLOYMENT and result.runs:
        # After the children: the explanation includes whether each placed replica rendered.
        explain_placement(result.runs[-1].request, inputs.explain, children if recurse else None)
    return [head, *docs, *tail]


@asynccontextmanager
async def serving() -> AsyncIterator[pipeline.Call]:
    """The function behind a gRPC server on a Unix socket of its own, and a way to call it.

    A socket in a fresh private directory cannot collide with anything, where a TCP port, even one
    the kernel picks, shares the host's ports with every other render and server running at once.
    """
    where = tempfile.mkdtemp(prefix="modelplane-render-")
    address = f"unix:{where}/fn.sock"
    try:
        srv, _ = await server.start(LoggedRunner(), address, creds=None, options=_UNLIMITED)
    except BaseException:
        shutil.rmtree(where, ignore_errors=True)
        raise
    try:
        async with grpc.aio.insecure_channel(address, options=_UNLIMITED) as channel:
            # The SDK stub's method, taking the request already serialized (pipeline.py builds bytes).
            run_function = channel.unary_unary(
                _METHOD, request_serializer=None, response_deserializer=fnv1.RunFunctionResponse.FromString
            )

            async def call(req: bytes) -> fnv1.RunFunctionResponse:
                try:
                    return await run_function(req, timeout=_TIMEOUT_SECONDS)
                except grpc.aio.AioRpcError as e:
                    msg = f"calling the function failed: {e.code().name}: {e.details()}"
                    raise RenderFailure(msg) from e

            yield call
    finally:
        await srv.stop(grace=None)
        shutil.rmtree(where, ignore_errors=True)


async def render_with(
    call: pipeline.Call,
    xr: Mapping[str, Any],
    *,
    required: Sequence[Mapping[str, Any] | Doc] = (),
    observed: Sequence[Mapping[str, Any]] = (),
    compositions: Sequence[Mapping[str, Any]],
    recurse: bool = True,
    explain: TextIO | None = None,
    requests: list[bytes] | None = None,
    usage: Usage | None = None,
) -> list[dict[str, Any]]:
    """Render one XR through a function already being served (see `serving`).

    `requests`, when given, receives the last request sent for each ModelDeployment, serialized
    (what `modelplane fleet` and `plan` re-run the scheduler on); `usage`, what requirements asked
    for and were given. Inputs are never mutated.
    """
    inputs = _Inputs(
        compositions=compositions,
        required=required,
        observed=observed,
        explain=explain,
        requests=requests,
        usage=usage,
    )
    return await _render(call, xr, inputs, top=True, recurse=recurse)


def configure_logging(*, debug: bool) -> None:
    """The function's log: off, or at debug level on stderr (stdout carries the YAML stream)."""
    configure(logging.Level.DEBUG if debug else logging.Level.DISABLED, sys.stderr)


def render_documents(
    xr: Mapping[str, Any],
    *,
    required: Sequence[Mapping[str, Any] | Doc] = (),
    observed: Sequence[Mapping[str, Any]] = (),
    compositions: Sequence[Mapping[str, Any]] | None = None,
    recurse: bool = True,
    explain: TextIO | None = None,
    debug: bool = False,
    requests: list[bytes] | None = None,
    usage: Usage | None = None,
) -> list[dict[str, Any]]:
    """Render one XR through the real function; the documents render would print, in order."""
    configure_logging(debug=debug)
    found = load.compositions(load.default_apis()) if compositions is None else compositions

    async def run() -> list[dict[str, Any]]:
        async with serving() as call:
            return await render_with(
                call,
                xr,
                required=required,
                observed=observed,
                compositions=found,
                recurse=recurse,
                explain=explain,
                requests=requests,
                usage=usage,
            )

    return asyncio.run(run())


@dataclass(frozen=True, slots=True)
class FileInputs:
    """What `render` and `fleet` hand the function from their input files, and what they say of them."""

    files: list[tuple[Path, Doc]]  # the required documents by file, given Ready when assumed so
    stated: Stated  # those documents and the ModelDemand of each ModelDeployment among them
    seen: list[dict[str, Any]]  # the observed documents as given
    assume_ready: bool

    @staticmethod
    def read(required: Sequence[Path], observed: Sequence[Path], *, assume_ready: bool) -> FileInputs:
        files = [(f, assumed_doc(doc) if assume_ready else doc) for f, doc in load.required_by_file(required)]
        return FileInputs(
            files=files,
            stated=with_stated_demand([doc for _, doc in files]),
            seen=load.documents(observed),
            assume_ready=assume_ready,
        )

    @property
    def observed(self) -> list[dict[str, Any]]:
        return [assumed(obj) for obj in self.seen] if self.assume_ready else self.seen

    def unused(self, usage: Usage) -> list[str]:
        """A line per required document the function was never given (unused.py)."""
        self.stated.record(usage)
        return unused_notes(self.files, usage)

    def unready(self) -> list[str]:
        """A line when given ModelReplicas have no Ready condition and none is assumed (ready.py)."""
        return [] if self.assume_ready else unready_note(self.seen)


def render_files(
    xr_file: Path,
    *,
    required: Sequence[Path] = (),
    observed: Sequence[Path] = (),
    apis: Path | None = None,
    recurse: bool = True,
    explain: TextIO | None = None,
    debug: bool = False,
    requests: list[bytes] | None = None,
    notes: list[str] | None = None,
    assume_ready: bool = False,
) -> list[dict[str, Any]]:
    """`modelplane render` as a function: the documents for an XR file and its input files.

    `notes`, when given, receives a line for each required-resource document the function was never
    given, naming its file and why (unused.py), and one when given ModelReplicas have no Ready
    condition; `assume_ready` gives them one (ready.py)."""
    usage = Usage()
    with yamlio.collector_paused():  # a short-lived process over a fleet: see yamlio
        inputs = FileInputs.read(required, observed, assume_ready=assume_ready)
        if notes is not None:
            notes.extend(inputs.unready())
        docs = render_documents(
            load.single(xr_file),
            required=inputs.stated.docs,
            observed=inputs.observed,
            compositions=load.compositions(apis or load.default_apis()),
            recurse=recurse,
            explain=explain,
            debug=debug,
            requests=requests,
            usage=usage,
        )
    if notes is not None:
        notes[:0] = inputs.unused(usage)
    return docs


def render_stream(
    xr_file: Path,
    *,
    required: Sequence[Path] = (),
    observed: Sequence[Path] = (),
    apis: Path | None = None,
    recurse: bool = True,
    explain: TextIO | None = None,
    debug: bool = False,
) -> str:
    """The YAML stream `modelplane render` prints for an XR file and its input files."""
    docs = render_files(
        xr_file, required=required, observed=observed, apis=apis, recurse=recurse, explain=explain, debug=debug
    )
    return output.dump(docs)
