"""QuantizedAvgPool_8_d32 on nnlib's device code (op_avgpool_d32.c, whole): cases, I/O, comparison.

nnlib registers the op with ``avgpool_check`` (a zeroed integral-buffer plan) and ``avgpool_execute``: the plan of
src/integral_buffer.c (``setup_integral_buffer_plan``), then one of four paths - the image reduced to 1x1
(``avgpool_reduce_to_1x1_worker_thread`` / ``_post_worker_thread``: window sums, a range made from them), the asm
3x3 / stride 1 slice (``avgpool_slice_hvx_3x3_stride1`` after the edge zaps of asm ``avgpool_zap_lr`` /
``avgpool_zap_row``), the HVX 2x2 / stride-w 2 path, and the HVX integral buffer otherwise. The whole file is
compiled unedited with nnlib's own ``nn_graph.h`` (``include_os/``, ``graph_os_standin.c``). The harness fills
the input's depth-padding lanes with a byte per case (``dfill``), which the 1x1 path reads (see ``compare``).
"""
from __future__ import annotations

import pathlib

import hvx_build
import numpy as np
import op_common

NAME = "avgpool_d32"
OPS = ("QuantizedAvgPool_8_d32",)
SOURCE = "hexagon/ops/src/op_avgpool_d32.c"
FUNCTIONS = ["avgpool_check", "avgpool_execute", "avgpool_worker_thread", "avgpool_reduce_to_1x1_worker_thread",
             "avgpool_reduce_to_1x1_post_worker_thread", "avgpool_2x2_worker_thread_func", "avgpool_2x2_inner_func",
             "avgpool_process_slice_hvx", "avgpool_process_slice_special", "avgpool_slice_hvx_3x3_stride1",
             "avgpool_zap_lr", "avgpool_zap_row", "setup_integral_buffer_plan"]
C_FILES = ["hexagon/src/integral_buffer.c", "hexagon/src/hvx_constants.c", "hexagon/src/nn_os_portable.c", "hexagon/src/nn_pipe_portable.c"]
ASM = [f"hexagon/asm_src/{a}.S" for a in ("avgpool_d32", "nn_os_fast", "vmemset_h", "vmemcpy_h", "vmemcpy_2d_h")]
HEADERS: list[str] = []
HARNESS = "harness_avgpool_d32.c"
INCLUDES = [hvx_build.HERE / "include_os"]
F = np.float32
PAD_SAME, PAD_VALID = 1, 2
#: header fields per case (harness_avgpool_d32.c)
HDR = ("b", "h", "w", "d", "wh", "ww", "sh", "sw", "padding", "dfill")


def body(nnlib: pathlib.Path) -> str:
    """The OS stand-ins, ``nn_tensor_addressing_d32`` (src/shape_util.c) verbatim, the whole op_avgpool_d32.c."""
    return op_common.os_body(nnlib, ["nn_tensor_addressing_d32"], [SOURCE], mcmanager=False)


def _geometry(rng: np.random.Generator, t: int) -> tuple[int, int, int, int]:
    kind = t % 5
    if kind == 0:
        return 2, 2, int(rng.integers(1, 3)), 2
    if kind == 1:
        return 3, 3, 1, 1
    if kind == 2:                                    # the whole image (reduce to 1x1)
        return -1, -1, 1, 1
    return (*(int(v) for v in rng.integers(1, 6, 2)), *(int(v) for v in rng.integers(1, 4, 2)))


