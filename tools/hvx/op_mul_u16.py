"""QuantizedMul_u16 on nnlib's device code (op_addsubmul_16.c, whole): cases, I/O, comparison.

nnlib registers ``mul_16_execute`` (no check): ``set_mul_scaling`` in float32 (steps ``(max - min) * 2**-16``,
zero codes ``saturate_u16((int)(-min / step + 0.5f))``, the product step times 8 against ``4095/4096`` of the
output step - widening the output range about its zero code when it is too small -, the 31-bit ``mulscale``, the
range bias and its scaled ``postadd``), then src/broadcast.c ``nn_elementwise_with_broadcast`` with the HVX
``mul_u16_stride_11_hvx`` / ``_10_hvx`` / ``rev_stride_01_hvx`` on rows of 8 and more, the scalar C below:
``(a - za)(b - zb) + bias`` modulo 2**32, ``(x * mulscale + 2**30) >> 31`` saturated, ``+ postadd`` saturated,
``>> 3`` rounded and saturated to uint16. The file is compiled whole and unedited with nnlib's own ``nn_graph.h``,
src/broadcast.c, src/argminmax.c (``hvx_store_vec_x2_unaligned``) and src/oper16.c (the file's 16-bit
scale helpers) whole; the node run by ``harness_node.c``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_node

NAME = "mul_u16"
OPS = ("QuantizedMul_u16",)
SOURCE = "hexagon/ops/src/op_addsubmul_16.c"
FUNCTIONS = ["mul_16_execute", "set_mul_scaling", "mul_u16_stride_11", "mul_u16_stride_10", "mul_u16_rev_stride_01",
             "mul_u16_stride_11_hvx", "mul_u16_stride_10_hvx", "mul_u16_rev_stride_01_hvx",
             "nn_elementwise_with_broadcast (src/broadcast.c)"]
C_FILES = [*op_node.NODE_C_FILES, "hexagon/src/broadcast.c", "hexagon/src/argminmax.c", "hexagon/src/oper16.c"]
ASM = list(op_node.NODE_ASM)
HEADERS = list(op_node.NODE_HEADERS)
HARNESS = "harness_node.c"
INCLUDES = list(op_node.NODE_INCLUDES)
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """:func:`op_node.node_body` of the op file."""
    return op_node.node_body(nnlib, SOURCE, OPS)


def _s(v: float) -> np.ndarray:
    return np.array(v, F).reshape(1, 1, 1, 1)


def _node(a: np.ndarray, b: np.ndarray, ra: tuple[float, float], rb: tuple[float, float],
          ro: tuple[float, float]) -> dict:
    out = np.broadcast_shapes(a.shape, b.shape)
    ins = [a, b, _s(ra[0]), _s(ra[1]), _s(rb[0]), _s(rb[1]), _s(ro[0]), _s(ro[1])]
    return {"op": 0, "padding": 0, "ins": ins, "caps": [2 * int(np.prod(out)), 4, 4], "runs": 1}


def _range(rng: np.random.Generator) -> tuple[float, float]:
    kind = int(rng.integers(0, 5))
    s = float(10 ** rng.uniform(-2, 2))
    if kind == 0:
        return 0.0, s
    if kind == 1:
        return -s, 0.0
    if kind == 2:                              # excludes 0: the zero code saturates
        return (s, 2.5 * s) if rng.random() < 0.5 else (-2.5 * s, -s)
    return -s * float(rng.uniform(0.05, 1)), s * float(rng.uniform(0.05, 1))


def _out_range(rng: np.random.Generator, ra: tuple, rb: tuple) -> tuple[float, float]:
    ends = [x * y for x in ra for y in rb]
    lo, hi = min(ends + [0.0]), max(ends + [0.0])
    k = rng.random()
    if k < 0.15:                               # far too small: the device widens it about its zero code
        return lo * 1e-4, hi * 1e-4 + 1e-9
    g = float(rng.uniform(0.3, 1.5))
    return lo * g, hi * g + (1e-6 if hi * g <= lo * g else 0.0)


def _shapes(rng: np.random.Generator) -> tuple[tuple, tuple]:
    full = (int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 6)),
            int(rng.choice([int(rng.integers(1, 9)), int(rng.integers(9, 200))])))
    k = rng.random()
    if k < 0.5:
        return full, full
    if k < 0.65:
        part = (1, 1, 1, 1)
    elif k < 0.85:
        part = (1, 1, 1, full[3])
    else:
        part = tuple(v if rng.random() < 0.5 else 1 for v in full)
    return (full, part) if rng.random() < 0.5 else (part, full)


def _codes(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    if rng.random() < 0.2:
        return rng.choice(np.array([0, 1, 32767, 32768, 65534, 65535], np.uint16), shape)
    return rng.integers(0, 65536, shape, dtype=np.uint16)


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (row lengths about the scalar / HVX switch and the 64-element vector: 1, 7, 8, 9, 63, 64, 65, 128,
    129; a scalar operand either side, also at its zero code - the fill; zero codes 0 / 65535 from ranges without
    0; a far too small output range; the identity scale) and ``n`` random nodes."""
    out = []
    ra, rb, ro = (-1.0, 1.0), (-2.0, 3.0), (-6.0, 6.0)
    for d in (1, 7, 8, 9, 63, 64, 65, 128, 129):
        a, b = _codes(rng, (1, 2, 1, d)), _codes(rng, (1, 2, 1, d))
        out += [_node(a, b, ra, rb, ro), _node(a, b[:, :1, :, :1], ra, rb, ro), _node(a[:, :1, :, :1], b, ra, rb, ro)]
    zb = np.full((1, 1, 1, 1), 26214, np.uint16)   # the code of 0.0 in [-2, 3]: (int)(2 / (5 / 65536) + 0.5)
    for d in (5, 100):
        a = _codes(rng, (1, 3, 2, d))
        out += [_node(a, zb, ra, rb, ro), _node(zb, a, rb, ra, ro)]
    a, b = _codes(rng, (1, 2, 3, 70)), _codes(rng, (1, 2, 3, 70))
    out += [_node(a, b, (1.0, 2.0), (-3.0, -1.0), ro), _node(a, b, ra, rb, (0.0, 1e-6)),
            _node(a, b, (0.0, 65536.0), (0.0, 65536.0 * 8), (0.0, 65536.0 * 8 * 65536 * 4096 / 4095)),
            _node(np.full((1, 1, 2, 40), 65535, np.uint16), np.full((1, 1, 2, 40), 0, np.uint16), ra, rb, ro)]
    for _ in range(n):
        sa, sb = _shapes(rng)
        ra, rb = _range(rng), _range(rng)
        out.append(_node(_codes(rng, sa), _codes(rng, sb), ra, rb, _out_range(rng, ra, rb)))
    return out


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the uint16 codes, their shape and the float32 range bit for bit."""
    return op_node.engine_run(OPS[0], g, i, (np.uint16, F, F))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
