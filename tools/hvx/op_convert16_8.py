"""Convert_16_8 / Convert_u16_8 on nnlib's device code (op_convert_16.c, whole): cases, I/O, comparison.

nnlib registers ``cvt_x16_8_execute`` (check: 3 or 5 inputs): ``quantize_adjust_range`` of the requested range in
float32, widened to twice the input step about its zero code when narrower, ``conv_ratio``, ``rsh = max(7, ...)``
and the 14-bit ``scale_fac`` / int16 ``offset`` loop, then a scalar C loop in 32-bit integers. The file is compiled
whole and unedited with nnlib's own ``nn_graph.h``; the node run by ``harness_node.c``. The engine follows it in
``ops/kernels/q16_convert_device.py``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_node

NAME = "convert16_8"
OPS = ("Convert_16_8", "Convert_u16_8")
SOURCE = "hexagon/ops/src/op_convert_16.c"
FUNCTIONS = ["cvt_x16_8_execute", "cvt_x16_8_check"]
C_FILES = [*op_node.NODE_C_FILES, "hexagon/src/oper16.c", "hexagon/src/argminmax.c"]
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


def _node(op: int, codes: np.ndarray, rin: tuple[float, float], req: tuple[float, float] | None) -> dict:
    ins = [codes.astype(np.uint16), _s(rin[0]), _s(rin[1])] + ([_s(req[0]), _s(req[1])] if req else [])
    return {"op": op, "padding": 0, "ins": ins, "caps": [int(codes.size), 4, 4], "runs": 1}


def _range(rng: np.random.Generator, op: int) -> tuple[float, float]:
    s = float(10 ** rng.uniform(-3, 2))
    if op == 0:                                   # qint16: symmetric
        return -s, s
    k = int(rng.integers(0, 3))                  # holding 0 (the engine refuses a quint16 range without it)
    return ((0.0, s), (-s, 0.0), (-s * float(rng.uniform(0.05, 1)), s * float(rng.uniform(0.05, 2))))[k]


def _request(rng: np.random.Generator, rin: tuple[float, float]) -> tuple[float, float] | None:
    k = rng.random()
    if k < 0.2:
        return None
    g = float(10 ** rng.uniform(-4, 0.3)) if k < 0.5 else float(rng.uniform(0.3, 1.2))
    lo, hi = rin[0] * g * float(rng.uniform(0.5, 1)), rin[1] * g * float(rng.uniform(0.5, 1))
    return (lo, hi + 1e-6) if hi <= lo else (lo, hi)


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (the widened range whose 32-bit products wrap, tests/ops/test_q16_convert.py's by-hand inputs,
    the extreme codes, lengths 1..17) and ``n`` random nodes of either op."""
    ext = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFE, 0xFFFF, 16384, 2, 0xFFFD], np.uint16)
    out = [_node(0, np.array([2, 0xFFFD, 16384, 0], np.uint16).reshape(1, 1, 1, 4), (-1.0, 1.0), (-0.001, 0.001)),
           _node(1, np.array([16384, 32768, 0], np.uint16).reshape(1, 1, 1, 3), (-1.0, 3.0), None)]
    for op in (0, 1):
        for req in (None, (-1.0, 1.0), (-1e-4, 1e-4), (0.0, 0.5), (-3.0, -1.0)):
            out.append(_node(op, ext.reshape(1, 1, 1, -1), (-2.0, 2.0) if op == 0 else (-0.5, 1.5), req))
        for d in (1, 7, 17):
            out.append(_node(op, rng.integers(0, 65536, (1, 1, 1, d), dtype=np.uint16), (-1.0, 1.0), (-0.7, 0.9)))
    for _ in range(n):
        op = int(rng.integers(0, 2))
        rin = _range(rng, op)
        shape = (1, int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 40)))
        out.append(_node(op, rng.integers(0, 65536, shape, dtype=np.uint16), rin, _request(rng, rin)))
    return out


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the uint8 codes, their shape and the float32 range bit for bit
    (a Convert_16_8 input's uint16 bytes read as int16, as the device reads them)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    ins = op_node.case_inputs(g, i)
    op = OPS[int(g["hdr"][i, 0])]
    if op == "Convert_16_8":
        ins[0] = ins[0].view(np.int16)
    st, dev = op_node.run_outputs(g, i)
    try:
        got = run_op(op, ins)
    except HexnnError as e:
        return st != 0, f"status {st}, engine error {e}"
    want = [dev[0][1], dev[1][1].view(F), dev[2][1].view(F)]
    q = np.ascontiguousarray(np.asarray(got[0], np.uint8))
    same = (st == 0 and q.tobytes() == want[0].tobytes() and list(op_node.shape4(q)) == dev[0][0]
            and F(np.asarray(got[1]).reshape(-1)[0]) == want[1][0] and F(np.asarray(got[2]).reshape(-1)[0]) == want[2][0])
    if same:
        return True, ""
    d = np.flatnonzero(q.reshape(-1) != want[0]) if q.size == want[0].size else np.array([-1])
    return False, (f"{op}: {d.size} codes differ (first {d[:1].tolist()}), range engine "
                   f"{[float(np.asarray(x).reshape(-1)[0]) for x in got[1:]]} device {[float(x[0]) for x in want[1:]]}")


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
