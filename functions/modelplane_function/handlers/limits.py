"""Sizes the function must respect on the wire.

Crossplane dials functions with grpc-go's defaults (crossplane/crossplane internal/xfn/
function_runner.go sets no size options): it sends requests of any size but refuses a response
over 4 MiB, and no Crossplane setting changes that. The function's own `--max-send-message-size`
cannot raise it either, so every response is checked against this limit before it is sent.
"""

from __future__ import annotations

MIB = 1024 * 1024
MAX_RESPONSE_BYTES = 4 * MIB


def mib(size: int) -> str:
    return f"{size / MIB:.1f} MiB"
