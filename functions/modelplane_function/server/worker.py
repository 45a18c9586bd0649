"""A worker process of `modelplane serve` (see workers.py): compose each request it is sent.

Run as `python -m modelplane_function.server.worker REQUESTS_FD RESPONSES_FD LEVEL`. It writes a READY
frame when it is ready, then answers every request frame with a response frame (or an UNREADABLE
one, when the bytes are not a RunFunctionRequest) until its request pipe closes. Logs go to the
inherited stderr and stdout, as the server's do.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError

from modelplane_function.server.fn import compose
from modelplane_function.server.logged import configure, line_buffered
from modelplane_function.server.workers import Frame, receive, send


def main(argv: Sequence[str]) -> int:
    requests_fd, responses_fd, level = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server shuts its workers down; ^C is for it
    configure(logging.Level[level], sys.stdout)
    line_buffered(sys.stdout)  # its log lines interleave with the server's as they happen
    with os.fdopen(int(requests_fd), "rb") as requests, os.fdopen(int(responses_fd), "wb") as responses:
        send(responses, Frame.READY, b"")
        while True:
            try:
                _, data = receive(requests)
            except EOFError:
                return 0
            try:
                request = fnv1.RunFunctionRequest.FromString(data)
            except DecodeError as e:
                send(responses, Frame.UNREADABLE, str(e).encode())
                continue
            del data  # the parsed request holds it all: free the bytes before composing
            send(responses, Frame.RESPONSE, compose(request).SerializeToString())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
