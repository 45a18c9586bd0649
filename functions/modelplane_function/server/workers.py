"""Compose in worker processes, so that no single request can stall or take down the others.

The gRPC server runs one asyncio loop. Composing on it (converting the fleet, scheduling,
evaluating CEL) blocks every other call for as long as one request takes, and threads would not
help: the GIL and long native calls hold everyone else up just the same. Here the loop only moves
bytes: the request exactly as gRPC received it goes to an idle worker process (`python -m
modelplane_function.server.worker`, length-prefixed frames over a pipe pair), which parses it, composes it
and writes the serialized response back, which gRPC sends as it is. N workers serve N requests at
once on N cores, and a heavy request delays only the requests queued behind all of them.

A request still running at its deadline has its worker killed (and replaced) and gets a FATAL
result, which Crossplane treats as "change nothing"; a worker that dies (a fault in a native
library) costs only the request it was serving. A worker is never handed a request while it is
still composing another: when a caller goes away (Crossplane cancels the call), its worker may
finish within a short grace, inside the deadline, or is killed and replaced; a replacement starts
at once, and a call takes a started worker when there is one. Heavy requests (as the server
estimates them, see fn.py) may hold every worker but one, so a light request never queues behind
them. Each worker keeps its own parse and selector caches; the idle worker that finished last is
chosen first, so a steady stream of calls keeps landing on warm caches.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from crossplane.function import logging

DEFAULT_DEADLINE_SECONDS = 20.0  # Crossplane gives a whole reconcile, up to 6 calls, 2 minutes
# What a worker whose caller went away may still take: a light call ends well inside it (its warm
# caches are kept), a heavy one is stopped instead of holding the worker up to the deadline.
CANCEL_GRACE_SECONDS = 0.5
_START_SECONDS = 120.0  # a worker's imports, on a loaded machine
_HEADER = struct.Struct(">BQ")  # the frame's kind, then its length


class Frame(enum.IntEnum):
    READY = 0  # worker -> server, once, empty: imports done
    REQUEST = 1  # server -> worker: a serialized RunFunctionRequest
    RESPONSE = 2  # worker -> server: the serialized RunFunctionResponse
    UNREADABLE = 3  # worker -> server: the request did not parse; why, as UTF-8


class CallFailedError(RuntimeError):
    """A request got no response from its worker: past the deadline, or the worker died."""


class _CallerGoneError(Exception):
    """The caller went away before its request reached a worker: the worker is left as it was."""


class UnreadableRequestError(ValueError):
    """The request's bytes are not a RunFunctionRequest (gRPC status INVALID_ARGUMENT)."""


def send(out: BinaryIO, kind: Frame, data: bytes) -> None:
    out.write(_HEADER.pack(kind, len(data)))
    out.write(data)
    out.flush()


def receive(source: BinaryIO) -> tuple[Frame, bytes]:
    """One frame; EOFError when the other side is gone."""
    header = source.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    kind, size = _HEADER.unpack(header)
    data = source.read(size)
    if len(data) < size:
        raise EOFError
    return Frame(kind), data


class _Worker:
    """One worker process and its two pipes; `ready` reads its ready frame, `started` once it said it is ready."""

    def __init__(self, level: logging.Level) -> None:
        requests_read, requests_write = os.pipe()
        responses_read, responses_write = os.pipe()
        command = [
            sys.executable,
            "-m",
            "modelplane_function.server.worker",
            str(requests_read),
            str(responses_write),
            level.name,
        ]
        self.process = subprocess.Popen(command, pass_fds=(requests_read, responses_write))
        os.close(requests_read)
        os.close(responses_write)
        self.requests: BinaryIO = os.fdopen(requests_write, "wb")
        self.responses: BinaryIO = os.fdopen(responses_read, "rb")
        self.ready: asyncio.Future[tuple[Frame, bytes]] | None = None
        self.started = False

    def call(self, request: bytes) -> tuple[Frame, bytes]:
        send(self.requests, Frame.REQUEST, request)
        return receive(self.responses)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        for f in (self.requests, self.responses):
            with contextlib.suppress(OSError):  # the pipe broke with the process: nothing left to flush
                f.close()


@dataclass(eq=False)
class _Job:
    """One call's hold on a worker; `gone` is set when its caller no longer waits for the answer."""

    gone: asyncio.Event = field(default_factory=asyncio.Event)
    working: bool = False  # a worker is taken: the job must end its exchange itself


