"""QuantizedNeg_8_d32 on nnlib's device code (op_add_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``neg_d32_execute`` (no check): the output range ``(-in_max, -in_min)`` and
``tensor_copy_scaled_d32`` (src/tensor_copy_scaled.c) with scale -32768, offset 32640, run by the asm
``scalemem_d32_hvx`` when input and output share their width alignment (always here). The whole file is compiled
unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``), as for ``op_add_d32``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import op_add_d32
import op_common

NAME = "neg_d32"
OPS = ("QuantizedNeg_8_d32",)
SOURCE = op_add_d32.SOURCE
FUNCTIONS = ["neg_d32_execute", "tensor_copy_scaled_d32"]
C_FILES = op_add_d32.C_FILES
ASM = op_add_d32.ASM
HEADERS = op_add_d32.HEADERS
HARNESS = "harness_neg_d32.c"
INCLUDES = op_add_d32.INCLUDES
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """op_add_d32's unit: the OS stand-ins, the shape_util.c / quantize.c helpers, the whole op_add_d32.c."""
    return op_add_d32.body(nnlib)


def _range(rng: np.random.Generator, kind: int) -> np.ndarray:
    if kind == 0:
        lo = -rng.uniform(0, 8)
        return np.array([lo, lo + rng.uniform(0.01, 16)], F)
    if kind == 1:       # a range that excludes 0 (the device does not check it)
        lo = rng.uniform(0.1, 3)
        return np.array([lo, lo + rng.uniform(0, 3)], F)
    return np.array([-rng.uniform(1e-4, 1e3), rng.uniform(1e-4, 1e3)], F)


def _case(rng: np.random.Generator, shape: list[int] | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 7)), int(rng.integers(1, 14)),
                      int(rng.integers(1, 100))]
    return {"hdr": shape, "range": _range(rng, int(rng.integers(0, 3))),
            "x": rng.integers(0, 256, shape, dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (depth 1 / 31 / 32 / 33 / 64 / 128, width 1-5 (each right padding), all codes 0 / 255, a zero-width
    range) and ``n`` random ones (batches 1-2, height 1-6, width 1-13, depth 1-99)."""
    out = [_case(rng, [1, 2, w, d]) for d in (1, 31, 32, 33, 64, 128) for w in (1, 2, 3, 4, 5)]
    for v in (0, 255):
        c = _case(rng, [2, 3, 7, 40])
        c["x"][:] = v
        out.append(c)
    c = _case(rng, [1, 1, 9, 17])
    c["range"][:] = 0.0
    return out + [c] + [_case(rng) for _ in range(n)]


#: the harness framing of a one-input d32 op (op_common): stdin, golden arrays, the engine's inputs of a case
pack, unpack, case_inputs = op_common.unary_d32_pack, op_common.unary_d32_unpack, op_common.unary_d32_case_inputs


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range -, first difference)."""
    from hexnn_import.ops.registry import run_op

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        q, mn, mx = run_op("QuantizedNeg_8_d32", case_inputs(gold, i))
        _, _, same, ok = op_common.d32_run(q, mn, mx, gold, i)
        exact += ok
        if not ok and not first:
            first = f"case {i} hdr {gold['hdr'][i].tolist()}: status {gold['status'][i]}, range same {same}"
    return len(gold["hdr"]), exact, first
