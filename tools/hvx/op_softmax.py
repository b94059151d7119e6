"""QuantizedSoftmax_8 on nnlib's device code (op_softmax_d32.c ``softmax_flat_execute``): cases, harness I/O, golden.

nnlib registers the flat op with op_softmax_d32.c's ``softmax_flat_execute``: depth 2 goes to
``softmax_d2_flat_exec`` (a lookup table of the code difference), depth >= 1408 (and >= 5632 bytes) to
``softmax_larged_flat_exec`` (a table from libm's ``expf``: not run here, the Hexagon libm is not available),
other depths to the HVX loops
``softmax_operate_hvx_flat_function`` / ``_notx4_function`` (a fixed-point ``2**x`` polynomial, 16-bit sums and
a reciprocal). The file's functions from ``struct softmax_scaling_parms`` up to its node-ops tables run unedited
(``graph_standin.h`` for the graph runtime). The engine follows this device code lane for lane
(hexnn_import/ops/nnlib_softmax_device.py).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "softmax"
OPS = ("QuantizedSoftmax_8",)
SOURCE = "hexagon/ops/src/op_softmax_d32.c"
FUNCTIONS = ["softmax_flat_execute", "softmax_flat_run_thread", "softmax_operate_hvx_flat_function",
             "softmax_operate_hvx_flat_notx4_function", "softmax_d2_flat_exec", "softmax_larged_flat_exec"]
ASM = ["hexagon/asm_src/histogram_h.S"]
HEADERS = ["hvx_inlines.h", "quantize.h", "nn_asm_ops.h", "hvx_mathops.h", "hexagon_nn_ops.h"]
HARNESS = "harness_softmax.c"
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The graph stand-ins, ``nn_tensor_out_prepare_normal_fromshape`` (src/shape_util.c), ``const_Count128``,
    ``const_Count32`` (src/hvx_constants.c), then op_softmax_d32.c
    verbatim from ``struct softmax_scaling_parms`` to just before ``softmax_d32_free`` (every path's functions;
    the unused d32 ones compile and are dropped)."""
    src = nnlib / SOURCE
    return (f'#include "{hvx_build.HERE / "graph_standin.h"}"\n'
            + hvx_build.extract_functions(nnlib / "hexagon/src/shape_util.c", ["nn_tensor_out_prepare_normal_fromshape"])
            + hvx_build.extract_span(nnlib / "hexagon/src/hvx_constants.c", r"^const uint8_t const_Count128\[128\]", r"^};")
            + hvx_build.extract_span(nnlib / "hexagon/src/hvx_constants.c", r"^const uint8_t const_Count32\[", r"^};")
            + hvx_build.extract_span(src, r"^struct softmax_scaling_parms\s*$", r"^static int softmax_d32_free", inclusive=False))


def make_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """(shape, n_inputs, in_min, in_max, beta, codes): edge cases (depth 1, 2, 3, 4, 128, every code in one row;
    beta 0, tiny, negative and large; a range with min above max; a range too wide for the beta: the C's error;
    depths 1500 and 2000 under 5632 bytes, which the HVX loops take), then ``n`` random cases over every path
    (depths 2..1407 with gcd(depth, 128) below and above 4). Depths from 1408 with 5632 bytes or more
    (``softmax_larged_flat_exec``) are left out: its table comes from libm's ``expf`` / ``expm1f``, whose Hexagon
    bits the harness does not have."""
    allc = np.arange(256, dtype=np.uint8)
    cases = [((1, 1, 1, 256), 3, F(-10), F(10), F(1), allc), ((1, 1, 256, 1), 3, F(-10), F(10), F(1), allc),
             ((1, 1, 128, 2), 4, F(-4), F(4), F(0.5), allc), ((1, 1, 64, 4), 4, F(-1), F(1), F(0), allc),
             ((1, 1, 2, 128), 4, F(-50), F(50), F(3), allc), ((1, 1, 1, 256), 4, F(-1000), F(1000), F(1), allc),
             ((1, 3, 1, 3), 3, F(0), F(1), F(1), allc[:9]), ((1, 1, 2, 128), 4, F(-1000), F(1000), F(100), allc),
             ((1, 2, 3, 1), 4, F(-3), F(5), F(1), allc[:6]), ((1, 1, 4, 64), 4, F(-3), F(5), F(-0.7), allc),
             ((1, 1, 128, 2), 4, F(-3), F(5), F(-2), allc), ((1, 1, 8, 32), 3, F(6), F(-2), F(1), allc),
             ((1, 1, 85, 3), 4, F(-8), F(8), F(1e-9), allc[:255]),
             ((1, 1, 1, 2000), 4, F(-6), F(9), F(1), np.resize(allc[::-3], 2000)),
             ((1, 1, 3, 1500), 3, F(-20), F(4), F(1), np.resize(allc[7::5], 4500))]
    for i in range(n):
        k = rng.random()
        d = (2 if k < 0.15 else int(rng.choice([4, 8, 12, 16, 32, 64, 96, 128, 256])) if k < 0.45
             else int(rng.integers(3, 1408)) if k < 0.5 else int(rng.integers(3, 600)))
        rows = max(1, int(rng.integers(1, max(2, 3000 // d))))
        shape = (1, 1, rows, d) if rng.random() < 0.7 else (1, rows, 1, d)
        s = F(10 ** rng.uniform(-1, 1.7))
        lo = F(-s * rng.uniform(0.2, 1))
        hi = F(lo + s * rng.uniform(0.5, 2))
        beta = F(1) if rng.random() < 0.5 else F(10 ** rng.uniform(-1.5, 0.7))
        n_in = 4 if beta != 1 or rng.random() < 0.3 else 3
        x = rng.integers(0, 256, rows * d, dtype=np.uint8)
        if rng.random() < 0.3:
            x = np.minimum(x, rng.integers(20, 256)).astype(np.uint8)
        cases.append((shape, n_in, lo, hi, beta, x))
    return cases


def pack(cases: list[tuple]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for shape, n_in, lo, hi, beta, x in cases:
        parts += [struct.pack("<5i3f", *shape, n_in, lo, hi, beta), x.tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[tuple]) -> dict[str, np.ndarray]:
    """Golden arrays: codes in / out concatenated with ``offsets``; per case shape, n_inputs, range, beta,
    status (0 ok, 1 the C's error) and the device's output range."""
    col = lambda k, t: op_common.column(cases, k, t)
    return {"shape": col(0, np.int32), "n_inputs": col(1, np.int32), "in_min": col(2, F), "in_max": col(3, F),
            "beta": col(4, F), "data": np.concatenate([c[5] for c in cases]),
            **op_common.read_results(out, [c[5].size for c in cases])}


def case_inputs(g: dict[str, np.ndarray], i: int) -> list[np.ndarray]:
    """The op's inputs for golden case ``i``."""
    s = lambda k: g[k][i].reshape(1, 1, 1, 1)
    x = g["data"][g["offsets"][i]:g["offsets"][i + 1]].reshape(g["shape"][i])
    return [x, s("in_min"), s("in_max"), s("beta")][:g["n_inputs"][i]]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases whose codes and range the engine reproduces bit for bit - or both refuse -, first difference)."""
    off = gold["offsets"]
    return op_common.count_exact(len(off) - 1, lambda i: op_common.engine_case(
        "QuantizedSoftmax_8", case_inputs(gold, i), gold, i, gold["codes"][off[i]:off[i + 1]]),
        lambda i: f" shape={gold['shape'][i].tolist()}")