class WorkerPool:
    """`workers` processes composing one request each at a time, every request under `deadline` seconds."""

    def __init__(self, *, workers: int, deadline: float, level: logging.Level = logging.Level.INFO) -> None:
        self._deadline = deadline
        self._level = level
        self._io = ThreadPoolExecutor(max_workers=workers + 1, thread_name_prefix="worker-io")
        self.workers = workers
        self._idle = [_Worker(level) for _ in range(workers)]
        self._slots = asyncio.Semaphore(workers)
        # Heavy calls may hold every worker but one: a light call then waits for no heavy one.
        self._heavy = asyncio.Semaphore(max(1, workers - 1))
        self._jobs: set[asyncio.Future[bytes]] = set()

    @property
    def pids(self) -> list[int]:
        """Process ids of the idle workers (for tests and diagnostics)."""
        return [w.process.pid for w in self._idle]

    async def start(self) -> None:
        """Wait until every worker is ready to compose (a serving process does, before it listens)."""
        await asyncio.gather(*(self._start(w) for w in self._idle if not w.started))

    async def run(self, request: bytes, *, heavy: bool = False) -> bytes:
        """The serialized response to a serialized request.

        CallFailedError when there is none; UnreadableRequestError when the request does not parse.
        `heavy` requests are kept off the last free worker.
        """
        job = _Job()
        serving = asyncio.ensure_future(self._serve(request, heavy=heavy, job=job))
        self._jobs.add(serving)
        serving.add_done_callback(_settled)
        serving.add_done_callback(self._jobs.discard)
        try:
            # Shielded: a cancelled caller must not interrupt an exchange with a worker halfway.
            return await asyncio.shield(serving)
        except asyncio.CancelledError:
            if job.working:
                job.gone.set()
            else:
                serving.cancel()  # still queued for a worker: nothing to finish
            raise

    async def _serve(self, request: bytes, *, heavy: bool, job: _Job) -> bytes:
        async with contextlib.AsyncExitStack() as held:
            if heavy:
                await held.enter_async_context(self._heavy)
            await held.enter_async_context(self._slots)
            worker = self._take()
            job.working = True
            try:
                if worker.process.poll() is not None:  # died while idle: nobody's request was lost
                    worker = await self._replace(worker)
                if not worker.started:
                    await self._start(worker)
                if job.gone.is_set():
                    raise _CallerGoneError
                return await self._call(worker, request, job.gone)
            except CallFailedError:
                worker = await self._replace(worker)
                raise
            finally:
                self._idle.append(worker)  # idle again: its exchange is over, or it was replaced

    def _take(self) -> _Worker:
        """The idle worker that finished last (its caches are warmest), among those started if any is."""
        for i in range(len(self._idle) - 1, -1, -1):
            worker = self._idle[i]
            if worker.started or (worker.ready is not None and worker.ready.done()):
                return self._idle.pop(i)
        return self._idle.pop()

    def _read_ready(self, worker: _Worker) -> asyncio.Future[tuple[Frame, bytes]]:
        if worker.ready is None:
            worker.ready = asyncio.get_running_loop().run_in_executor(self._io, receive, worker.responses)
        return worker.ready

    async def _start(self, worker: _Worker) -> None:
        """Wait for the worker's ready frame: its start-up does not count against a request's deadline."""
        ready = self._read_ready(worker)
        done, _ = await asyncio.wait({ready}, timeout=_START_SECONDS)
        if not done or ready.exception() is not None:
            worker.process.kill()
            await asyncio.wait({ready})
            msg = f"its worker did not start (exit code {worker.process.poll()})"
            raise CallFailedError(msg)
        worker.started = True

    async def _call(self, worker: _Worker, request: bytes, gone: asyncio.Event) -> bytes:
        loop = asyncio.get_running_loop()
        until = loop.time() + self._deadline
        reply = loop.run_in_executor(self._io, worker.call, request)
        left = asyncio.ensure_future(gone.wait())
        try:
            await asyncio.wait({reply, left}, timeout=self._deadline, return_when=asyncio.FIRST_COMPLETED)
        finally:
            left.cancel()
        if not reply.done() and gone.is_set():
            # Nobody waits for this answer: a short grace keeps a light call's worker, never past the deadline.
            await asyncio.wait({reply}, timeout=max(0.0, min(CANCEL_GRACE_SECONDS, until - loop.time())))
            if not reply.done():
                worker.process.kill()
                await asyncio.wait({reply})
                _settled(reply)  # the broken pipe it ends with is the kill's, not news
                msg = "its caller went away while it was being composed, and it was stopped"
                raise CallFailedError(msg)
        if not reply.done():
            worker.process.kill()
            await asyncio.wait({reply})  # the kill ends the exchange: nothing is left using the pipes
            _settled(reply)
            msg = f"it was still running after the {self._deadline:g} s deadline, and was stopped"
            raise CallFailedError(msg)
        try:
            kind, data = reply.result()
        except (EOFError, OSError) as e:
            code = await loop.run_in_executor(self._io, worker.process.wait)
            msg = f"the worker composing it exited (code {code})"
            raise CallFailedError(msg) from e
        if kind is Frame.UNREADABLE:
            raise UnreadableRequestError(data.decode())
        return data

    async def _replace(self, worker: _Worker) -> _Worker:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._io, worker.stop)
        fresh = _Worker(self._level)
        self._read_ready(fresh)  # it starts while idle: whoever takes it next waits less, or not at all
        return fresh

    async def close(self) -> None:
        """Stop every worker, once the calls still holding one have ended (their callers are gone by now)."""
        if self._jobs:
            await asyncio.wait(set(self._jobs), timeout=CANCEL_GRACE_SECONDS + 5)
        loop = asyncio.get_running_loop()
        for worker in self._idle:
            await loop.run_in_executor(self._io, worker.stop)
        self._io.shutdown(wait=False)


def _settled(job: asyncio.Future[Any]) -> None:
    """Read a finished future's outcome that nobody else reads (asyncio would log it as never retrieved):
    a job whose caller went away, or the exchange with a worker that was killed."""
    if not job.cancelled():
        job.exception()
