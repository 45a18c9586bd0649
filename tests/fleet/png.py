"""A small PNG reader for screenshot checks (8-bit RGB/RGBA, not interlaced): no image library needed."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {2: 3, 6: 4}  # colour type -> bytes per pixel at bit depth 8


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: tuple[bytes, ...]  # unfiltered scanlines

    def colours(self) -> set[tuple[int, int, int]]:
        """Every distinct RGB colour in the image."""
        out: set[tuple[int, int, int]] = set()
        step = self.channels
        for row in self.rows:
            out.update(zip(row[0::step], row[1::step], row[2::step], strict=True))
        return out


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(kind: int, line: bytearray, prev: bytes, bpp: int) -> bytes:
    if kind == 0:
        return bytes(line)
    if kind == 2:  # Up
        return bytes((x + y) & 0xFF for x, y in zip(line, prev, strict=True))
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + a) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + ((a + prev[i]) >> 1)) & 0xFF
        else:
            line[i] = (line[i] + _paeth(a, prev[i], prev[i - bpp] if i >= bpp else 0)) & 0xFF
    return bytes(line)


def read(data: bytes) -> Image:
    assert data[:8] == SIGNATURE, "not a PNG"
    pos, idat, header = 8, bytearray(), b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace, colour_type in _CHANNELS) == (8, 0, True), (depth, interlace, colour_type)
    bpp = _CHANNELS[colour_type]
    raw = zlib.decompress(bytes(idat))
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        prev = _unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), prev, bpp)
        rows.append(prev)
    return Image(width=width, height=height, channels=bpp, rows=tuple(rows))
