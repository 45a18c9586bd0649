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
library) costs only the request it was serving. Each worker keeps its own parse and selector
caches; the idle worker that finished last is chosen first, so a steady stream of calls keeps
landing on warm caches.
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
from typing import BinaryIO

from crossplane.function import logging

DEFAULT_DEADLINE_SECONDS = 20.0  # Crossplane gives a whole reconcile, up to 6 calls, 2 minutes
_START_SECONDS = 120.0  # a worker's imports, on a loaded machine
_HEADER = struct.Struct(">BQ")  # the frame's kind, then its length


class Frame(enum.IntEnum):
    READY = 0  # worker -> server, once, empty: imports done
    REQUEST = 1  # server -> worker: a serialized RunFunctionRequest
    RESPONSE = 2  # worker -> server: the serialized RunFunctionResponse
    UNREADABLE = 3  # worker -> server: the request did not parse; why, as UTF-8


class CallFailedError(RuntimeError):
    """A request got no response from its worker: past the deadline, or the worker died."""


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
    """One worker process and its two pipes; `started` once it said it is ready."""

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


class WorkerPool:
    """`workers` processes composing one request each at a time, every request under `deadline` seconds."""

    def __init__(self, *, workers: int, deadline: float, level: logging.Level = logging.Level.INFO) -> None:
        self._deadline = deadline
        self._level = level
        self._io = ThreadPoolExecutor(max_workers=workers + 1, thread_name_prefix="worker-io")
        self.workers = workers
        self._idle = [_Worker(level) for _ in range(workers)]
        self._slots = asyncio.Semaphore(workers)

    @property
    def pids(self) -> list[int]:
        """Process ids of the idle workers (for tests and diagnostics)."""
        return [w.process.pid for w in self._idle]

    async def start(self) -> None:
        """Wait until every worker is ready to compose (a serving process does, before it listens)."""
        await asyncio.gather(*(self._start(w) for w in self._idle if not w.started))

    async def run(self, request: bytes) -> bytes:
        """The serialized response to a serialized request.

        CallFailedError when there is none; UnreadableRequestError when the request does not parse.
        """
        async with self._slots:
            worker = self._idle.pop()  # the one that finished last: its caches are warmest
            try:
                if worker.process.poll() is not None:  # died while idle: nobody's request was lost
                    worker = await self._replace(worker)
                if not worker.started:
                    await self._start(worker)
                return await self._call(worker, request)
            except CallFailedError:
                worker = await self._replace(worker)
                raise
            finally:
                self._idle.append(worker)

    async def _start(self, worker: _Worker) -> None:
        """Wait for the worker's ready frame: its start-up does not count against a request's deadline."""
        loop = asyncio.get_running_loop()
        ready = loop.run_in_executor(self._io, receive, worker.responses)
        done, _ = await asyncio.wait({ready}, timeout=_START_SECONDS)
        if not done or ready.exception() is not None:
            worker.process.kill()
            await asyncio.wait({ready})
            msg = f"its worker did not start (exit code {worker.process.poll()})"
            raise CallFailedError(msg)
        worker.started = True

    async def _call(self, worker: _Worker, request: bytes) -> bytes:
        loop = asyncio.get_running_loop()
        reply = loop.run_in_executor(self._io, worker.call, request)
        done, _ = await asyncio.wait({reply}, timeout=self._deadline)
        if not done:
            worker.process.kill()
            await asyncio.wait({reply})  # the kill ends the exchange: nothing is left using the pipes
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
        return _Worker(self._level)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        for worker in self._idle:
            await loop.run_in_executor(self._io, worker.stop)
        self._io.shutdown(wait=False)
