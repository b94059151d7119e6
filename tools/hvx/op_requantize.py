"""Requantize_32to8 / QuantizeDownAndShrinkRange_32to8 on nnlib's device code: cases, harness I/O, golden arrays.

nnlib's ``do_requantize_execute`` / ``do_autorequantize_execute`` (op_requantize.c) call
``nn_requantize_i32_to_qu8_hvx`` (src/quantize.c), which dispatches to the float fallback (gain >= 1),
the HVX ``hvx_quantize_32_to_8`` (n < 128 or a 31-bit gain below 1024) or the assembly ``quantize_asm``
(hexagon/asm_src/quantize_h.S); all four run unedited, the front lines as in ``harness_requantize.c``.
"""
from __future__ import annotations

import struct

import numpy as np
import op_common

NAME = "requantize"
OPS = ("Requantize_32to8", "QuantizeDownAndShrinkRange_32to8")
SOURCE = "hexagon/src/quantize.c"
FUNCTIONS = ["scalar_requantize_i32_to_qu8", "fallback_requantize_i32_to_qu8", "hvx_quantize_32_to_8",
             "nn_requantize_i32_to_qu8_hvx"]
ASM = ["hexagon/asm_src/quantize_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_requantize.c"
F = np.float32


def _data(rng: np.random.Generator, n: int) -> np.ndarray:
    """int32 accumulators: small (spans below 255 give QuantizeDownAndShrinkRange a gain >= 1), conv-like (|x| < 2**20), full-range or one-signed."""
    k = rng.random()
    if k < 0.3:
        return rng.integers(-100, 100 if rng.random() < 0.5 else 300, n).astype(np.int32)
    if k < 0.7:
        return rng.integers(-(1 << 20), 1 << 20, n).astype(np.int32)
    if k < 0.85:
        return rng.integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype(np.int32)
    return rng.integers(0, 1 << int(rng.integers(4, 31)), n).astype(np.int32) * (1 if rng.random() < 0.5 else -1)


def _ranges(rng: np.random.Generator) -> tuple[float, float, float, float]:
    """(in_min, in_max, req_min, req_max): a symmetric-ish int32 range of width 2**32 * level, a requested range
    that contains 0, excludes it, is narrow or zero-width; gains from ~2**-31 to above 1 (the float fallback)."""
    level = 10 ** rng.uniform(-12, -2)
    w = F(level * 2.0 ** 32)
    in_min = F(-w / 2) if rng.random() < 0.8 else F(-w * rng.uniform(0, 1))
    in_max = F(in_min + w)
    span = level * 2.0 ** rng.uniform(2, 34)            # output step vs input level: gain ~ 255 * level / span
    k = rng.random()
    if k < 0.6:
        lo = -span * rng.uniform(0, 1); hi = lo + span
    elif k < 0.8:
        lo = span * rng.uniform(0.01, 1) * (1 if rng.random() < 0.5 else -1); hi = lo + span
    elif k < 0.9:
        lo = hi = span * rng.uniform(-1, 1)
    else:
        lo, hi = -span * 1e-6, span * 1e-6
    return in_min, in_max, F(lo), F(hi)


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(mode, data, in_min, in_max, req_min, req_max): mode 0 Requantize_32to8, 1 QuantizeDownAndShrinkRange.
    Sizes cross the dispatch: 1..127 (HVX), 128..1200 (asm when the gain allows), tails of every length."""
    cases = []
    for mode in (0, 1):
        for size in (1, 31, 32, 33, 127, 128, 129, 255, 256, 300):
            x = (np.arange(size, dtype=np.int64) * 2654435761 % (1 << 32) - (1 << 31)).astype(np.int32)
            cases.append((mode, x, F(-2.0 ** 31), F(2.0 ** 31), F(-1.0), F(1.0)))          # gain 1: the fallback
            cases.append((mode, x >> 12, F(-1.0), F(1.0), F(-2.0 ** -12), F(2.0 ** -12)))   # asm / HVX
        cases.append((mode, np.zeros(200, np.int32), F(-1.0), F(1.0), F(0.0), F(0.0)))      # zero data / range
    for i in range(n):
        size = int(rng.integers(1, 128)) if rng.random() < 0.4 else int(rng.integers(128, 1200))
        cases.append((i % 2, _data(rng, size), *_ranges(rng)))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for mode, x, *r in cases:
        parts += [struct.pack("<ii4f", mode, x.size, *r), x.astype("<i4").tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: data / codes concatenated with ``offsets``; per case mode, the four input ranges and the
    device's output range."""
    pos, omin, omax, codes = 0, [], [], []
    for _, x, *_r in cases:
        a, b = struct.unpack_from("<2f", out, pos); pos += 8
        codes.append(np.frombuffer(out, np.uint8, x.size, pos).copy()); pos += x.size
        omin.append(a); omax.append(b)
    op_common.check_end(out, pos)
    col = lambda k: np.array([c[k] for c in cases], np.float32)
    return {"offsets": np.concatenate([[0], np.cumsum([c[1].size for c in cases])]).astype(np.int64),
            "mode": np.array([c[0] for c in cases], np.int32), "data": np.concatenate([c[1] for c in cases]),
            "in_min": col(2), "in_max": col(3), "req_min": col(4), "req_max": col(5),
            "codes": np.concatenate(codes), "out_min": np.array(omin, np.float32), "out_max": np.array(omax, np.float32)}


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and output range the engine reproduces bit for bit, first difference)."""
    from hexnn_import.ops.registry import run_op
    off, exact, first = gold["offsets"], 0, ""
    s = lambda k, i: gold[k][i].reshape(1, 1, 1, 1)
    for i in range(len(off) - 1):
        x = gold["data"][off[i]:off[i + 1]].reshape(1, 1, 1, -1)
        ins = [x, s("in_min", i), s("in_max", i)] + ([s("req_min", i), s("req_max", i)] if gold["mode"][i] == 0 else [])
        q, mn, mx = run_op(OPS[gold["mode"][i]], ins)
        dev = gold["codes"][off[i]:off[i + 1]]
        ok = (np.array_equal(q.reshape(-1), dev) and F(mn.reshape(-1)[0]).tobytes() == gold["out_min"][i].tobytes()
              and F(mx.reshape(-1)[0]).tobytes() == gold["out_max"][i].tobytes())
        exact += ok
        if not ok and not first:
            nd = int((q.reshape(-1) != dev).sum())
            first = (f"case {i} {OPS[gold['mode'][i]]} n={dev.size}: {nd} codes differ, range dev=[{gold['out_min'][i]!r}, "
                     f"{gold['out_max'][i]!r}] engine=[{mn.reshape(-1)[0]!r}, {mx.reshape(-1)[0]!r}]")
    return len(off) - 1, exact, first
