"""Requantize_8to8 and Requantize_8to8_d32 on nnlib's device code (op_requantize.c, whole): cases, I/O, comparison.

nnlib registers ``requantize_8to8_execute`` / ``requantize_8to8_execute_d32`` (no check; each runs its body through
``launcher``): the target range must survive ``quantize_adjust_range`` unchanged (else refused), ``gain = in_range
/ out_range`` (refused when its exponent passes 15), the 8-bit offsets ``saturate_u8(roundf_i32(-255 * min /
range))``, then src/quantize.c's HVX ``nn_requantize_qu8_to_qu8_hvx`` (flat, in chunks of vectors) or
``nn_requantize_qu8_to_qu8_hvx_d32`` (d32 rows, the width padding's whole vectors included). The whole file is
compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``) and src/quantize.c.
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "requant8"
OPS = ("Requantize_8to8", "Requantize_8to8_d32")
SOURCE = "hexagon/ops/src/op_requantize.c"
FUNCTIONS = ["requantize_8to8_execute", "do_requantize_8to8_execute", "requantize_hvx_work_func",
             "requantize_8to8_execute_d32", "do_requantize_8to8_execute_d32", "requantize_d32_hvx_work_func",
             "nn_requantize_qu8_to_qu8_hvx (src/quantize.c)", "nn_requantize_qu8_to_qu8_hvx_d32 (src/quantize.c)"]
C_FILES = ["hexagon/src/quantize.c", "hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c",
           "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("nn_os_fast", "vmemcpy_h", "vmemset_h", "vmemcpy_2d_h", "vmemset_2d_h",
                                           "quantize_h")]
HEADERS = ["quantize.h"]
HARNESS = "harness_requant8.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, src/shape_util.c's ``nn_tensor_addressing_d32`` and its run from the memcpy manager to
    ``nn_tensor_out_prepare_normal_fromshape`` verbatim, then the whole op_requantize.c."""
    return op_common.os_body(nnlib, ["nn_tensor_addressing_d32", "nn_tensor_addressing_d32_16b"], [SOURCE])


def _out_range(rng: np.random.Generator) -> np.ndarray:
    """A target range with an integer zero point (what quantize_adjust_range keeps), mostly."""
    kind = int(rng.integers(0, 6))
    if kind == 0:
        return np.array([0.0, rng.uniform(0.01, 20)], F)
    if kind == 5:      # arbitrary: usually refused
        lo = -rng.uniform(0, 8)
        return np.array([lo, lo + rng.uniform(0.01, 16)], F)
    step = F(rng.uniform(1e-3, 0.2))
    z = int(rng.integers(1, 255))
    return np.array([-z * step, (255 - z) * step], F)


def _case(rng: np.random.Generator, op: int, shape: list[int] | None = None, rin: np.ndarray | None = None,
          rout: np.ndarray | None = None) -> dict:
    shape = shape or [int(rng.choice([1, 1, 2])), int(rng.integers(1, 9)), int(rng.integers(1, 20)),
                      int(rng.integers(1, 100))]
    if rin is None:
        lo, hi = -rng.uniform(0, 10), rng.uniform(0.01, 10)
        if rng.random() < 0.05:          # a range above 0 (the device runs it, its offset saturated)
            lo, hi = rng.uniform(0.01, 2), rng.uniform(2.5, 5)
        rin = np.array([lo, hi], F)
    rout = _out_range(rng) if rout is None else rout
    return {"hdr": [op, *shape], "ranges": np.concatenate([rin, rout]).astype(F),
            "x": rng.integers(0, 256, shape, dtype=np.uint8)}


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases (sizes about the 128-byte vector and the chunking: 1, 127, 128, 129, 4096, 70000 elements; d32
    depths 1 / 32 / 33 / 64 and widths 1-5; equal ranges (gain 1); a target 2^16 times narrower (refused: gain
    exponent); a target without an integer zero point (refused); ranges excluding 0; all codes 0 / 255) and ``n``
    random ones over both ops."""
    same = np.array([-1.0, 3.0], F)
    out = [_case(rng, 0, [1, 1, 1, k], same, np.array([-2.0, 2.0 * 127 / 128], F)) for k in (1, 127, 128, 129, 4096)]
    out.append(_case(rng, 0, [1, 7, 100, 100]))
    out += [_case(rng, 1, [1, 2, w, d]) for d in (1, 32, 33, 64) for w in (1, 2, 3, 4, 5)]
    for op in (0, 1):
        out.append(_case(rng, op, [1, 3, 5, 40], np.array([-2.0, 1.984375], F), np.array([-2.0, 1.984375], F)))
        out.append(_case(rng, op, [1, 3, 5, 40], np.array([-1000.0, 1000.0], F), np.array([0.0, 1e-3], F)))
        out.append(_case(rng, op, [1, 3, 5, 40], np.array([-1.0, 3.0], F), np.array([-1.0, 2.0], F)))
        out.append(_case(rng, op, [1, 3, 5, 40], np.array([0.5, 3.0], F), np.array([0.0, 2.55], F)))
        for v in (0, 255):
            c = _case(rng, op, [1, 2, 3, 50])
            c["x"][:] = v
            out.append(c)
    return out + [_case(rng, int(rng.integers(0, 2))) for _ in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "ranges", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (op, b, h, w, d), ``ranges`` (in min, max, target min, max), the input codes
    (``x`` / ``x_off``), the status, output range and shape, the logical output codes (``codes`` / ``offsets``)."""
    return {**op_common.case_arrays(cases, "ranges"), **op_common.read_d32_runs(out, len(cases))}


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[str, list]:
    """The op and the engine's inputs for case ``i`` (the d32 input with the defaults)."""
    from hexnn_import.ops.d32 import to_d32

    op, b, h, w, d = (int(v) for v in g["hdr"][i])
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
    return OPS[op], [to_d32(x) if op else x, *(np.array(v, F).reshape(1, 1, 1, 1) for v in g["ranges"][i])]


def engine_case(g: dict[str, np.ndarray], i: int) -> tuple[bool, str]:
    """Whether the engine reproduces case ``i`` (codes, shape and range bit for bit, or both refuse)."""
    name, outs, err = op_common.run_case(g, i, case_inputs)
    if outs is None:
        return bool(g["status"][i]), err
    q, mn, mx = outs
    if name.endswith("_d32"):
        q, dev, same, ok = op_common.d32_run(q, mn, mx, g, i)
    else:
        q, dev, same, ok = op_common.flat_run(q, mn, mx, g, i)
    nd = int((np.asarray(q).reshape(-1).astype(int) != dev.reshape(-1)).sum()) if np.size(q) == dev.size else -1
    return ok, f"{name}: status {g['status'][i]}, range same {same}, {nd} codes differ"


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit or both refuse, the first that is not)."""
    return op_common.count_exact(len(gold["hdr"]), lambda i: engine_case(gold, i),
                                 lambda i: f" hdr {gold['hdr'][i].tolist()}")
