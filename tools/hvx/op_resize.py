"""QuantizedResizeBilinear_8 on nnlib's device code (op_resizebilinear.c ``resizebilinear_qu8_execute``): cases, I/O.

nnlib registers the flat op with ``resizebilinear_qu8_execute``, which picks: the HVX ``resizebilinear_2x`` for an
exact 2x upscale (power-of-2 depth; below 128 a power-of-2 width), ``resizebilinear_4x`` for an exact 4x (depth
below 32, a power of 2), ``resizebilinear_hvx`` (plan from ``weight_generation``) for an align-corners 4x with
``(w_in - 1) % 3 == 0`` and ``w_in * d < 384`` (``weight_generation`` fails on a depth above 2), the same size as
a copy and the portable ``resizebilinear_general`` otherwise. Left out: the align-corners path with one output row
from several input rows, which ends the device run with a segmentation fault under qemu (its second thread
``memcpy``s to a NULL output pointer; the engine refuses it). All run unedited (``graph_standin.h`` for the graph
runtime). The engine follows the same dispatch and each path's arithmetic (ops/nnlib_resize_flat.py).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "resize"
OPS = ("QuantizedResizeBilinear_8",)
SOURCE = "hexagon/ops/src/op_resizebilinear.c"
FUNCTIONS = ["resizebilinear_2x", "resizebilinear_4x", "resizebilinear_hvx", "resizebilinear_general",
             "weight_generation", "resizebilinear_work", "resizebilinear_qu8_execute"]
ASM: list[str] = []
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h", "nn_atomic.h", "nn_bufferpool.h", "float_mathops.h"]
HARNESS = "harness_resize.c"
F = np.float32
PATHS = ("2x", "4x", "hvx", "general")


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, ``nn_tensor_copy`` (src/shape_util.c), then op_resizebilinear.c verbatim from its thread
    count to its node-ops tables."""
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_copy"])
            + hvx_build.extract_span(nnlib / SOURCE, r"^#define NUM_THREADS 2", r"^struct nn_node_ops nn_ops_for_ResizeBilinear_f =",
                                     inclusive=False))


def _case(rng: np.random.Generator, kind: str) -> tuple:
    b, h = int(rng.integers(1, 3)), int(rng.integers(1, 7))
    if kind == "2x":
        d = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256]))
        w = int(rng.choice([1, 2, 4, 8, 16])) if d < 128 else int(rng.integers(1, 6))
        return (b, h, w, d), 2 * h, 2 * w, False
    if kind == "4x":
        d, w = int(rng.choice([1, 2, 4, 8, 16])), int(rng.integers(1, 12))
        return (b, h, w, d), 4 * h, 4 * w, False
    if kind == "hvx":
        d = int(rng.choice([1, 2]))
        w = int(rng.choice([k for k in (1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 40) if k * d < 384]))
        return (b, h, w, d), int(rng.integers(2 if h > 1 else 1, 4 * h + 2)), 4 * w, True
    d, w = int(rng.integers(1, 40)), int(rng.integers(1, 12))
    h_out, w_out = int(rng.integers(1, 3 * h + 2)), int(rng.integers(1, 3 * w + 2))
    if (h_out, w_out) == (h, w):
        w_out += 1
    return (b, h, w, d), h_out, w_out, bool(rng.random() < 0.3)


