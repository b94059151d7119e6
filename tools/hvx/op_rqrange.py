"""RequantizationRange_32 on nnlib's device code (op_requantize.c, whole): cases, I/O, comparison.

nnlib registers ``requantrange_execute`` (no check), which runs ``do_requantrange_execute`` through ``launcher``
as a vector work item: the int32 extremes from 0, each times ``(in_max - in_min) * (1.0f / 4294967296.0f)`` in
float32 - plain C, so the row checks what the Hexagon build computes. The whole file is compiled unedited with
nnlib's own ``nn_graph.h`` and src/quantize.c, as ``op_requant8.py`` does; the node run by ``harness_node.c``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_node
import op_requant8

NAME = "rqrange"
OPS = ("RequantizationRange_32",)
SOURCE = op_requant8.SOURCE
FUNCTIONS = ["requantrange_execute", "do_requantrange_execute", "launcher", "worker"]
C_FILES = op_requant8.C_FILES
ASM = op_requant8.ASM
HEADERS = op_requant8.HEADERS
HARNESS = "harness_node.c"
INCLUDES = op_requant8.INCLUDES
ROWS = ("RequantizationRange_32", "requant_RequantizationRange_32_edge_ranges_4_D")
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """``op_requant8.body`` (the OS stand-ins, shape_util.c's helpers, the whole op_requantize.c) and the op table."""
    return op_requant8.body(nnlib) + op_node.units(OPS)


def caps(op: int, ins: list[np.ndarray]) -> list[int]:
    """Two range scalars."""
    return [4, 4]


def _case(rng: np.random.Generator) -> dict:
    shape = [int(rng.choice([1, 1, 2])), int(rng.integers(1, 9)), int(rng.integers(1, 20)), int(rng.integers(1, 80))]
    kind = int(rng.integers(0, 5))
    if kind == 0:
        x = rng.integers(-2 ** 31, 2 ** 31, shape, dtype=np.int64)
    elif kind == 1:                       # one sign only: the extremes start from 0
        x = rng.integers(0, 2 ** 24, shape) * (1 if rng.random() < 0.5 else -1)
    else:
        x = rng.integers(-2 ** int(rng.integers(1, 31)), 2 ** int(rng.integers(1, 31)), shape, dtype=np.int64)
    m = F(2.0 ** rng.uniform(-10, 30))
    lo = -m * F(rng.uniform(0, 1)) if rng.random() < 0.7 else m * F(rng.uniform(0.01, 0.5))
    rin = np.array([lo, m], F)
    return {"op": 0, "padding": 0, "caps": [4, 4], "runs": 1,
            "ins": [x.astype(np.int32), *(np.array(v, F).reshape(1, 1, 1, 1) for v in rin)]}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The portable-C golden rows' inputs (48), edge data (INT32_MIN / INT32_MAX alone, all zeros, one element,
    a zero-width range, a range of 2^100 whose width overflows float32 (+inf), ranges excluding 0) and ``n`` random
    nodes."""
    out = [c for row in ROWS for c in op_node.portable_rows(row, {OPS[0]: 0}, caps)]
    edge = [([-2 ** 31], (-1.0, 1.0)), ([2 ** 31 - 1], (-1.0, 1.0)), ([-2 ** 31, 2 ** 31 - 1], (-3.5, 7.25)),
            ([0] * 300, (-2.0, 2.0)), ([5], (1.0, 1.0)), ([-7, 9], (-2.0 ** 127, 2.0 ** 127)),
            ([123456789, -98765], (0.5, 3.0)), ([1, 2, 3], (-3.0, -0.5))]
    for data, (lo, hi) in edge:
        out.append({"op": 0, "padding": 0, "caps": [4, 4], "runs": 1,
                    "ins": [np.array(data, np.int32).reshape(1, 1, 1, -1), np.array(lo, F).reshape(1, 1, 1, 1),
                            np.array(hi, F).reshape(1, 1, 1, 1)]})
    return out + [_case(rng) for _ in range(n)]


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: both float32 range ends bit for bit."""
    return op_node.engine_run(OPS[0], g, i, (F, F))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
