"""QuantizedBiasAdd_8p8to32 on nnlib's device code (op_biasadd.c, whole): cases, I/O, comparison.

nnlib registers ``biasadd_8p8to32_execute`` (no check): plain C - the output range ``+-max|end| * 2^17``, the
offsets ``quantize_uint8`` / ``quantize_uint``, ``(int)((x - xo) * in_mpy + (b - bo) * bias_mpy + 0.5f)`` per
element - so the row checks what the Hexagon build computes of it (clang may fuse the multiply-adds; the float to
int conversion saturates on Hexagon). The file is compiled whole and unedited with nnlib's own ``nn_graph.h``, as
``op_bias32.py`` does; the node run by ``harness_node.c``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_bias32
import op_node

NAME = "biasadd8"
OPS = ("QuantizedBiasAdd_8p8to32",)
SOURCE = op_bias32.SOURCE
FUNCTIONS = ["biasadd_8p8to32_execute"]
C_FILES = op_bias32.C_FILES
ASM = op_bias32.ASM
HEADERS = op_bias32.HEADERS
HARNESS = "harness_node.c"
INCLUDES = op_bias32.INCLUDES
ROWS = ("QuantizedBiasAdd_8p8to32", "QuantizedBiasAdd_8p8to32_edge_far_ranges")
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """``op_bias32.body`` (the OS stand-ins, shape_util.c's helpers, the whole op_biasadd.c) and the op table."""
    return op_bias32.body(nnlib) + op_node.units(OPS)


def caps(op: int, ins: list[np.ndarray]) -> list[int]:
    """The int32 output and two range scalars."""
    return [4 * ins[0].size + 128, 4, 4]


def _range(rng: np.random.Generator) -> tuple[float, float]:
    kind = int(rng.integers(0, 6))
    m = float(F(2.0 ** rng.uniform(-12, 12)))
    if kind == 0:
        return 0.0, m
    if kind == 1:                                   # excludes 0
        return m * 0.25, m
    return -m * float(rng.uniform(0.05, 1)), m * float(rng.uniform(0.05, 1))


def _case(rng: np.random.Generator) -> dict:
    shape = [int(rng.choice([1, 1, 2])), int(rng.integers(1, 7)), int(rng.integers(1, 12)), int(rng.integers(1, 70))]
    rx, rb = _range(rng), _range(rng)
    ins = [rng.integers(0, 256, shape, dtype=np.uint8), rng.integers(0, 256, (1, 1, 1, shape[3]), dtype=np.uint8),
           *(np.array(v, F).reshape(1, 1, 1, 1) for v in (*rx, *rb))]
    return {"op": 0, "padding": 0, "ins": ins, "caps": caps(0, ins), "runs": 1}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The portable-C golden rows' inputs (48), edge cases (equal ranges, a bias range 2^20 times the input's and
    the reverse, zero-width ranges, all codes 0 / 255) and ``n`` random nodes."""
    out = [c for row in ROWS for c in op_node.portable_rows(row, {OPS[0]: 0}, caps)]
    for rx, rb in (((-1.0, 1.0), (-1.0, 1.0)), ((-1.0, 1.0), (-2.0 ** 20, 2.0 ** 20)), ((-2.0 ** 20, 2.0 ** 20), (-1.0, 1.0)),
                   ((0.0, 0.0), (-1.0, 3.0)), ((-1.0, 3.0), (2.0, 2.0)), ((-128.0, 127.0), (0.0, 255.0))):
        for v in (None, 0, 255):
            c = _case(rng)
            c["ins"][2:] = [np.array(v2, F).reshape(1, 1, 1, 1) for v2 in (*rx, *rb)]
            if v is not None:
                c["ins"][0][:] = v; c["ins"][1][:] = v
            out.append(c)
    return out + [_case(rng) for _ in range(n)]


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the int32 output, shape and float32 range bit for bit."""
    return op_node.engine_run(OPS[0], g, i, (np.int32, F, F))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
