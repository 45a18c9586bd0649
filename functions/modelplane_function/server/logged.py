"""The function as `serve` and `render` run it: every request logged, as function-template-python does.

Info: one line per request with its tag, the composite's kind and name, the duration and the
outcome (ok, warning, fatal). Debug: the request's arrival and the function's decisions, i.e. each
condition it set and each result (event) it returned. The SDK's logging.configure chooses the
format: JSON lines at info, human-readable at debug. Requests and responses stay bytes: what is
logged is peeked at (peek.py), so logging costs microseconds whatever the fleet's size.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Mapping
from typing import TextIO

import structlog
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError

from modelplane_function.server import peek
from modelplane_function.server.fn import FunctionRunner
from modelplane_function.server.workers import UnreadableRequestError

_STATUS = {fnv1.STATUS_CONDITION_TRUE: "True", fnv1.STATUS_CONDITION_FALSE: "False"}
_SEVERITY = {fnv1.SEVERITY_FATAL: "Fatal", fnv1.SEVERITY_WARNING: "Warning", fnv1.SEVERITY_NORMAL: "Normal"}


def colours(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Whether a human-readable log on `stream` may be coloured: a terminal, and NO_COLOR unset or empty
    (no-color.org). The SDK's console renderer colours always, so a log piped to a file or `less` was
    full of escape codes."""
    return stream.isatty() and not environ.get("NO_COLOR")


def configure(level: logging.Level, stream: TextIO) -> None:
    """The SDK's logging at `level`, written to `stream`, coloured only where `colours` says."""
    logging.configure(level=level)
    if level is logging.Level.DISABLED:
        return
    config = structlog.get_config()
    processors = [
        structlog.dev.ConsoleRenderer(colors=colours(stream, os.environ))
        if isinstance(p, structlog.dev.ConsoleRenderer)
        else p
        for p in config["processors"]
    ]
    structlog.configure(processors=processors, logger_factory=structlog.PrintLoggerFactory(stream))


def line_buffered(stream: TextIO) -> None:
    """Flush `stream` at every newline: Python buffers a file or a pipe in blocks, so a redirected log
    would show nothing for minutes, and lose its last lines when the process is killed."""
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(line_buffering=True)


def _string(struct: struct_pb2.Struct, key: str) -> str:
    value = struct.fields.get(key)  # .get: bracket access would insert the key
    return value.string_value if value is not None and value.WhichOneof("kind") == "string_value" else ""


def _identity(req: fnv1.RunFunctionRequest) -> tuple[str, str]:
    """(kind, namespace/name) of the composite, read without converting it."""
    xr = req.observed.composite.resource
    meta = xr.fields.get("metadata")
    meta = meta.struct_value if meta is not None and meta.WhichOneof("kind") == "struct_value" else struct_pb2.Struct()
    namespace, name = _string(meta, "namespace"), _string(meta, "name")
    return _string(xr, "kind"), f"{namespace}/{name}" if namespace else name


def outcome(rsp: fnv1.RunFunctionResponse) -> str:
    severities = {r.severity for r in rsp.results}
    if fnv1.SEVERITY_FATAL in severities:
        return "fatal"
    return "warning" if fnv1.SEVERITY_WARNING in severities else "ok"


class LoggedRunner(FunctionRunner):
    async def run(self, request: bytes) -> bytes:
        try:
            req = peek.request(request)
        except DecodeError as e:  # refused before any work
            raise UnreadableRequestError(str(e)) from e
        kind, name = _identity(req)
        log = self.log.bind(tag=req.meta.tag, kind=kind, name=name)
        log.debug("Running function", required=sorted(req.required_resources))
        start = time.perf_counter()
        data = await super().run(request)
        answer = peek.response(data)
        rsp = answer.response
        for c in rsp.conditions:
            log.debug(
                "Condition", type=c.type, status=_STATUS.get(c.status, "Unknown"), reason=c.reason, message=c.message
            )
        for r in rsp.results:
            log.debug("Result", severity=_SEVERITY.get(r.severity, "Unspecified"), reason=r.reason, message=r.message)
        log.info(
            "Ran function",
            duration_ms=round((time.perf_counter() - start) * 1000, 1),
            outcome=outcome(rsp),
            composed=answer.composed,
        )
        return data
