"""Quantize on nnlib's device code (op_quantize.c ``quantize_execute_opt``): cases, harness I/O, golden arrays.

nnlib registers ``Quantize`` with ``quantize_execute_opt``: ``find_scaling_for_hvx_quant`` (op_quantize.c, with
``adjust_minmax_for_zero`` of src/quantize.c) picks the output range and a fixed-point scaling, and the assembly
``quantize_floats_to_8b_asm`` (hexagon/asm_src/autoquantize_h.S) converts; all run unedited, the front lines as
in ``harness_quantize.c``. (``Quantize_ref``, ``quantize_execute_ref``, is the portable float C.)
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "quantize"
OPS = ("Quantize",)
SOURCE = "hexagon/ops/src/op_quantize.c"
FUNCTIONS = ["find_scaling_for_hvx_quant"]
ASM = ["hexagon/asm_src/autoquantize_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_quantize.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """``adjust_minmax_for_zero`` (src/quantize.c) and ``find_scaling_for_hvx_quant``, verbatim."""
    return (hvx_build.extract_functions(nnlib / "hexagon/src/quantize.c", ["adjust_minmax_for_zero"])
            + hvx_build.extract_functions(nnlib / SOURCE, FUNCTIONS))


def _range(rng: np.random.Generator) -> tuple[float, float]:
    """A range: containing 0 (mostly; 0 at an end too), excluding it, narrow, zero-width at 0."""
    k = rng.random()
    if k < 0.6:
        return F(-rng.uniform(0, 1) * 10 ** rng.uniform(-3, 3)), F(rng.uniform(0.01, 1) * 10 ** rng.uniform(-3, 3))
    if k < 0.7:
        return F(0), F(10 ** rng.uniform(-3, 3))
    if k < 0.8:
        return F(-(10 ** rng.uniform(-3, 3))), F(0)
    if k < 0.9:
        lo = F(rng.uniform(0.01, 20)) * (1 if rng.random() < 0.5 else -1); return lo, F(lo + F(rng.uniform(0.01, 20)))
    if k < 0.95:
        return F(-(10 ** rng.uniform(-7, -4))), F(10 ** rng.uniform(-7, -4))
    return F(0), F(0)


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(data, min, max): data at and between the code boundaries, far outside the range (and +-Inf), then ``n``
    random cases (data inside the range widened to 0, and up to 10% of the width outside; sizes 1..700)."""
    cases = []
    for lo, hi in [(-1, 1), (0, 1), (-1, 0), (0, 255), (-128, 127), (-6, 6), (0, 0)]:
        step = (hi - lo) / 255 if hi > lo else 1.0
        x = np.concatenate([lo + step * (np.arange(256) + 0.5), lo + step * np.arange(256), [lo - 1, hi + 1]])
        cases.append((x.astype(np.float32), F(lo), F(hi)))
    far = np.array([-1e6, -100, -16, -4, -2, -1, 0, 1, 2, 4, 8, 16, 32, 100, 1e3, 1e4, 1e6, np.inf, -np.inf], np.float32)
    for lo, hi in [(-1, 1), (0, 6), (-6, 0), (-0.01, 0.02)]:   # far outside the range, and +-Inf
        cases.append((far * F(max(abs(lo), abs(hi))), F(lo), F(hi)))
    for _ in range(n):
        lo, hi = _range(rng)
        size = int(rng.integers(1, 700))
        w = float(hi) - float(lo) if hi > lo else 1.0
        x = rng.uniform(float(min(lo, 0)) - 0.1 * w, float(max(hi, 0)) + 0.1 * w, size)
        cases.append((x.astype(np.float32), lo, hi))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for x, lo, hi in cases:
        parts += [struct.pack("<i2f", x.size, lo, hi), x.astype("<f4").tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: data / codes concatenated with ``offsets``; per case the input range, status (0 ok, 1 the
    C's Inf / NaN error) and the device's output range."""
    pos, status, rmin, rmax, codes = 0, [], [], [], []
    for x, _, _ in cases:
        st, lo, hi = struct.unpack_from("<iff", out, pos); pos += 12
        if st == 0:
            codes.append(np.frombuffer(out, np.uint8, x.size, pos).copy()); pos += x.size
        else:
            codes.append(np.zeros(x.size, np.uint8))
        status.append(st); rmin.append(lo); rmax.append(hi)
    op_common.check_end(out, pos)
    return {"offsets": np.concatenate([[0], np.cumsum([c[0].size for c in cases])]).astype(np.int64),
            "data": np.concatenate([c[0] for c in cases]), "min": np.array([c[1] for c in cases], np.float32),
            "max": np.array([c[2] for c in cases], np.float32), "status": np.array(status, np.int32),
            "out_min": np.array(rmin, np.float32), "out_max": np.array(rmax, np.float32), "codes": np.concatenate(codes)}


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and range the engine reproduces bit for bit, first difference)."""
    off = gold["offsets"]
    s = lambda k, i: gold[k][i].reshape(1, 1, 1, 1)
    return op_common.count_exact(len(off) - 1, lambda i: op_common.engine_case(
        "Quantize", [gold["data"][off[i]:off[i + 1]].reshape(1, 1, 1, -1), s("min", i), s("max", i)], gold, i,
        gold["codes"][off[i]:off[i + 1]], show_range=True),
        lambda i: f" range=[{gold['min'][i]!r}, {gold['max'][i]!r}] n={off[i + 1] - off[i]}")
