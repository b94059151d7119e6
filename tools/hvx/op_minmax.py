"""QuantizedMaximum / QuantizedMinimum on nnlib's device code (same-shape operands): cases, harness I/O, golden arrays.

op_minimum_maximum.c moves each operand whose range differs from the output range onto it with
``requantize_to_outrange`` (HVX ``jointly_quantize``, include/hvx_inlines.h: a 12-bit fixed-point multiplier)
and takes ``vmin`` / ``vmax`` in ``qminmax_hvx``; both run unedited, the front lines as in ``harness_minmax.c``.
Scalar operands are left out: nnlib's ``check_prepare_hvx_opt`` then reads a constant code 0 as "no constant"
and takes the other operand's data from uninitialised scratch, which no golden case can pin down.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "minmax"
OPS = ("QuantizedMinimum", "QuantizedMaximum")
SOURCE = "hexagon/ops/src/op_minimum_maximum.c"
FUNCTIONS = ["requantize_to_outrange", "qminmax_hvx"]
ASM: list[str] = []
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_minmax.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """ALIGN_SIZE (nn_broadcast.h), SHIFT and enum MinMaxOp, then the two functions, all verbatim."""
    return (hvx_build.extract_items(nnlib / "hexagon/include/nn_broadcast.h", ["ALIGN_SIZE"])
            + hvx_build.extract_items(nnlib / SOURCE, ["SHIFT", "MinMaxOp"])
            + hvx_build.extract_functions(nnlib / SOURCE, FUNCTIONS))


def _range(rng: np.random.Generator) -> tuple[float, float]:
    """An operand range: containing 0 (mostly), excluding it, narrow."""
    k = rng.random()
    if k < 0.7:
        return F(-rng.uniform(0, 1) * 10 ** rng.uniform(-2, 2)), F(rng.uniform(0.01, 1) * 10 ** rng.uniform(-2, 2))
    if k < 0.9:
        lo = F(rng.uniform(-20, 20)); return lo, F(lo + F(rng.uniform(0.01, 20)))
    c = F(rng.uniform(-5, 5)); return c, F(c + F(10 ** rng.uniform(-5, -2)))


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(op, n_inputs, a, b, a_min, a_max, b_min, b_max, out_min, out_max): fixed edge cases (equal ranges, which
    skip the requantization; one range inside the other; an 8-input output range narrower than both; every
    code), then ``n`` random cases with 6, 7 or 8 inputs."""
    allc = np.arange(256, dtype=np.uint8)
    rev = allc[::-1].copy()
    cases = []
    for op in (0, 1):
        for r in [(-1, 1, -1, 1, 0, 0), (-1, 1, -2, 3, 0, 0), (0, 6, -6, 0, 0, 0), (1, 3, -3, -1, 0, 0),
                  (-1, 1, -2, 3, -0.5, 0.5), (-1, 1, -2, 3, 1, 2), (-1, 1, -1, 1, 0.5, 0.25), (-1e-4, 1e-4, -50, 50, 0, 0)]:
            cases.append((op, 8 if r[4] or r[5] else 6, allc, rev, *map(F, r)))
        for size in (1, 127, 128, 129, 300):
            cases.append((op, 7, (np.arange(size) * 5 % 256).astype(np.uint8), (np.arange(size) * 11 % 256).astype(np.uint8),
                          F(-1), F(2), F(-3), F(1), F(-0.5), F(0)))
    for i in range(n):
        size = int(rng.integers(1, 600))
        (a_lo, a_hi), (b_lo, b_hi) = _range(rng), _range(rng)
        n_in = int(rng.choice([6, 7, 8], p=[0.5, 0.2, 0.3]))
        o_lo = F(min(a_lo, b_lo) * rng.uniform(0.3, 1.5))
        o_hi = F(max(a_hi, b_hi) * rng.uniform(0.3, 1.5)) if rng.random() < 0.9 else F(o_lo - 1)
        cases.append((i % 2, n_in, rng.integers(0, 256, size, dtype=np.uint8), rng.integers(0, 256, size, dtype=np.uint8),
                      a_lo, a_hi, b_lo, b_hi, o_lo, o_hi))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for op, n_in, a, b, *f in cases:
        parts += [struct.pack("<iii6f", op, n_in, a.size, *f), a.tobytes(), b.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: a / b / codes concatenated with ``offsets`` (codes zero where the C errs); per case op,
    n_inputs, the six ranges, status (0 ok, 1 the C's "output min >= output max") and the device's range."""
    pos, status, rmin, rmax, codes = 0, [], [], [], []
    for c in cases:
        st, lo, hi = struct.unpack_from("<iff", out, pos); pos += 12
        if st == 0:
            codes.append(np.frombuffer(out, np.uint8, c[2].size, pos).copy()); pos += c[2].size
        else:
            codes.append(np.zeros(c[2].size, np.uint8))
        status.append(st); rmin.append(lo); rmax.append(hi)
    op_common.check_end(out, pos)
    col = lambda k: np.array([c[k] for c in cases], np.float32)
    return {"offsets": np.concatenate([[0], np.cumsum([c[2].size for c in cases])]).astype(np.int64),
            "op": np.array([c[0] for c in cases], np.int32), "n_inputs": np.array([c[1] for c in cases], np.int32),
            "a": np.concatenate([c[2] for c in cases]), "b": np.concatenate([c[3] for c in cases]),
            "a_min": col(4), "a_max": col(5), "b_min": col(6), "b_max": col(7), "out_min_in": col(8), "out_max_in": col(9),
            "status": np.array(status, np.int32), "out_min": np.array(rmin, np.float32),
            "out_max": np.array(rmax, np.float32), "codes": np.concatenate(codes)}


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases the engine reproduces - codes and range bit for bit, or refuses where the C errs -, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError
    off, exact, first = gold["offsets"], 0, ""
    for i in range(len(off) - 1):
        s = lambda k: gold[k][i].reshape(1, 1, 1, 1)  # noqa: B023
        sl = slice(off[i], off[i + 1])
        ins = [gold["a"][sl].reshape(1, 1, 1, -1), gold["b"][sl].reshape(1, 1, 1, -1),
               s("a_min"), s("a_max"), s("b_min"), s("b_max"), s("out_min_in"), s("out_max_in")][:gold["n_inputs"][i]]
        try:
            q, mn, mx = run_op(OPS[gold["op"][i]], ins)
        except HexnnError as e:
            ok, msg = bool(gold["status"][i] == 1), f"engine error {e}"
        else:
            ok = (gold["status"][i] == 0 and np.array_equal(q.reshape(-1), gold["codes"][sl])
                  and mn.reshape(-1)[:1].tobytes() == gold["out_min"][i:i + 1].tobytes()
                  and mx.reshape(-1)[:1].tobytes() == gold["out_max"][i:i + 1].tobytes())
            msg = "the C errs" if gold["status"][i] else f"{int((q.reshape(-1) != gold['codes'][sl]).sum())} codes differ"
        exact += ok
        if not ok and not first:
            first = f"case {i} {OPS[gold['op'][i]]} n_inputs={gold['n_inputs'][i]}: {msg}"
    return len(off) - 1, exact, first
