"""MirrorPad_8 and MirrorPad_f on nnlib's device code (op_mirrorpad.c, whole): cases, I/O, comparison.

nnlib registers ``mirrorpad_check`` (the padding must be NN_PAD_MIRROR_REFLECT or _SYMMETRIC) and
``mirrorpad_execute_8`` / ``_f``: the pads (a (1, 1, 4, 2) int32 tensor; any pad at or above its dimension refused),
then one work item copying rows, reflected columns and edges with the memcpy manager's HVX ``vmemcpy`` /
``vmemcpy_2d`` (asm ``vmemcpy_h``, ``vmemcpy_2d_h``); MirrorPad_8 copies the range through. The file is compiled whole
and unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``); the node is run by
``harness_node.c``, check() then execute().
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_common
import op_node
import op_pad

NAME = "mirrorpad"
OPS = ("MirrorPad_8", "MirrorPad_f")
SOURCE = "hexagon/ops/src/op_mirrorpad.c"
FUNCTIONS = ["mirrorpad_check", "mirrorpad_execute_8", "mirrorpad_execute_f", "mirrorpad_execute",
             "do_mirrorpad_wrapper"]
C_FILES = op_pad.C_FILES
ASM = op_pad.ASM
HEADERS = ["quantize.h"]
HARNESS = "harness_node.c"
INCLUDES = op_pad.INCLUDES
ROWS = ("move_MirrorPad_8",)
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_copy`` and its run from the memcpy manager on, the whole
    op_mirrorpad.c and the op table."""
    return op_common.os_body(nnlib, ["nn_tensor_copy"], [SOURCE]) + op_node.units(OPS)


def caps(op: int, ins: list[np.ndarray]) -> list[int]:
    """Room for any padded output (pads below the dimensions: at most 3x each), and the range scalars."""
    return [ins[0].itemsize * int(np.prod([3 * s for s in ins[0].shape])) + 256, *([4, 4] if op == 0 else [])]


def _node(op: int, x: np.ndarray, pads: list[int], mode: int) -> dict:
    ins = [x, np.array(pads, np.int32).reshape(1, 1, -1, 2)]
    if op == 0:
        lo = -float(np.float32(np.random.default_rng(len(pads) + x.size).uniform(0, 5)))
        ins += [np.array(lo, F).reshape(1, 1, 1, 1), np.array(lo + 7.5, F).reshape(1, 1, 1, 1)]
    return {"op": op, "padding": mode, "ins": ins, "caps": caps(op, ins), "runs": 1}


def _case(rng: np.random.Generator) -> dict:
    op = int(rng.integers(0, 2))
    shape = [int(rng.choice([1, 1, 2, 3])), int(rng.integers(1, 9)), int(rng.integers(1, 12)),
             int(rng.integers(1, 150))]
    pads = []
    for s in shape:
        top = s if rng.random() < 0.03 else s - 1            # a pad at the dimension: refused
        pads += [int(rng.integers(0, top + 1)) if rng.random() < 0.7 else 0 for _ in range(2)]
    x = rng.integers(0, 256, shape, dtype=np.uint8) if op == 0 else rng.normal(0, 3, shape).astype(F)
    return _node(op, x, pads, int(rng.choice([3, 4])))


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """The portable-C golden row's inputs (24), edge cases (reflect / symmetric on each axis alone, the largest
    pads, depths about the vector: 1, 127, 128, 129; a pad equal to its dimension, a negative pad, a non-mirror
    padding mode, a pads tensor of 3 rows: refused) and ``n`` random nodes over both ops."""
    out = op_node.portable_rows(ROWS[0], {"MirrorPad_8": 0}, caps)
    for op in (0, 1):
        for d in (1, 127, 128, 129):
            x = rng.integers(0, 256, (2, 3, 4, d), dtype=np.uint8) if op == 0 else rng.normal(0, 1, (2, 3, 4, d)).astype(F)
            for mode in (3, 4):
                out += [_node(op, x, [0, 0, 2, 2, 0, 0, 0, 0], mode), _node(op, x, [0, 0, 0, 0, 3, 3, 0, 0], mode),
                        _node(op, x, [1, 1, 0, 0, 0, 0, 0, 0], mode),
                        _node(op, x, [0, 0, 0, 0, 0, 0, d - 1, d - 1], mode)]
        x = rng.integers(0, 256, (1, 3, 4, 5), dtype=np.uint8) if op == 0 else rng.normal(0, 1, (1, 3, 4, 5)).astype(F)
        out += [_node(op, x, [0, 0, 3, 0, 0, 0, 0, 0], 3), _node(op, x, [0, 0, 0, -1, 0, 0, 0, 0], 4),
                _node(op, x, [0, 0, 1, 1, 0, 0, 0, 0], 1), _node(op, x, [0, 0, 1, 1, 1, 1], 3)]
    return out + [_case(rng) for _ in range(n)]


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the output, its shape (and MirrorPad_8's range) bit for bit."""
    op = int(g["hdr"][i, 0])
    return op_node.engine_run(OPS[op], g, i, (np.uint8, F, F) if op == 0 else (F,))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
