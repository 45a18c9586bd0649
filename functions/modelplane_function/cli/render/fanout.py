"""Encoding a large YAML stream on every core: a fleet's required resources are most of a render.

A 1,000-cluster fleet is ~18 MiB of YAML and its parse and encoding took half of `modelplane
render` on one core. YAML documents are independent (an alias never crosses `---`), so the stream
is cut at document markers into one part per core, each part is encoded in a forked process, and
the parts' documents are joined in order: the same documents the serial reader gives.

Anything unusual takes the serial path, which also gives the exact error and line: a stream with
directives (`%YAML`, which belong to the document after them) or `...` markers, a small stream (a
fork costs more than it saves), one core, or any part that fails.
"""

from __future__ import annotations

import bisect
import itertools
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor

from modelplane_function.cli.render import yamlio
from modelplane_function.cli.render.wire import Doc

PARALLEL_FROM = 4 * 2**20  # characters: below this a fork costs more than it saves
MAX_PARTS = 8

_MARKER = re.compile(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)
_UNSPLITTABLE = re.compile(r"^(%|\.\.\.)", re.MULTILINE)


def parts(text: str, count: int) -> list[str] | None:
    """The stream cut at document markers into at most `count` parts of similar size, in order.

    None when it must not be cut (directives, `...` markers) or has a single part.
    """
    if count < 2 or _UNSPLITTABLE.search(text):  # noqa: PLR2004 - one part is no cut
        return None
    markers = [m.start() for m in _MARKER.finditer(text) if m.start() > 0]
    cuts: list[int] = []
    for index in range(1, count):
        target = index * len(text) // count
        at = bisect.bisect_left(markers, target)
        nearest = min(markers[max(at - 1, 0) : at + 1], key=lambda m: abs(m - target), default=None)
        if nearest is not None and (not cuts or nearest > cuts[-1]):
            cuts.append(nearest)
    if not cuts:
        return None
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def encode_all(text: str) -> list[Doc]:
    """yamlio.encode_all, on every core for a large stream. Raises what yamlio.encode_all raises."""
    cut = parts(text, min(_cores(), MAX_PARTS)) if len(text) >= PARALLEL_FROM else None
    if cut is None or "fork" not in multiprocessing.get_all_start_methods():
        return yamlio.encode_all(text)
    try:
        # fork: the children have every module loaded already and read the text they were given;
        # they touch no gRPC state (render starts its server after the inputs are read).
        # This process encodes the first part meanwhile, so one part is never pickled.
        with ProcessPoolExecutor(len(cut) - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            rest = pool.map(yamlio.encode_all, cut[1:])
            encoded = [yamlio.encode_all(cut[0]), *rest]
    except Exception:  # noqa: BLE001 - any failure: the serial reader gives the exact error
        return yamlio.encode_all(text)
    return [doc for part in encoded for doc in part]
