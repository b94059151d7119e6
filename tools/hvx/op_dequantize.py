"""Dequantize on nnlib's device code (op_quantize.c): cases, the harness's stdin / stdout, the golden arrays.

nnlib registers ``Dequantize`` with ``dequantize_execute``, whose conversion is HVX only
(``hvx_do_dequantize`` -> ``hvx_dequantize_128xb`` -> ``hvx_dequantize_64xh``); those three run unedited,
the front lines (step, qzero, the infeasible-step error, the all-zero fill) as in ``harness_dequantize.c``.
The width is floored at 1e-18, so neither the error (step >= 2**121) nor the zero fill (step < 2**-126) is
reachable with a finite range; a width that overflows float32 gives ``flt_div_255(inf)`` = NaN (its fused
multiply-add is -inf + inf), and the device goes on with that NaN step, writing garbage: the engine refuses
that range (an error naming the node), which :func:`expect_error` marks.
"""
from __future__ import annotations

import struct

import numpy as np
import op_common

NAME = "dequantize"
OPS = ("Dequantize",)
ASM: list[str] = []
SOURCE = "hexagon/ops/src/op_quantize.c"
FUNCTIONS = ["hvx_dequantize_64xh", "hvx_dequantize_128xb", "hvx_do_dequantize"]
HEADERS = ["hvx_inlines.h", "quantize.h"]
HARNESS = "harness_dequantize.c"
F = np.float32


def _random_range(rng: np.random.Generator) -> tuple[float, float]:
    """A range: mostly containing 0, else excluding it, narrow, zero-width, tiny (denormal steps) or huge."""
    k = rng.random()
    if k < 0.55:
        return F(-rng.uniform(0, 1) * 10 ** rng.uniform(-3, 3)), F(rng.uniform(0, 1) * 10 ** rng.uniform(-3, 3))
    if k < 0.65:
        lo = F(rng.uniform(0.01, 50)); return lo, F(lo + F(rng.uniform(0.001, 50)))          # excludes 0, positive
    if k < 0.72:
        hi = F(-rng.uniform(0.01, 50)); return F(hi - F(rng.uniform(0.001, 50))), hi         # excludes 0, negative
    if k < 0.80:
        c = F(rng.uniform(-5, 5)); return c, F(c + F(10 ** rng.uniform(-7, -3)))            # narrow
    if k < 0.86:
        c = F(rng.uniform(-5, 5)) if rng.random() < 0.5 else F(0); return c, c               # zero-width
    if k < 0.93:
        a = F(-rng.uniform(0, 1e-30)); return a, F(a + F(rng.uniform(0, 1e-30)))            # step near / below 2**-126
    s = F(10 ** rng.uniform(30, 38.2)); return F(-s * rng.uniform(0, 1)), s                 # huge: exponent overflow


def _edge_cases() -> list[tuple[np.ndarray, float, float]]:
    """Every code under fixed ranges: qzero at 0 / 128 / 255, zero-width, widths below the 1e-18 floor, the
    largest steps (exponent overflow in ``hvx_dequantize_64xh``) and a width that overflows float32 (NaN step)."""
    allc = np.arange(256, dtype=np.uint8)
    ranges = [(-1.0, 2.0), (0.0, 1.0), (-1.0, 0.0), (0.0, 255.0), (-128.0, 127.0), (-6.0, 6.0), (1.0, 3.0),
              (-3.0, -1.0), (0.0, 0.0), (2.5, 2.5), (-1.7e38, 1.7e38), (-3e38, 3e38), (0.0, 3.4e38),
              (0.0, 1e-18), (-1e-19, 1e-19), (-1e-36, 1e-36), (-0.5, 0.5), (0.0, 1e-8), (-3.4e38, 0.0)]
    cases = [(allc, F(a), F(b)) for a, b in ranges]
    for n in (1, 31, 32, 33, 95, 127, 128, 129, 255, 384, 511):   # the tail paths (n % 128, nvout & 3)
        cases.append(((np.arange(n) * 37 % 256).astype(np.uint8), F(-0.37), F(5.11)))
    return cases


def make_cases(rng: np.random.Generator, n: int) -> list[tuple[np.ndarray, float, float]]:
    """The edge cases and ``n`` random ones (random sizes 1..700, random codes and ranges)."""
    cases = _edge_cases()
    for _ in range(n):
        size = int(rng.integers(1, 700))
        cases.append((rng.integers(0, 256, size, dtype=np.uint8), *_random_range(rng)))
    return cases


def pack(cases: list[tuple[np.ndarray, float, float]]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for q, mn, mx in cases:
        parts += [struct.pack("<iff", q.size, mn, mx), q.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple[np.ndarray, float, float]]) -> dict[str, np.ndarray]:
    """The golden arrays from the harness's stdout: codes / out concatenated with ``offsets``; per case min, max,
    status (0 ok, 1 the C's infeasible-step error, 2 the all-zero fill) and the device's step and qzero."""
    pos, status, step, qzero, outs = 0, [], [], [], []
    for q, _, _ in cases:
        st, sp, qz = struct.unpack_from("<ifi", out, pos)
        pos += 12
        if st == 1:
            outs.append(np.zeros(q.size, np.float32))
        else:
            outs.append(np.frombuffer(out, np.float32, q.size, pos).copy()); pos += 4 * q.size
        status.append(st); step.append(sp); qzero.append(qz)
    op_common.check_end(out, pos)
    sizes = [q.size for q, _, _ in cases]
    return {"offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            "codes": np.concatenate([q for q, _, _ in cases]).astype(np.uint8),
            "min": np.array([c[1] for c in cases], np.float32), "max": np.array([c[2] for c in cases], np.float32),
            "status": np.array(status, np.int32), "step": np.array(step, np.float32),
            "qzero": np.array(qzero, np.int32), "out": np.concatenate(outs).astype(np.float32)}


def expect_error(gold: dict[str, np.ndarray]) -> np.ndarray:
    """Per case: the engine must refuse it (the C's own error, or a NaN step where the device writes garbage)."""
    return (gold["status"] == 1) | np.isnan(gold["step"])


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or refuses where it should, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError
    off, exact, first = gold["offsets"], 0, ""
    refuse = expect_error(gold)
    for i in range(len(off) - 1):
        q = gold["codes"][off[i]:off[i + 1]].reshape(1, 1, 1, -1)
        dev = gold["out"][off[i]:off[i + 1]]
        try:
            got = run_op("Dequantize", [q, gold["min"][i].reshape(1, 1, 1, 1), gold["max"][i].reshape(1, 1, 1, 1)])[0]
        except HexnnError as e:
            ok, msg = bool(refuse[i]), f"engine error {e}"
        else:
            ok = not refuse[i] and np.array_equal(got.reshape(-1).view(np.uint32), dev.view(np.uint32))
            msg = "the engine should refuse" if refuse[i] else "values differ"
        exact += ok
        if not ok and not first:
            first = f"case {i} range=[{gold['min'][i]!r}, {gold['max'][i]!r}] n={dev.size}: {msg}"
    return len(off) - 1, exact, first
