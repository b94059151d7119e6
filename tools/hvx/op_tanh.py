"""QuantizedTanh_8, QuantizedSigmoid_8 and their _d32 forms on nnlib's device code (op_tanh_d32.c, whole): cases,
I/O, comparison.

nnlib registers all four with ``tanh_d32_check`` and ``tanh_d32_execute``: a per-node lookup table built from the
input range (fixed-point, on the device's HVX), applied by HVX to the flat or d32 data; the output range fixed
(tanh ``[-1, 1]``, sigmoid ``[0, 1]``). The whole file is compiled unedited with nnlib's own ``nn_graph.h``
(``include_os/``, ``graph_os_standin.c``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "tanh"
OPS = ("QuantizedTanh_8", "QuantizedSigmoid_8", "QuantizedTanh_8_d32", "QuantizedSigmoid_8_d32")
SOURCE = "hexagon/ops/src/op_tanh_d32.c"
FUNCTIONS = ["tanh_d32_check", "tanh_d32_execute"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_tanh.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's d32 addressing and its run from the memcpy manager to
    ``nn_tensor_out_prepare_normal_fromshape`` verbatim, then the whole op_tanh_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_addressing_d32", "nn_tensor_addressing_d32_16b"], [SOURCE])


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None, r: list[float] | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 7)), int(rng.integers(1, 12)),
                      int(rng.choice([1, 3, 31, 32, 33, 64, 100, 128, 129]))]
    if r is None:
        m = float(2.0 ** rng.uniform(-4, 5))
        lo = -m * rng.uniform(0, 1) if rng.random() < 0.9 else m * rng.uniform(0.01, 0.5)
        r = [lo, lo + m]
    return {"hdr": [op, *shape], "range": np.array(r, F), "x": rng.integers(0, 256, shape, dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases per op (every code once on symmetric, one-sided, tiny and wide ranges; depths about 32 and 128)
    and ``n`` random ones over the four."""
    out = []
    for op in range(4):
        for r in ([-1.0, 1.0], [-8.0, 8.0], [0.0, 6.0], [-6.0, 0.0], [-1e-3, 1e-3], [-100.0, 100.0], [-3.0, 5.0]):
            c = _case(rng, op, [1, 2, 4, 32], r)
            c["x"] = np.arange(256, dtype=np.uint8).reshape(1, 2, 4, 32)
            out.append(c)
    return out + [_case(rng, int(rng.integers(0, 4))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d), the input range and codes (``x`` / ``x_off``), the status,
    output range and shape, the logical codes (``codes`` / ``offsets``)."""
    return {**op_common.case_arrays(cases, "range"), **op_common.read_d32_runs(out, len(cases))}


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (codes, shape, range bit for bit; or both refuse)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.d32 import to_d32
    from hexnn_import.ops.registry import run_op

    op, b, h, w, d = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
    ins = [to_d32(x) if op >= 2 else x, *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i])]
    try:
        q, mn, mx = run_op(OPS[op], ins)
    except HexnnError as e:
        return bool(g["status"][i]), f"{OPS[op]}: engine error {e}"
    if op >= 2:
        q, dev, same, ok = op_common.d32_run(q, mn, mx, g, i)
    else:
        q, dev, same, ok = op_common.flat_run(q, mn, mx, g, i)
    nd = int((np.asarray(q).reshape(-1) != dev.reshape(-1)).sum()) if np.size(q) == dev.size else -1
    return ok, f"{OPS[op]}: status {g['status'][i]}, range same {same}, {nd} codes differ"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
