"""AutoQuantize on nnlib's device code (op_quantize.c ``autoquantize_execute_opt``): cases, harness I/O, golden arrays.

nnlib registers ``AutoQuantize`` with ``autoquantize_execute_opt``, whose vector-thread work ``autoquantize_hvx``
finds the data's range with the assembly ``find_minmax_of_floats_asm``, picks the output range and a fixed-point
scaling with ``find_scaling_for_hvx_quant`` (``adjust_minmax_for_zero``, src/quantize.c) and converts with
``quantize_floats_to_8b_asm`` (both asm in hexagon/asm_src/autoquantize_h.S); all run unedited
(``graph_standin.h`` stands in for the graph runtime). The engine follows the portable ``autoquantize_execute``.
The cases include the inputs of the engine's own AutoQuantize golden rows (tests/data/golden/nnlib).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "autoquantize"
OPS = ("AutoQuantize",)
SOURCE = "hexagon/ops/src/op_quantize.c"
FUNCTIONS = ["find_scaling_for_hvx_quant", "autoquantize_hvx", "autoquantize_execute_opt"]
ASM = ["hexagon/asm_src/autoquantize_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h"]
HARNESS = "harness_autoquantize.c"
NNLIB_ROWS = ("AutoQuantize", "requant_AutoQuantize_ref_4_D")
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, then verbatim: ``adjust_minmax_for_zero`` (src/quantize.c), ``struct autoquant_info``
    and the three functions (``autoquantize_hvx`` is the second definition, the one nnlib compiles: the first is
    under ``#if 0``)."""
    src = nnlib / SOURCE
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/quantize.c", ["adjust_minmax_for_zero"])
            + hvx_build.extract_functions(src, ["find_scaling_for_hvx_quant"])
            + hvx_build.extract_items(src, ["autoquant_info"])
            + hvx_build.extract_functions(src, ["autoquantize_hvx"], after=r"(?s)^#if 0\nstatic void autoquantize_hvx.*?^#else$")
            + hvx_build.extract_functions(src, ["autoquantize_execute_opt"]))


def _engine_cases(root: pathlib.Path) -> list[np.ndarray]:
    """The inputs of the engine's own AutoQuantize golden rows (against nnlib's portable C)."""
    out = []
    for row in NNLIB_ROWS:
        with np.load(root / "tests" / "data" / "golden" / "nnlib" / f"{row}.npz") as f:
            out += [f[k].astype(np.float32) for k in sorted(f.files, key=lambda k: (len(k), k)) if k.endswith("_in0")]
    return out


def make_cases(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Data arrays (4-D): edge cases (all zero, one sign, tiny, huge, +-Inf, NaN, sizes around the asm's
    vectors and its 4096-element block), the engine's own golden inputs, then ``n`` random ones."""
    e = lambda *v: np.array(v, np.float32).reshape(1, 1, 1, -1)
    cases = [e(0), e(*[0] * 100), e(1), e(-1), e(0.5, 1, 2), e(-3, -2, -1), e(1e-30, -1e-30), e(1e-40, 3e-41),
             e(1e30, -1e30), e(3e38, -3e38), e(np.inf, 1), e(-np.inf, 1), e(np.nan, 1), e(1, np.nan),
             e(*np.arange(-128, 128) / 255.0), e(*np.arange(0, 256) / 255.0 * 6), e(*(np.arange(256) + 0.5) / 256.0)]
    for size in (31, 32, 33, 127, 128, 129, 4095, 4096, 4097, 9000):
        cases.append(rng.uniform(-1, 3, size).astype(np.float32).reshape(1, 1, 1, -1))
    cases += _engine_cases(pathlib.Path(__file__).resolve().parents[2])
    for _ in range(n):
        s = 10 ** rng.uniform(-4, 4)
        lo = -s * rng.uniform(0, 1) if rng.random() < 0.8 else s * rng.uniform(0, 0.5)
        hi = lo + s * rng.uniform(0.01, 1.5)
        if rng.random() < 0.1:
            lo, hi = -hi, -lo
        shape = tuple(int(v) for v in rng.integers(1, 7, 3)) + (int(rng.integers(1, 24)),)
        cases.append(rng.uniform(lo, hi, shape).astype(np.float32))
    return cases


def pack(cases: list[np.ndarray]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for x in cases:
        parts += [struct.pack("<4i", *x.shape), x.astype("<f4").tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Golden arrays: data / codes concatenated with ``offsets``, per case its shape, status (0 ok, 1 the C's
    Inf / NaN error) and the device's output range."""
    return {"shape": np.array([c.shape for c in cases], np.int32), "data": np.concatenate([c.reshape(-1) for c in cases]),
            **op_common.read_results(out, [c.size for c in cases])}


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and range the engine reproduces bit for bit - or both refuse -, first difference)."""
    off = gold["offsets"]
    return op_common.count_exact(len(off) - 1, lambda i: op_common.engine_case(
        "AutoQuantize", [gold["data"][off[i]:off[i + 1]].reshape(gold["shape"][i])], gold, i,
        gold["codes"][off[i]:off[i + 1]], show_range=True), lambda i: f" n={off[i + 1] - off[i]}")