#: Edge cases after the random ones: (shape, h_out, w_out, align). The align-corners 4x path at the widest
#: ``w_in * depth < 384`` (its 512-byte row segments nearly full), from one row to one row and to several; its
#: refusals (depth 3-8: "didn't get scaling plan"); align corners to an output side of 1 on the general path
#: (NaN positions: every code 255); the 4x path where ``(w_in - 1) * depth`` is a multiple of 128 (the right
#: neighbour read after the row) and beside it; 2x on depth 128 / 256 with odd widths; the same size (a copy,
#: also with align corners); downscales.
EDGES = [((1, 2, 382, 1), 3, 1528, True), ((1, 3, 190, 2), 7, 760, True), ((2, 2, 127, 1), 5, 508, True),
         ((1, 1, 181, 2), 1, 724, True), ((1, 1, 4, 1), 5, 16, True), ((2, 4, 13, 2), 16, 52, True),
         ((1, 2, 4, 3), 6, 16, True), ((1, 3, 7, 4), 9, 28, True), ((2, 2, 10, 8), 2, 40, True),
         ((1, 3, 5, 4), 1, 3, True), ((1, 3, 5, 4), 4, 1, True), ((1, 2, 2, 1), 1, 1, True),
         ((1, 1, 1, 2), 1, 3, True), ((2, 1, 3, 5), 1, 1, True),
         ((1, 3, 17, 8), 12, 68, False), ((2, 2, 33, 4), 8, 132, False), ((1, 2, 129, 1), 8, 516, False),
         ((1, 2, 16, 8), 8, 64, False), ((2, 3, 65, 2), 12, 260, False),
         ((1, 2, 3, 128), 4, 6, False), ((2, 2, 5, 256), 4, 10, False), ((1, 3, 4, 5), 3, 4, False),
         ((1, 3, 4, 5), 3, 4, True), ((1, 7, 9, 3), 3, 4, False), ((1, 7, 9, 3), 3, 4, True)]


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(shape, h_out, w_out, n_inputs, align, in_min, in_max, codes): ``n`` random cases, a quarter per path, then
    :data:`EDGES`."""
    cases = []
    for i in range(n + len(EDGES)):
        shape, h_out, w_out, align = _case(rng, PATHS[i % 4]) if i < n else EDGES[i - n]
        n_in = 5 if align or (i < n and rng.random() < 0.3) else 4
        lo = F(-rng.uniform(0, 5)); hi = F(lo + rng.uniform(0.1, 10))
        cases.append((shape, h_out, w_out, n_in, int(align), lo, hi,
                      rng.integers(0, 256, int(np.prod(shape)), dtype=np.uint8)))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for shape, h_out, w_out, n_in, align, lo, hi, x in cases:
        parts += [struct.pack("<8i2f", *shape, h_out, w_out, n_in, align, lo, hi), x.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: codes in / out with ``in_off`` / ``offsets``; per case shape, output size, n_inputs, align,
    range, status and the device's output range."""
    r = op_common.read_results(out, [int(c[0][0] * c[1] * c[2] * c[0][3]) for c in cases])
    col = lambda k, t: op_common.column(cases, k, t)
    return {"shape": col(0, np.int32), "h_out": col(1, np.int32), "w_out": col(2, np.int32), "n_inputs": col(3, np.int32),
            "align": col(4, np.int32), "in_min": col(5, F), "in_max": col(6, F), "data": np.concatenate([c[7] for c in cases]),
            "in_off": op_common.offsets([c[7] for c in cases]), **r}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The op's inputs for golden case ``i``."""
    x = g["data"][g["in_off"][i]:g["in_off"][i + 1]].reshape(g["shape"][i])
    ins = [x, np.array([g["h_out"][i], g["w_out"][i]], np.int32).reshape(1, 1, 1, 2),
           g["in_min"][i].reshape(1, 1, 1, 1), g["in_max"][i].reshape(1, 1, 1, 1),
           np.array(g["align"][i], np.int32).reshape(1, 1, 1, 1)]
    return ins[:g["n_inputs"][i]]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and range the engine reproduces bit for bit - or both refuse -, first difference)."""
    off = gold["offsets"]
    return op_common.count_exact(len(off) - 1, lambda i: op_common.engine_case(
        "QuantizedResizeBilinear_8", case_inputs(gold, i), gold, i, gold["codes"][off[i]:off[i + 1]]),
        lambda i: f" {gold['shape'][i].tolist()} -> {gold['h_out'][i]}x{gold['w_out'][i]}")
