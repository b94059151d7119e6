"""QuantizedSum_8to32 on nnlib's device code (op_reducing_sum.c, whole): cases, I/O, comparison.

nnlib registers ``reducing_sum_execute`` (no check): the output tensor's shape is read from its definition (the
harness gives the input's with the reduced axes 1, as prepare.c's shapes do, and checks its element count), the
code sums into the graph's scratch with include/nn_reduce_utils.h's HVX ``reduce_sum_all_axes_hvx`` (every axis
listed, or an output of one element) or ``reduce_sum_single_axis_hvx_8`` / ``_32`` one listed axis at a time
(the later passes misplace sums where a non-reduced axis comes before theirs: ops/nnlib_reduce_passes.py), then
``adjust_output_range`` subtracts ``elems * quantize_uint8(0, adjust_minmax_for_zero(range))`` with ``vsub:sat``
(``elems`` the product of the listed axes' sizes, a repeated axis counted again) and the range is
``+-2**31 * ((max - min) / 255)`` in float32. Negative axes index a local array out of bounds (not run here). The
file is compiled whole and unedited with nnlib's own ``nn_graph.h``; the node run by ``harness_node.c``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_node

NAME = "sum"
OPS = ("QuantizedSum_8to32",)
SOURCE = "hexagon/ops/src/op_reducing_sum.c"
FUNCTIONS = ["reducing_sum_execute", "adjust_output_range", "reduce_sum_all_axes_hvx (nn_reduce_utils.h)",
             "reduce_sum_single_axis_hvx_8 (nn_reduce_utils.h)", "reduce_sum_single_axis_hvx_32 (nn_reduce_utils.h)"]
C_FILES = [*op_node.NODE_C_FILES]
ASM = list(op_node.NODE_ASM)
HEADERS = list(op_node.NODE_HEADERS)
HARNESS = "harness_node.c"
INCLUDES = list(op_node.NODE_INCLUDES)
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """:func:`op_node.node_body` of the op file."""
    return op_node.node_body(nnlib, SOURCE, OPS)


def _node(x: np.ndarray, axes: list[int], rin: tuple[float, float]) -> dict:
    oshape = list(x.shape)
    for a in axes:
        oshape[a] = 1
    ins = [x, np.array(rin[0], F).reshape(1, 1, 1, 1), np.array(rin[1], F).reshape(1, 1, 1, 1),
           np.array(axes, np.int32).reshape(1, 1, 1, -1)]
    return {"op": 0, "padding": 0, "ins": ins, "caps": [4 * int(np.prod(oshape)), 4, 4], "runs": 1,
            "oshapes": [oshape, [1, 1, 1, 1], [1, 1, 1, 1]]}


def _range(rng: np.random.Generator) -> tuple[float, float]:
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return 0.0, float(rng.uniform(0.1, 10))
    if kind == 1:                             # excludes 0: adjust_minmax_for_zero widens it
        lo = float(rng.uniform(0.1, 2))
        return (lo, lo + float(rng.uniform(0.1, 5))) if rng.random() < 0.5 else (-lo - 3.0, -lo)
    if kind == 2:                             # holds 0 off a code: adjust_minmax_for_zero moves an end
        return -float(rng.uniform(0.01, 4)), float(rng.uniform(0.01, 4))
    step, z = float(rng.uniform(0.005, 0.1)), int(rng.integers(0, 256))
    return -z * step, (255 - z) * step


def _case(rng: np.random.Generator) -> dict:
    shape = [int(rng.choice([1, 1, 2, 3])), int(rng.integers(1, 12)), int(rng.integers(1, 16)),
             int(rng.integers(1, 200))]
    naxes = int(rng.integers(1, 5))
    axes = sorted(rng.choice(4, naxes, replace=False).tolist())
    if rng.random() < 0.25:
        axes = axes[::-1]
    return _node(rng.integers(0, 256, shape, dtype=np.uint8), [int(a) for a in axes], _range(rng))


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (every single axis and the whole tensor at output sizes about the 128-byte vector: 1, 31, 32, 33,
    127, 128, 129, 300; all codes 0 / 255; one element; ranges excluding 0 and holding it off a code; reversed and
    repeated axes; an output of one element through a partial axis list) and ``n`` random nodes."""
    out = []
    for d in (1, 31, 32, 33, 127, 128, 129, 300):
        x = rng.integers(0, 256, (1, 3, 2, d), dtype=np.uint8)
        out += [_node(x, [a], (-1.0, 3.0)) for a in range(4)]
        out.append(_node(x, [0, 1, 2, 3], (-1.0, 3.0)))
        out.append(_node(x, [1, 2], (0.0, 6.0)))
    for v in (0, 255):
        x = np.full((2, 4, 5, 40), v, np.uint8)
        out += [_node(x, [1, 2], (-2.0, 2.0 * 127 / 128)), _node(x, [3], (0.5, 1.5)),
                _node(x, [0, 1, 2, 3], (-3.0, -1.0))]
    out.append(_node(np.array([[[[77]]]], np.uint8), [3], (-1.0, 1.0)))
    out.append(_node(rng.integers(0, 256, (1, 1, 1, 500), dtype=np.uint8), [3], (-0.3, 0.7)))
    x = rng.integers(0, 256, (2, 6, 7, 50), dtype=np.uint8)
    out += [_node(x, [2, 1], (-1.5, 4.5)), _node(x, [0, 3], (0.5, 2.5)), _node(x, [1, 1], (-1.5, 4.5)),
            _node(x, [3, 2, 2], (-0.7, 0.2)), _node(x, [2, 3], (1e-7, 2e-7)), _node(x, [1, 2], (-1e3, 1e4))]
    return out + [_case(rng) for _ in range(n)]


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the int32 sums, their shape and the float32 range bit for bit."""
    return op_node.engine_run(OPS[0], g, i, (np.int32, F, F))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