def _case(rng: np.random.Generator, t: int, d: int | None = None, dfill: int | None = None) -> dict:
    wh, ww, sh, sw = _geometry(rng, t)
    pad = PAD_SAME if rng.random() < 0.6 else PAD_VALID
    b, h, w = int(rng.choice([1, 1, 2])), int(rng.integers(1, 9)), int(rng.integers(1, 14))
    d = int(rng.integers(1, 80)) if d is None else d
    if wh < 0:
        wh, ww, pad = h, w, PAD_VALID
    if pad == PAD_VALID:
        h, w = max(h, wh), max(w, ww)
    dfill = int(rng.choice([0, 0, int(rng.integers(0, 256))])) if dfill is None else dfill
    lo = F(-rng.uniform(0, 5)) if rng.random() < 0.8 else F(0.0)
    return {"hdr": [b, h, w, d, wh, ww, sh, sw, pad, dfill],
            "range": np.array([lo, lo + F(rng.uniform(0.1, 10))], F),
            "x": rng.integers(0, 256, (b, h, w, d), dtype=np.uint8)}


def _fixed(rng: np.random.Generator, shape: tuple[int, int, int, int], win: tuple[int, int, int, int], pad: int,
           dfill: int = 0) -> dict:
    c = _case(rng, 3)
    c["hdr"] = [*shape, *win, pad, dfill]
    c["x"] = rng.integers(0, 256, shape, dtype=np.uint8)
    return c


def make_cases(rng: np.random.Generator, n: int) -> list[dict]:
    """Edge cases and ``n`` random ones (a fifth each 2x2 / stride-w 2, 3x3 / 1, the whole image; the rest any
    window 1-5, stride 1-3; batches 1-2, height 1-8, width 1-13, depth 1-79; depth padding 0 or a random byte).

    Edges: each fast path on 32 / 33 / 64 channels; a 1x1 window; a window as large as the input; the selfie
    segmentation int8 model's global pools (16 channels of 16x16 and 64 / 128 channels of 8x8 / 32x32 reduced to
    1x1) with depth-padding bytes 0, 0x80 and 0xff; a width-1 / height-1 input under 3x3."""
    out = []
    for win in ((2, 2, 2, 2), (3, 3, 1, 1), (3, 3, 2, 2), (1, 1, 1, 1), (2, 2, 1, 2)):
        for d in (32, 33, 64):
            for pad in (PAD_SAME, PAD_VALID):
                out.append(_fixed(rng, (1, 7, 9, d), win, pad))
    out += [_fixed(rng, (1, 5, 6, 40), (5, 6, 1, 1), PAD_VALID), _fixed(rng, (2, 4, 4, 8), (4, 4, 4, 4), PAD_VALID)]
    for shape in ((1, 16, 16, 16), (1, 8, 8, 64), (1, 32, 32, 16), (1, 4, 4, 128), (2, 3, 5, 48)):
        for dfill in (0, 0x80, 0xFF):
            out.append(_fixed(rng, shape, (shape[1], shape[2], 1, 1), PAD_VALID, dfill))
    out += [_fixed(rng, (1, 1, 6, 20), (3, 3, 1, 1), PAD_SAME), _fixed(rng, (1, 6, 1, 20), (3, 3, 1, 1), PAD_SAME)]
    return out + [_case(rng, t) for t in range(n)]


def pack(cases: list[dict]) -> bytes:
    """The harness's stdin."""
    return op_common.pack_cases(cases, "range", "x")


def unpack(out: bytes, cases: list[dict]) -> dict[str, np.ndarray]:
    """Golden arrays: per case ``hdr`` (:data:`HDR`), the input range, the input codes (``x`` / ``x_off``), the
    status, the output range and shape, the codes (``codes`` / ``offsets``)."""
    return {**op_common.case_arrays(cases, "range"), **op_common.read_d32_runs(out, len(cases))}


def case_inputs(g: dict[str, np.ndarray], i: int) -> tuple[list, int]:
    """(the engine's inputs, padding) for case ``i``: the input laid out as d32 with the defaults, its depth-padding
    lanes holding the case's byte."""
    from hexnn_import.ops.d32 import to_d32

    b, h, w, d, wh, ww, sh, sw, pad, dfill = (int(v) for v in g["hdr"][i])
    x = to_d32(g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d))
    x.fill_padding(0, dfill)
    s = [np.array(v, F).reshape(1, 1, 1, 1) for v in g["range"][i]]
    return [x, *s, np.zeros((1, wh, ww, 1), np.int32), np.zeros((1, sh, sw, 1), np.int32)], pad


