"""Quantize's registered execute (op_quantize.c ``quantize_execute_opt``, run whole) on the engine's own Quantize cases.

Decision data for issue 36: the engine follows the portable ``quantize_execute_ref`` and is checked bit for bit
against it on the golden rows ``Quantize`` and ``requant_Quantize_ref_device_casts_4_D``
(tests/data/golden/nnlib); this module runs the device path on exactly those inputs, so the replay can say how
many of the engine's own cases the device would change. ``quantize_execute_opt`` and its work item
``quantize_opt`` run unedited with ``find_scaling_for_hvx_quant``, ``adjust_minmax_for_zero`` and the asm
``quantize_floats_to_8b_asm`` (autoquantize_h.S); ``graph_standin.h`` stands in for the graph runtime.
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "quantize_engine_cases"
OPS = ("Quantize",)
SOURCE = "hexagon/ops/src/op_quantize.c"
FUNCTIONS = ["find_scaling_for_hvx_quant", "quantize_opt", "quantize_execute_opt"]
ASM = ["hexagon/asm_src/autoquantize_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_quantize_exec.c"
NNLIB_ROWS = ("Quantize", "requant_Quantize_ref_device_casts_4_D")
#: The cases are the engine's golden inputs, not random ones (``-n`` does not apply).
FIXED_CASES = True


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, then verbatim: ``adjust_minmax_for_zero`` (src/quantize.c), ``struct
    autoquantminmax_info`` and the three functions."""
    src = nnlib / SOURCE
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/quantize.c", ["adjust_minmax_for_zero"])
            + hvx_build.extract_items(src, ["autoquantminmax_info"])
            + hvx_build.extract_functions(src, FUNCTIONS))


def make_cases(rng: np.random.Generator, n: int) -> list[tuple[np.ndarray, np.float32, np.float32]]:
    """(data, min, max) of every case of the engine's Quantize golden rows, in file order (``rng``, ``n`` unused)."""
    root = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "golden" / "nnlib"
    out = []
    for row in NNLIB_ROWS:
        with np.load(root / f"{row}.npz") as f:
            keys = sorted({k.split("_")[0] for k in f.files if k.endswith("_in0")}, key=lambda k: int(k[1:]))
            out += [(f[f"{k}_in0"].astype(np.float32), np.float32(f[f"{k}_in1"].reshape(-1)[0]),
                     np.float32(f[f"{k}_in2"].reshape(-1)[0])) for k in keys]
    return out


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for x, lo, hi in cases:
        parts += [struct.pack("<4i2f", *x.shape, lo, hi), x.astype("<f4").tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: data / codes concatenated with ``offsets``; per case its shape, the input range, status
    (0 ok, 1 the C's Inf / NaN error) and the device's output range."""
    return {"shape": np.array([c[0].shape for c in cases], np.int32),
            "data": np.concatenate([c[0].reshape(-1) for c in cases]), "min": op_common.column(cases, 1, np.float32),
            "max": op_common.column(cases, 2, np.float32), **op_common.read_results(out, [c[0].size for c in cases])}


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and range the engine reproduces bit for bit - or both refuse -, first difference)."""
    off = gold["offsets"]
    s = lambda k, i: gold[k][i].reshape(1, 1, 1, 1)
    return op_common.count_exact(len(off) - 1, lambda i: op_common.engine_case(
        "Quantize", [gold["data"][off[i]:off[i + 1]].reshape(gold["shape"][i]), s("min", i), s("max", i)], gold, i,
        gold["codes"][off[i]:off[i + 1]], show_range=True),
        lambda i: f" range=[{gold['min'][i]!r}, {gold['max'][i]!r}] n={off[i + 1] - off[i]}")
