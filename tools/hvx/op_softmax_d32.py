"""QuantizedSoftmax_8_d32 on nnlib's device code (op_softmax_d32.c ``softmax_d32_execute``): cases, I/O, comparison.

nnlib registers the op with ``softmax_d32_execute`` (no check): with no depth padding before the data it runs the
HVX loop ``softmax_operate_hvx_function`` on every depth (no depth-1 / depth-2 / large-depth special cases, unlike
the flat op), the same fixed-point ``2**x``, 16-bit sums and reciprocal as the flat loops, masking the depth padding
out of the row maximum and sum. The whole file is compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/``,
``graph_os_standin.c``, as ``op_neg_d32``); the padding bytes of the input are filled with a per-case byte, so a
result that read them would show. The engine's op is the flat model's HVX loop on the logical data
(hexnn_import/ops/nnlib_softmax_device.py).
"""
from __future__ import annotations

import pathlib
import struct

import hvx_build
import numpy as np
import op_common

NAME = "softmax_d32"
OPS = ("QuantizedSoftmax_8_d32",)
SOURCE = "hexagon/ops/src/op_softmax_d32.c"
FUNCTIONS = ["softmax_d32_execute", "softmax_d32_run_thread", "softmax_operate_hvx_function"]
C_FILES = ["hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "histogram_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_softmax_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, ``nn_tensor_addressing_d32`` / ``nn_tensor_out_prepare_normal_fromshape`` (src/shape_util.c)
    verbatim, then the whole op_softmax_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_addressing_d32", "nn_tensor_out_prepare_normal_fromshape"], [SOURCE],
                             mcmanager=False)


def _case(rng: np.random.Generator, shape: list[int] | None = None, beta: float | None = None) -> dict:
    if shape is None:
        b, h, w = int(rng.choice([1, 1, 2])), int(rng.integers(1, 7)), int(rng.integers(1, 14))
        depths = [int(rng.integers(1, 100)), int(rng.integers(1, 400)), 32 * int(rng.integers(1, 5))]
        shape = [b, h, w, int(rng.choice(depths))]
    s = F(10 ** rng.uniform(-1, 1.5))
    lo = F(-s * rng.uniform(0, 1))
    hi = F(lo + s * rng.uniform(0.3, 2))
    if beta is None:
        beta = 1.0 if rng.random() < 0.6 else float(10 ** rng.uniform(-1, 0.5))
    n_in = 4 if beta != 1.0 or rng.random() < 0.7 else 3
    x = rng.integers(0, 256, shape, dtype=np.uint8)
    if rng.random() < 0.3:
        x = np.minimum(x, rng.integers(1, 256)).astype(np.uint8)
    return {"hdr": shape, "n_in": n_in, "fill": int(rng.integers(0, 256)), "range": np.array([lo, hi, beta], F), "x": x}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (depth 1 / 2 / 3 / 31 / 32 / 33 / 64 / 100 at widths 1-5; every code in a row; beta 0; a range
    times beta past the device's limit; all codes equal) and ``n`` random ones (batches 1-2, height 1-6, width 1-13,
    depth 1-399, beta 1 or 0.1-3)."""
    out = [_case(rng, [1, 2, w, d]) for d in (1, 2, 3, 31, 32, 33, 64, 100) for w in (1, 2, 3, 4, 5)]
    c = _case(rng, [1, 1, 1, 256]); c["x"][:] = np.arange(256, dtype=np.uint8).reshape(c["x"].shape); out.append(c)
    c = _case(rng, [1, 2, 3, 40], beta=0.0); out.append(c)
    c = _case(rng, [1, 1, 2, 50], beta=30.0); c["range"][:2] = (-1000.0, 1000.0); out.append(c)
    for v in (0, 255):
        c = _case(rng, [2, 2, 5, 45]); c["x"][:] = v; out.append(c)
    return out + [_case(rng) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    parts = [struct.pack("<i", len(cases))]
    for c in cases:
        parts += [struct.pack("<6i", *c["hdr"], c["n_in"], c["fill"]), c["range"].tobytes(), c["x"].tobytes()]
    return b"".join(parts)


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: op_common's one-input d32 record plus ``n_inputs``, ``fill`` and ``beta``."""
    gold = op_common.unary_d32_unpack(out, [{**c, "range": c["range"][:2]} for c in cases])
    gold["n_inputs"] = np.array([c["n_in"] for c in cases], np.int32)
    gold["fill"] = np.array([c["fill"] for c in cases], np.int32)
    gold["beta"] = np.array([c["range"][2] for c in cases], F)
    return gold


def case_inputs(g: dict[str, np.ndarray], i: int) -> list:
    """The engine's inputs for case ``i``: the d32 input (default layout), its range, beta when the case has it."""
    ins = op_common.unary_d32_case_inputs(g, i)
    return [*ins, np.array(g["beta"][i], F).reshape(1, 1, 1, 1)][:g["n_inputs"][i]]


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range, or both refuse -, first difference)."""
    from hexnn_import.errors import HexnnError
    from hexnn_import.ops.registry import run_op

    exact, first = 0, ""
    for i in range(len(gold["hdr"])):
        try:
            q, mn, mx = run_op("QuantizedSoftmax_8_d32", case_inputs(gold, i))
        except HexnnError as e:
            ok, msg = bool(gold["status"][i]), f"engine error {e}"
        else:
            _, _, same, ok = op_common.d32_run(q, mn, mx, gold, i)
            msg = f"status {gold['status'][i]}, range same {same}"
        exact += ok
        if not ok and not first:
            first = f"case {i} hdr {gold['hdr'][i].tolist()}: {msg}"
    return len(gold["hdr"]), exact, first