def depth_padded_1x1(g: dict[str, np.ndarray], i: int) -> bool:
    """Whether case ``i`` reduces to 1x1 over a depth that is not a multiple of 32 (its last slice has padding
    lanes, which the device's range reads)."""
    return bool(tuple(g["out_shape"][i][1:3]) == (1, 1) and g["hdr"][i][3] % 32 and g["status"][i] == 0)


def masked_lane_model(g: dict[str, np.ndarray], i: int) -> tuple[np.ndarray, np.float32, np.float32]:
    """What ``avgpool_reduce_to_1x1_worker_thread`` gives for a 1x1 case whose depth-padding lanes hold the case's
    byte: the engine's reduce arithmetic (:mod:`hexnn_import.ops.nnlib_reduce_device`) with the padding lanes in
    the least / largest sum as the device forms them - ``Q6_Q_vand_VR(depthmask, 1)`` sets one byte in four, so
    ``vmux`` puts only the low byte of the intended zero sum ``roundf_i32(in_zero)`` into each padding lane and
    the lane keeps the upper bytes of the sum of its own (padding) bytes: (codes, out_min, out_max)."""
    from hexnn_import.ops.kernels.d32_spatial import _span
    from hexnn_import.ops.nnlib_reduce_device import (
        avgpool_1x1_codes,
        avgpool_1x1_scaling,
        avgpool_1x1_zero_lane,
    )
    from hexnn_import.ops.windows import c_axis_geometry

    b, h, w, d, wh, ww, sh, sw, pad, dfill = (int(v) for v in g["hdr"][i])

    class _Ctx:
        padding = pad

    (r0, r1), (c0, c1) = (_span(c_axis_geometry(_Ctx(), n, k, s)) for n, k, s in ((h, wh, sh), (w, ww, sw)))
    x = g["x"][g["x_off"][i]:g["x_off"][i + 1]].reshape(b, h, w, d)
    sums = x[:, r0:r1, c0:c1].sum(axis=(1, 2), keepdims=True, dtype=np.int64)
    count = (r1 - r0) * (c1 - c0)
    lo, hi = F(g["range"][i][0]), F(g["range"][i][1])
    lane = (dfill * count & ~0xFF) | (avgpool_1x1_zero_lane(count, lo, hi) & 0xFF)
    out_min, out_max, offset, fac, rsh = avgpool_1x1_scaling(min(int(sums.min()), lane), max(int(sums.max()), lane),
                                                             count, lo, hi)
    return avgpool_1x1_codes(sums, offset, fac, rsh), out_min, out_max


def compare(gold: dict[str, np.ndarray]) -> tuple[int, int, str]:
    """(cases, cases the engine reproduces bit for bit - codes and range - or both refuse, first difference)."""
    from hexnn_import.ops.registry import run_op

    from hexnn_import.errors import HexnnError

    def one(i: int) -> tuple[bool, str]:
        ins, pad = case_inputs(gold, i)
        try:
            q, mn, mx = run_op("QuantizedAvgPool_8_d32", ins, padding=pad)
        except HexnnError as e:
            return bool(gold["status"][i]), f"engine error {e}"
        q, dev, same, ok = op_common.d32_run(q, mn, mx, gold, i)
        nd = int((q != dev).sum()) if q.shape == dev.shape else -1
        return ok, (f"status {gold['status'][i]} shape {q.shape} vs {dev.shape}; {nd} codes differ; range same "
                    f"{same} dev [{gold['out_min'][i]!r}, {gold['out_max'][i]!r}] engine [{F(mn.ravel()[0])!r}, "
                    f"{F(mx.ravel()[0])!r}]")

    return op_common.count_exact(len(gold["hdr"]), one, lambda i: f" hdr {gold['hdr'][i].tolist()}")
