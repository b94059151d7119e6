"""QuantizedAdd_8p8to32 / QuantizedSub_8p8to32 / QuantizedMul_8x8to32 on nnlib's device code: cases, harness I/O, golden.

nnlib registers the three with op_addsubmul_8to32.c's ``addsub_832_execute`` / ``mul_832_execute`` (node types
without ``_ref``: the HVX inner loops ``*_stride_11_hvx`` / ``_10_hvx`` / ``rev_stride_01_hvx`` for rows of 16
and more) over src/broadcast.c's ``nn_elementwise_with_broadcast``. All run unedited (``graph_standin.h`` for the
graph runtime); asm ``vmemset_asm`` (vmemset_h.S). Issue 36 asks which float32 output range the device gives a (1,4,1,8) x (1,1,1,1) Mul.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "arith832"
OPS = ("QuantizedAdd_8p8to32", "QuantizedSub_8p8to32", "QuantizedMul_8x8to32")
SOURCE = "hexagon/ops/src/op_addsubmul_8to32.c"
FUNCTIONS = ["addsub_832_execute", "mul_832_execute", "nn_elementwise_with_broadcast", "broadcast_work_for_hvx"]
ASM = ["hexagon/asm_src/vmemset_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h", "hexagon_nn_ops.h"]
HARNESS = "harness_arith832.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, ``nn_tensor_out_prepare_normal_fromshape`` (src/shape_util.c),
    ``hvx_store_vec_x2_unaligned`` (src/argminmax.c), ``struct
    elementwise_funcs`` (nn_broadcast.h, which pulls in the whole graph runtime otherwise), src/broadcast.c's
    run state and two functions, and op_addsubmul_8to32.c from ``struct addsub_832_scaling`` to its node-ops
    tables, verbatim."""
    bc, src = nnlib / "hexagon/src/broadcast.c", nnlib / SOURCE
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_out_prepare_normal_fromshape"])
            + hvx_build.extract_functions(nnlib / "hexagon/src/argminmax.c", ["hvx_store_vec_x2_unaligned"])
            + hvx_build.extract_items(nnlib / "hexagon/include/nn_broadcast.h", ["elementwise_funcs"])
            + hvx_build.extract_span(bc, r"^static void broadcast_work_for_hvx\(.*\);", r"^};")
            + hvx_build.extract_functions(bc, ["nn_elementwise_with_broadcast", "broadcast_work_for_hvx"])
            + hvx_build.extract_span(src, r"^struct addsub_832_scaling \{", r"^struct nn_node_ops nn_ops_for_QuantizedAdd_8p8to32 =",
                                     inclusive=False))


def _range(rng: np.random.Generator) -> tuple[np.float32, np.float32]:
    k = rng.random()
    s = 10 ** rng.uniform(-3, 3)
    if k < 0.6:
        return F(-s * rng.uniform(0, 1)), F(s * rng.uniform(0.01, 1))
    if k < 0.8:
        return F(0), F(s)
    lo = F(s * rng.uniform(-1, 1)); return lo, F(lo + F(s * rng.uniform(0.1, 1)))


def _shapes(rng: np.random.Generator) -> tuple[tuple, tuple]:
    full = tuple(int(v) for v in rng.integers(1, 5, 3)) + (int(rng.choice([1, 8, 15, 16, 17, 40, 128, 200])),)
    k = rng.random()
    if k < 0.4:
        return full, full
    part = tuple(v if rng.random() < 0.5 else 1 for v in full)
    return (full, part) if k < 0.7 else (part, full)


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(op, a_shape, b_shape, a_min, a_max, b_min, b_max, a, b): the issue's (1,4,1,8) x (1,1,1,1) Mul at 30 random
    ranges, then ``n`` random cases (every broadcast pattern, rows below and above 16: scalar and HVX loops)."""
    cases = []
    for _ in range(30):
        (al, ah), (bl, bh) = _range(rng), _range(rng)
        cases.append((2, (1, 4, 1, 8), (1, 1, 1, 1), al, ah, bl, bh, rng.integers(0, 256, 32, dtype=np.uint8),
                      rng.integers(0, 256, 1, dtype=np.uint8)))
    for i in range(n):
        sa, sb = _shapes(rng)
        (al, ah), (bl, bh) = _range(rng), _range(rng)
        cases.append((i % 3, sa, sb, al, ah, bl, bh, rng.integers(0, 256, int(np.prod(sa)), dtype=np.uint8),
                      rng.integers(0, 256, int(np.prod(sb)), dtype=np.uint8)))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for op, sa, sb, al, ah, bl, bh, a, b in cases:
        parts += [struct.pack("<9i4f", op, *sa, *sb, al, ah, bl, bh), a.tobytes(), b.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: a / b / the int32 outputs concatenated with ``a_off`` / ``b_off`` / ``offsets``; per case op,
    shapes, ranges, status and the device's output range."""
    r = op_common.read_results(out, [int(np.prod(np.maximum(c[1], c[2]))) for c in cases], np.int32, key="out")
    col = lambda k, t: op_common.column(cases, k, t)
    return {"op": col(0, np.int32), "a_shape": col(1, np.int32), "b_shape": col(2, np.int32), "a_min": col(3, F),
            "a_max": col(4, F), "b_min": col(5, F), "b_max": col(6, F), "a": np.concatenate([c[7] for c in cases]),
            "b": np.concatenate([c[8] for c in cases]), "a_off": op_common.offsets([c[7] for c in cases]),
            "b_off": op_common.offsets([c[8] for c in cases]), **r}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The op's inputs for golden case ``i``."""
    s = lambda k: g[k][i].reshape(1, 1, 1, 1)
    a = g["a"][g["a_off"][i]:g["a_off"][i + 1]].reshape(g["a_shape"][i])
    b = g["b"][g["b_off"][i]:g["b_off"][i + 1]].reshape(g["b_shape"][i])
    return [a, b, s("a_min"), s("a_max"), s("b_min"), s("b_max")]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose outputs and range the engine reproduces bit for bit - or both refuse -, first difference)."""
    off = gold["offsets"]
    return op_common.count_exact(len(off) - 1, lambda i: op_common.engine_case(
        OPS[gold["op"][i]], case_inputs(gold, i), gold, i, gold["out"][off[i]:off[i + 1]], "values", show_range=True),
        lambda i: f" {OPS[gold['op'][i]]} {gold['a_shape'][i].tolist()} x {gold['b_shape'][i].tolist()}")
