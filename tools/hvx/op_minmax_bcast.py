"""QuantizedMaximum / QuantizedMinimum with broadcasting, on nnlib's device code run whole: cases, harness I/O, golden.

``maximum_q8_execute`` / ``minimum_q8_execute`` -> ``minmax_execute`` (op_minimum_maximum.c): each operand moved
onto the output range (HVX ``requantize_to_outrange``), then nn_broadcast.h's ``check_prepare_hvx_opt``
(src/broadcast.c ``nn_check_prepare_hvx_opt``) takes same shapes and a depth-only operand ``(1,1,1,d)`` to the HVX
``qminmax_hvx`` (the depth operand copied out with asm ``vmemcpy_asm``), other broadcasts to the portable
``nn_elementwise_with_broadcast``. All run unedited (``graph_standin.h`` for the graph runtime). A scalar operand
is left out, as in ``op_minmax.py``: a constant code 0 reads the other operand from uninitialised scratch.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common
import op_minmax

NAME = "minmax_bcast"
OPS = ("QuantizedMinimum", "QuantizedMaximum")
SOURCE = "hexagon/ops/src/op_minimum_maximum.c"
FUNCTIONS = ["requantize_to_outrange", "qminmax_hvx", "qminmax_thread_process", "minmax_execute",
             "maximum_q8_execute", "minimum_q8_execute", "nn_check_prepare_hvx_opt", "nn_elementwise_with_broadcast"]
ASM = ["hexagon/asm_src/vmemcpy_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_minmax_bcast.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, then verbatim: ``nn_tensor_out_prepare_normal_fromshape`` (src/shape_util.c),
    nn_broadcast.h after its ``#include <nn_graph.h>``, src/broadcast.c's ``ROUNDUP``, two functions and run state,
    op_minimum_maximum.c from its vector type to its node-ops tables."""
    nb, bc, src = nnlib / "hexagon/include/nn_broadcast.h", nnlib / "hexagon/src/broadcast.c", nnlib / SOURCE
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_out_prepare_normal_fromshape"])
            + hvx_build.extract_span(nb, r"^/\* Is this dimension compatible", r"^#define NEW_BROADCAST")
            + hvx_build.extract_span(nb, r"^#ifdef NEW_BROADCAST", r"^#endif")
            + hvx_build.extract_items(bc, ["ROUNDUP"]) + hvx_build.extract_functions(bc, ["nn_check_prepare_hvx_opt"])
            + hvx_build.extract_span(bc, r"^static void broadcast_work_for_hvx\(.*\);", r"^};")
            + hvx_build.extract_functions(bc, ["nn_elementwise_with_broadcast", "broadcast_work_for_hvx"])
            + hvx_build.extract_span(src, r"^#if defined\(__hexagon__\)\s*\ntypedef long HVX_Vect_UN",
                                     r"^struct nn_node_ops nn_ops_for_QuantizedMinimum_8 =", inclusive=False))


def _shapes(rng: np.random.Generator) -> tuple[tuple, tuple]:
    """A full shape and a broadcast one: depth-only ``(1,1,1,d)`` (the HVX path), or another pattern (the portable
    loops: rows, columns, batches), either operand first; never a scalar."""
    full = (int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(2, 70)))
    k = rng.random()
    if k < 0.4:
        part = (1, 1, 1, full[3])
    else:
        part = tuple(v if rng.random() < 0.5 else 1 for v in full)
        if int(np.prod(part)) == 1:
            part = (1, 1, full[2], 1) if full[2] > 1 else (1, full[1], 1, full[3])
    return (full, part) if rng.random() < 0.5 else (part, full)


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(op, n_inputs, a_shape, b_shape, a_min, a_max, b_min, b_max, out_min, out_max, a, b): ``n`` random cases."""
    cases = []
    for i in range(n):
        sa, sb = _shapes(rng)
        (al, ah), (bl, bh) = op_minmax._range(rng), op_minmax._range(rng)
        n_in = int(rng.choice([6, 7, 8], p=[0.5, 0.2, 0.3]))
        ol = F(min(al, bl) * rng.uniform(0.3, 1.5))
        oh = F(max(ah, bh) * rng.uniform(0.3, 1.5)) if rng.random() < 0.9 else F(ol - 1)
        cases.append((i % 2, n_in, sa, sb, al, ah, bl, bh, ol, oh, rng.integers(0, 256, int(np.prod(sa)), dtype=np.uint8),
                      rng.integers(0, 256, int(np.prod(sb)), dtype=np.uint8)))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for op, n_in, sa, sb, *f, a, b in cases:
        parts += [struct.pack("<10i6f", op, n_in, *sa, *sb, *f), a.tobytes(), b.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: a / b / codes concatenated with ``a_off`` / ``b_off`` / ``offsets``; per case op, n_inputs,
    shapes, the six ranges, status (0 ok, 1 the C's "output min >= output max") and the device's range."""
    r = op_common.read_results(out, [int(np.prod(np.maximum(c[2], c[3]))) for c in cases])
    col = lambda k, t: op_common.column(cases, k, t)
    return {"op": col(0, np.int32), "n_inputs": col(1, np.int32), "a_shape": col(2, np.int32), "b_shape": col(3, np.int32),
            "a_min": col(4, F), "a_max": col(5, F), "b_min": col(6, F), "b_max": col(7, F), "out_min_in": col(8, F),
            "out_max_in": col(9, F), "a": np.concatenate([c[10] for c in cases]), "b": np.concatenate([c[11] for c in cases]),
            "a_off": op_common.offsets([c[10] for c in cases]), "b_off": op_common.offsets([c[11] for c in cases]), **r}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The op's inputs for golden case ``i``."""
    s = lambda k: g[k][i].reshape(1, 1, 1, 1)
    a = g["a"][g["a_off"][i]:g["a_off"][i + 1]].reshape(g["a_shape"][i])
    b = g["b"][g["b_off"][i]:g["b_off"][i + 1]].reshape(g["b_shape"][i])
    return [a, b] + [s(k) for k in ("a_min", "a_max", "b_min", "b_max", "out_min_in", "out_max_in")][:g["n_inputs"][i] - 2]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and range the engine reproduces bit for bit - or both refuse -, first difference)."""
    off = gold["offsets"]
    return op_common.count_exact(len(off) - 1, lambda i: op_common.engine_case(
        OPS[gold["op"][i]], case_inputs(gold, i), gold, i, gold["codes"][off[i]:off[i + 1]]),
        lambda i: f" {OPS[gold['op'][i]]} {gold['a_shape'][i].tolist()} x {gold['b_shape'][i].tolist()}")
