"""Box_Decoder_f on nnlib's device code (op_box_decoder.c, whole): cases, I/O, comparison.

nnlib registers ``box_decoder_execute_f`` (no check): per box, float32 anchor sizes and centres, the deltas
divided by the 4 scales, include/float_mathops.h ``fast_exp`` of the size deltas, the centres as one fused
multiply-add each (clang contracts ``delta * size + centre`` for v66), the corners. The file is compiled whole and
unedited with nnlib's own ``nn_graph.h``; the node run by ``harness_node.c``. The engine follows it in
``ops/kernels/detect_bbox.py``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_node

NAME = "box_decoder"
OPS = ("Box_Decoder_f",)
SOURCE = "hexagon/ops/src/op_box_decoder.c"
FUNCTIONS = ["box_decoder_execute_f"]
C_FILES = [*op_node.NODE_C_FILES]
ASM = list(op_node.NODE_ASM)
HEADERS = list(op_node.NODE_HEADERS)
HARNESS = "harness_node.c"
INCLUDES = list(op_node.NODE_INCLUDES)
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """:func:`op_node.node_body` of the op file."""
    return op_node.node_body(nnlib, SOURCE, OPS)


def _node(deltas: np.ndarray, anchors: np.ndarray, scales) -> dict:  # type: ignore[no-untyped-def]
    ins = [deltas.astype(F), anchors.astype(F), np.asarray(scales, F).reshape(1, 1, 1, 4)]
    return {"op": 0, "padding": 0, "ins": ins, "caps": [4 * int(deltas.size)], "runs": 1}


def _anchors(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    lo = rng.uniform(-0.2, 1.0, shape[:-1] + (2,))
    return np.concatenate([lo, lo + rng.uniform(0.001, 1.0, lo.shape)], axis=-1)


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (zero deltas, exp's argument from -90 to 90 - where fast_exp's int32 cast saturates -, a scale
    of 1 and of 0.1) and ``n`` random nodes (batches 1-2, 1-300 boxes, the SSD scales 10, 10, 5, 5 or random)."""
    out = []
    a = _anchors(rng, (1, 1, 8, 4))
    out.append(_node(np.zeros((1, 1, 8, 4)), a, [10, 10, 5, 5]))
    t = np.linspace(-90, 90, 4 * 61).reshape(1, 1, 61, 4)
    out += [_node(t, _anchors(rng, t.shape), [1, 1, 1, 1]), _node(t / 10, _anchors(rng, t.shape), [0.1, 0.1, 1, 1])]
    for _ in range(n):
        shape = (int(rng.integers(1, 3)), 1, int(rng.integers(1, 300)), 4)
        scales = [10, 10, 5, 5] if rng.random() < 0.5 else list(rng.uniform(0.5, 20, 4))
        out.append(_node(rng.normal(0, float(rng.choice([0.5, 2, 8])), shape), _anchors(rng, shape), scales))
    return out


pack = op_node.pack
unpack = op_node.unpack


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i``: the float32 boxes and their shape bit for bit."""
    return op_node.engine_run(OPS[0], g, i, (F,))


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_node.count(gold, lambda i: engine_case(gold, i))
