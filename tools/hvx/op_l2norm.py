"""L2Normalize_8 on nnlib's device code (op_l2normalize_8.c, whole): cases, I/O, comparison.

nnlib registers ``l2normalize_execute_8_fast`` (no check; the ``_ref`` file is another op): the range is fixed at
[-1, 1], the input's zero code is ``quantize_uint8(0.0f, min, max)`` (no zero-fixing), and one vector work item
runs ``l2norm_hvx``. Along depth (``hvx_l2norm_in_rows``): the row's sum of squared code distances in HVX words,
``sqrtf``, a 15-bit integer reciprocal ``(32768u / (unsigned)l2) << floor_log2(l2)`` taken as a signed halfword,
``vmpy``, an arithmetic shift by ``floor_log2 + 8``, saturating packs, ``+ 128``; a row of zero distances is
stored as code ``(int)(1 / (2 / 255.0))`` = 127 by one variable store of at most two vectors. Along another axis
(``hvx_l2norm_in_cols``): per depth lane the sum of squares normalised by its leading zeros, the Newton
``rsqrt_newton_hvx`` (include/hvx_mathops.h) with its odd-shift correction, the same packs. The file is compiled
whole and unedited with nnlib's own ``nn_graph.h``; the node run by ``harness_node.c``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_node

NAME = "l2norm"
OPS = ("L2Normalize_8",)
SOURCE = "hexagon/ops/src/op_l2normalize_8.c"
FUNCTIONS = ["l2normalize_execute_8_fast", "l2norm_hvx", "hvx_l2norm_in_rows", "hvx_l2norm_in_cols",
             "rsqrt_newton_hvx (hvx_mathops.h)", "compute_reduced_sum (nn_reduce_utils.h)"]
C_FILES = [*op_node.NODE_C_FILES]
ASM = list(op_node.NODE_ASM)
HEADERS = list(op_node.NODE_HEADERS)
HARNESS = "harness_node.c"
INCLUDES = list(op_node.NODE_INCLUDES)
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """:func:`op_node.node_body` of the op file."""
    return op_node.node_body(nnlib, SOURCE, OPS)


def _node(x: np.ndarray, rin: tuple[float, float], axis: int | None = None) -> dict:
    ins = [x, np.array(rin[0], F).reshape(1, 1, 1, 1), np.array(rin[1], F).reshape(1, 1, 1, 1)]
    if axis is not None:
        ins.append(np.array([axis], np.int32).reshape(1, 1, 1, 1))
    return {"op": 0, "padding": 0, "ins": ins, "caps": [x.size, 4, 4], "runs": 1,
            "oshapes": [list(x.shape), [1, 1, 1, 1], [1, 1, 1, 1]]}


def _range(rng: np.random.Generator) -> tuple[float, float]:
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return 0.0, float(rng.uniform(0.1, 10))
    if kind == 1:                             # excludes 0: the zero code saturates to 0 or 255
        lo = float(rng.uniform(0.1, 2))
        return (lo, lo + float(rng.uniform(0.1, 5))) if rng.random() < 0.5 else (-lo - 3.0, -lo)
    step, z = float(rng.uniform(0.005, 0.1)), int(rng.integers(0, 256))
    return -z * step, (255 - z) * step


def _data(rng: np.random.Generator, shape: list[int], zero: int) -> np.ndarray:
    """Random codes, near the zero code on some nodes (small norms), with some slices all at the zero code."""
    kind = int(rng.integers(0, 4))
    if kind == 0:
        x = np.clip(zero + rng.integers(-3, 4, shape), 0, 255)
    else:
        x = rng.integers(0, 256, shape)
    if kind == 3:
        x[..., : max(1, shape[3] // 3)] = zero
    return x.astype(np.uint8)


def _case(rng: np.random.Generator) -> dict:
    shape = [int(rng.choice([1, 1, 2, 3])), int(rng.integers(1, 8)), int(rng.integers(1, 10)),
             int(rng.choice([int(rng.integers(1, 40)), int(rng.integers(100, 300))]))]
    rin = _range(rng)
    zero = int(np.clip(np.round(-rin[0] / ((rin[1] - rin[0]) / 255)), 0, 255))
    axis = [None, 3, 0, 1, 2, -1, -2, -3, -4][int(rng.integers(0, 9))]
    return _node(_data(rng, shape, zero), rin, axis)


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (depths about the 128-byte vector 1, 31, 32, 33, 127, 128, 129, 255, 256, 300 along every axis;
    one element per slice; slices of zero distances, also longer than a vector along depth; slices whose norm is a
    power of two, where the 15-bit reciprocal wraps to -32768; all codes 0 / 255; ranges excluding 0) and ``n``
    random nodes."""
    out = []
    for d in (1, 31, 32, 33, 127, 128, 129, 255, 256, 300):
        x = rng.integers(0, 256, (1, 3, 2, d), dtype=np.uint8)
        out += [_node(x, (-1.0, 3.0), a) for a in (None, 0, 1, 2, 3)]
    for d in (1, 4, 16, 100, 129, 200, 300):
        out.append(_node(np.full((2, 2, 3, d), 64, np.uint8), (-1.0, 3.0)))            # zero code 64: all zero
        out.append(_node(np.full((2, 2, 3, d), 64, np.uint8), (-1.0, 3.0), 1))
    for v, k in ((65, 1), (66, 1), (65, 4), (66, 4), (68, 4), (72, 16), (80, 4), (63, 16)):
        x = np.full((1, 2, 3, k), 64, np.uint8)
        x[..., :] = v                                     # norm |v - 64| * sqrt(k): 1, 2, 4, 8, 32 ...
        out += [_node(x, (-1.0, 3.0)), _node(x, (-1.0, 3.0), 2)]
    for v in (0, 255):
        x = np.full((2, 3, 4, 40), v, np.uint8)
        out += [_node(x, (-2.0, 2.0 * 127 / 128)), _node(x, (0.5, 1.5), 1), _node(x, (-3.0, -1.0), 0)]
    out.append(_node(np.array([[[[77]]]], np.uint8), (-1.0, 1.0)))
    out.append(_node(rng.integers(0, 256, (1, 1, 1, 1000), dtype=np.uint8), (-0.3, 0.7)))
    out.append(_node(rng.integers(0, 256, (1, 40, 1, 3), dtype=np.uint8), (-0.3, 0.7), 1))
    return out + [_case(rng) for _ in range(n)]


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the codes, their shape and the float32 range bit for bit."""
    return op_node.engine_run(OPS[0], g, i, (np.uint8, F, F))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
