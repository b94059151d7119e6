"""The fuzzer's byte-level mutations: bytes in, mutated bytes out, driven by a seeded ``random.Random``.

They work on any format through its :class:`Structure` (``fuzz_structure``):
``flip`` (random bits), ``truncate`` (at a structural boundary),
``oversize`` (a huge or off-by-some value in a size / offset / count
field), ``swap`` (two index fields exchanged, or one pointed out of range),
``value`` (0, -1, NaN, 2**31-1... in a shape entry, scale, zero point or
type) and ``splice`` (a region deleted, duplicated or copied over another).
Edits of the parsed document (ONNX protobuf, graph JSON) are in
:mod:`fuzz_edits`.
"""
from __future__ import annotations

import math
import random
import struct
from typing import Callable

from hexnn_import.testing.fuzz_structure import Structure, encode_varint, read_varint

Mutation = Callable[[bytes, Structure, random.Random], bytes]

_BIG_U32 = (0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x10000000, 0xFFFFFFFC, 0x00FFFFFF)
_BIG_VARINT = (1 << 31, 1 << 32, (1 << 63) - 1, (1 << 64) - 1, 1 << 40, 0x7FFFFFFF)
_SPECIAL_I32 = (0, -1, -2, 1 << 16, 0x7FFFFFFF, -0x80000000, 7, 1000)
SPECIAL_F32 = (0.0, -0.0, -1.0, math.nan, math.inf, -math.inf, 1e38, 1e-45, 3.0e-39)
SPECIAL_I64 = (-1, 128, 256, -129, 1 << 40, -(1 << 63), (1 << 63) - 1, 255, -128)


# ---- byte level -----------------------------------------------------------------------------
def flip(data: bytes, st: Structure, rng: random.Random) -> bytes:
    """Flip 1-8 random bits, half the time at structural positions."""
    out = bytearray(data)
    if not out:
        return data
    spots = sorted(st.boundaries)
    for _ in range(rng.choice((1, 1, 2, 3, 8))):
        if spots and rng.random() < 0.5:
            pos = min(max(rng.choice(spots) + rng.randint(-2, 3), 0), len(out) - 1)
        else:
            pos = rng.randrange(len(out))
        out[pos] ^= 1 << rng.randrange(8)
    return bytes(out)


def truncate_at(data: bytes, pos: int) -> bytes:
    """The first ``pos`` bytes."""
    return data[:max(0, min(pos, len(data)))]


def truncate(data: bytes, st: Structure, rng: random.Random) -> bytes:
    """Cut at a structural boundary (or one byte either side)."""
    spots = sorted(b for b in st.boundaries if b < len(data)) or [0]
    return truncate_at(data, rng.choice(spots) + rng.choice((0, 0, 0, -1, 1)))


def oversize(data: bytes, st: Structure, rng: random.Random) -> bytes:
    """Write a huge (or slightly too large) value into a size / offset / count field."""
    if not st.lengths:
        return flip(data, st, rng)
    pos, width, kind = rng.choice(st.lengths)
    if kind.startswith("varint"):
        try:
            old, end = read_varint(data, pos)
        except ValueError:
            return flip(data, st, rng)
        new = rng.choice(_BIG_VARINT + (old + 1, old * 2 + 7, len(data), 0))
        return data[:pos] + encode_varint(new) + data[end:]
    fmt = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}[width]
    (old,) = struct.unpack_from(fmt, data, pos)
    limit = (1 << (8 * width)) - 1
    choices = [limit, limit >> 1, (limit >> 1) + 1, old + 4, old + 1, len(data), len(data) - pos, 0]
    if width == 4:
        choices += list(_BIG_U32)
    out = bytearray(data)
    struct.pack_into(fmt, out, pos, rng.choice(choices) & limit)
    return bytes(out)


def swap(data: bytes, st: Structure, rng: random.Random) -> bytes:
    """Exchange two index fields, or point one at -1, just past the end, or far away."""
    if len(st.indices) < 2:
        return flip(data, st, rng)
    out = bytearray(data)
    (p1, w1, _), (p2, w2, _) = rng.sample(st.indices, 2)
    if rng.random() < 0.6 and w1 == w2:
        out[p1:p1 + w1], out[p2:p2 + w2] = data[p2:p2 + w2], data[p1:p1 + w1]
    else:
        fmt = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}[w1]
        (old,) = struct.unpack_from(fmt, data, p1)
        limit = (1 << (8 * w1)) - 1
        struct.pack_into(fmt, out, p1, rng.choice((limit, old + 1, old + 50, 1 << 20, limit >> 1)) & limit)
    return bytes(out)


def value(data: bytes, st: Structure, rng: random.Random) -> bytes:
    """A boundary value in a meaningful scalar (shape entry, scale, zero point, type)."""
    if not st.values:
        return flip(data, st, rng)
    out = bytearray(data)
    pos, width, kind = rng.choice(st.values)
    if kind in ("scale", "f32"):
        struct.pack_into("<f", out, pos, rng.choice(SPECIAL_F32))
    elif width == 8:
        struct.pack_into("<q", out, pos, rng.choice(SPECIAL_I64))
    elif width == 4:
        struct.pack_into("<i", out, pos, rng.choice(_SPECIAL_I32))
    else:
        out[pos] = rng.choice((0, 5, 11, 13, 14, 17, 18, 200, 255, rng.randrange(256)))
    return bytes(out)


def splice(data: bytes, st: Structure, rng: random.Random) -> bytes:
    """Delete, duplicate, or copy over another place, a region between two boundaries."""
    spots = sorted(b for b in st.boundaries if b <= len(data))
    if len(spots) < 3:
        return flip(data, st, rng)
    a, b = sorted(rng.sample(spots, 2))
    b = min(b, a + 4096)
    how = rng.randrange(3)
    if how == 0:
        return data[:a] + data[b:]
    if how == 1:
        return data[:b] + data[a:b] + data[b:]
    c = rng.choice(spots)
    chunk = data[a:b][: max(0, len(data) - c)]
    return data[:c] + chunk + data[c + len(chunk):]


BYTE_MUTATIONS: tuple[tuple[str, Mutation], ...] = (
    ("flip", flip), ("truncate", truncate), ("oversize", oversize), ("swap", swap), ("value", value),
    ("splice", splice),
)


__all__ = ["BYTE_MUTATIONS", "SPECIAL_F32", "SPECIAL_I64", "Mutation", "flip", "oversize", "splice", "swap", "truncate",
           "truncate_at", "value"]
