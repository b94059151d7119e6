"""The elementwise HVX ops of op_neg.c and op_sqrt.c on nnlib's device code: cases, harness I/O, golden arrays.

nnlib registers ``Neg_f``, ``Abs_f``, ``Neg_int32``, ``Abs_int32`` and ``QuantizedNeg_8`` with op_neg.c's
``unary_op_execute`` (HVX run functions made by its ``RUNFUNCTION_DEF`` macro: sign-bit xor / and, saturating
``vsub`` / ``vabs``, ``vnot`` of the codes) and ``QuantizedSqrt_8`` with op_sqrt.c's ``sqrt_execute`` (a
256-entry table through ``vlut32``, the output range ``sqrtf`` of the input range). All run unedited;
``graph_standin.h`` stands in for the graph runtime; ``sqrtf`` is the runtime's (correctly rounded, checked by
``selftest.py``).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "unary"
OPS = ("Neg_f", "Abs_f", "Neg_int32", "Abs_int32", "QuantizedNeg_8", "QuantizedSqrt_8")
SOURCE = "hexagon/ops/src/op_neg.c"
FUNCTIONS = ["unary_op_execute", "sqrt_execute_hvx", "sqrt_execute"]
ASM: list[str] = []
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h", "hexagon_nn_ops.h"]
HARNESS = "harness_unary.c"
SQRT = "hexagon/ops/src/op_sqrt.c"


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, then verbatim: ``nn_tensor_out_prepare_normal_fromshape`` (src/shape_util.c), op_neg.c's run state, its run-function macro and instances and
    ``unary_op_execute``; op_sqrt.c's ``struct tdata``, ``sqrt_execute_hvx`` and ``sqrt_execute``."""
    neg, sq = nnlib / SOURCE, nnlib / SQRT
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_out_prepare_normal_fromshape"])
            + hvx_build.extract_span(neg, r"^struct unary_vec_op_runstate \{", r"^#define MAX_THREAD_COUNT")
            + hvx_build.extract_span(neg, r"^#define RUNFUNCTION_DEF", r"^typedef void \(\*run_fp\)")
            + hvx_build.extract_functions(neg, ["unary_op_execute"])
            + hvx_build.extract_items(sq, ["tdata"]) + hvx_build.extract_functions(sq, ["sqrt_execute_hvx", "sqrt_execute"]))


def _floats(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 bit patterns of every kind: normal, subnormal, +-0, +-Inf, NaN (quiet and signalling payloads)."""
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 1, 0x807FFFFF],
                       np.uint32)
    x[: min(n, special.size)] = special[: min(n, special.size)]
    return x.view(np.float32)


def _ints(rng: np.random.Generator, n: int) -> np.ndarray:
    """int32 values including INT32_MIN / MAX (the saturating cases) and small ones."""
    x = rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)
    x[: min(n, 5)] = np.array([-2 ** 31, 2 ** 31 - 1, 0, -1, 1], np.int32)[: min(n, 5)]
    return x


def _qrange(rng: np.random.Generator, sqrt: bool) -> tuple[np.float32, np.float32]:
    """A range; for Sqrt mostly starting at 0 (the table's assumption), sometimes above 0 or below (the C's error)."""
    hi = np.float32(10 ** rng.uniform(-3, 3))
    k = rng.random()
    if sqrt:
        return (np.float32(0), hi) if k < 0.6 else (np.float32(hi * 0.3), hi) if k < 0.85 else (np.float32(-hi * 0.1), hi)
    return (np.float32(-hi * rng.uniform(0, 1)), hi) if k < 0.8 else (np.float32(hi * 0.5), hi)


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(op, in_min, in_max, data): every op at sizes around a vector, every code for the quantized ops, then
    ``n`` random cases (sizes 1..800; once per op past 256 vectors: ``unary_op_execute``'s two-thread split)."""
    cases = []
    allc = np.arange(256, dtype=np.uint8)
    for op in (4, 5):
        cases += [(op, np.float32(0), np.float32(1), allc), (op, np.float32(-2), np.float32(3), allc[::-1].copy())]
    for i in range(n + 12):
        op = i % 6
        esize = 4 if op < 4 else 1
        size = [1, 31, 32, 33, 128, 129][i] if i < 6 else [300, 1025][i - 6] if i < 8 else \
            int(rng.integers(33000, 40000)) // esize if i in range(96, 102) else int(rng.integers(1, 800))
        lo, hi = _qrange(rng, op == 5)
        data = (_floats(rng, size) if op < 2 else _ints(rng, size) if op < 4
                else rng.integers(0, 256, size, dtype=np.uint8))
        cases.append((op, lo, hi, data))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for op, lo, hi, x in cases:
        parts += [struct.pack("<2i2f", op, x.size, lo, hi), x.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: per case op, range, status, the device's output range; the data and outputs as raw bytes
    (``data`` / ``result``, ``offsets`` in bytes), the quantized ops' ranges as given."""
    pos, status, rmin, rmax, res = 0, [], [], [], []
    for _, _, _, x in cases:
        st, lo, hi = struct.unpack_from("<iff", out, pos); pos += 12
        res.append(np.frombuffer(out, np.uint8, x.nbytes, pos).copy()); pos += x.nbytes
        status.append(st); rmin.append(lo); rmax.append(hi)
    op_common.check_end(out, pos)
    return {"offsets": np.concatenate([[0], np.cumsum([c[3].nbytes for c in cases])]).astype(np.int64),
            "op": np.array([c[0] for c in cases], np.int32), "in_min": np.array([c[1] for c in cases], np.float32),
            "in_max": np.array([c[2] for c in cases], np.float32),
            "data": np.concatenate([c[3].view(np.uint8) for c in cases]), "status": np.array(status, np.int32),
            "out_min": np.array(rmin, np.float32), "out_max": np.array(rmax, np.float32), "result": np.concatenate(res)}


DTYPES = (np.float32, np.float32, np.int32, np.int32, np.uint8, np.uint8)


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose output the engine reproduces bit for bit - range too for the quantized ops, or both
    refuse -, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    off, exact, first = gold["offsets"], 0, ""
    for i in range(len(off) - 1):
        op = int(gold["op"][i])
        x = gold["data"][off[i]:off[i + 1]].view(DTYPES[op]).reshape(1, 1, 1, -1)
        dev = gold["result"][off[i]:off[i + 1]]
        ins = [x] + ([gold["in_min"][i].reshape(1, 1, 1, 1), gold["in_max"][i].reshape(1, 1, 1, 1)] if op >= 4 else [])
        try:
            outs = run_op(OPS[op], ins)
        except HexnnError as e:
            ok, msg = bool(gold["status"][i]), f"engine error {e}"
        else:
            got = np.ascontiguousarray(outs[0].reshape(-1).astype(DTYPES[op])).view(np.uint8)
            ok = gold["status"][i] == 0 and np.array_equal(got, dev)
            if op >= 4:
                ok = ok and (outs[1].reshape(-1)[:1].tobytes() == gold["out_min"][i:i + 1].tobytes()
                             and outs[2].reshape(-1)[:1].tobytes() == gold["out_max"][i:i + 1].tobytes())
            msg = f"{int((got != dev).sum())} bytes differ"
        exact += ok
        if not ok and not first:
            first = f"case {i} {OPS[op]} n={x.size}: {msg}"
    return len(off) - 1, exact, first
