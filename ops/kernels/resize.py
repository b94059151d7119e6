"""QuantizedResizeBilinear_8 and ResizeNearestNeighbor_8 on flat quint8 tensors (op texts; SEMANTICS.md §6).

Both resample h and w to ``{h_out, w_out}`` (input 1, two int32 values)
with TensorFlow's legacy source coordinates, the ones the texts name
(ResizeNearestNeighbor_8 "implements tf.resize_nearest_neighbor"; only an
align_corners flag is documented, no half-pixel variant):

- ``align_corners`` and ``out > 1``: ``src = y * (in - 1) / (out - 1)``;
- otherwise: ``src = y * in / out`` (align_corners with ``out == 1`` gives
  ``src = 0`` either way).

Both quint8 kernels follow hexagon_nn's C bit for bit: ResizeNearestNeighbor_8
op_resizenear.c (float32 scale and position, truncated or rounded, see
:func:`nearest_index_c`; the align_corners scale only when both output dims
are > 1), QuantizedResizeBilinear_8 op_resizebilinear.c's dispatch and device
arithmetic (see its class). :func:`out_size` and :func:`source_coords` (exact rationals ``num /
den``) keep the op texts' rules for the float variants (float_image.py).
Codes are resampled directly: the range passes through unchanged.
"""
from __future__ import annotations

import warnings

import numpy as np

from hexnn_import.errors import DeviceDefectWarning
from hexnn_import.ops.int_params import int_values
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.movement_io import copied_range, int32_word0, int32_words, u8_tensor
from hexnn_import.ops.nnlib_f32 import F
from hexnn_import.ops.nnlib_resize_flat import (device_path, general_codes, hvx_align_codes, hvx_refusal, x4_codes,
                                                x4_past_row)
from hexnn_import.ops.registry import Kernel, KernelContext, register


def out_size(ctx: KernelContext, arr: np.ndarray) -> tuple[int, int]:
    """``(h_out, w_out)`` from the size input (two int32 values, each >= 1)."""
    h_out, w_out = int_values(ctx, arr, "output size {h_out, w_out}", (2,))
    if h_out < 1 or w_out < 1:
        raise ctx.fail(f"output size [{h_out}, {w_out}] must be >= 1 in both dimensions")
    return h_out, w_out


def source_coords(n_in: int, n_out: int, align: bool) -> tuple[np.ndarray, int]:
    """Numerators ``num[y]`` (int64) and the common denominator ``den`` of ``src = num / den``."""
    y = np.arange(n_out, dtype=np.int64)
    if align:
        if n_out == 1:
            return np.zeros(1, np.int64), 1
        return y * (n_in - 1), n_out - 1
    return y * n_in, n_out


def nearest_index_c(n_in: int, n_out: int, both_gt1: bool, align: bool) -> np.ndarray:
    """op_resizenear.c source index per output position, in the C's float32 / double arithmetic.

    ``scale = (float)(in-1)/((float)out-1)`` when align_corners and both output dims > 1, else
    ``(float)in/out`` (float32 division); the position ``o*scale`` is a float32 product; without
    align_corners it is truncated, with align_corners (even when the scale is the plain one) it is
    ``min(round(pos), in-1)`` with C ``round`` (half away from zero).
    """
    o = np.arange(n_out, dtype=np.float32)
    if align and both_gt1:
        scale = F(n_in - 1) / F(F(n_out) - F(1.0))
    else:
        scale = F(n_in) / F(n_out)
    pos = o * F(scale)
    if align:
        r = np.floor(pos.astype(np.float64) + 0.5)          # round(): pos >= 0, half away from zero
        return np.minimum(r, n_in - 1).astype(np.int64)
    return pos.astype(np.int64)


@register("ResizeNearestNeighbor_8")
class ResizeNearestNeighbor8(Kernel):
    """Nearest-neighbour resize: op_resizenear.c ``resizenear_8_execute`` (the MT build's workers).

    Inputs: data, size (int32; the C reads ``newdims[0]``, ``newdims[1]`` and ignores further values; 0
    gives an empty tensor, a negative size fails), min, max, optional align_corners (element 0's int32
    bits non-zero, :func:`~hexnn_import.ops.movement_io.int32_word0`). Source indices:
    :func:`nearest_index_c`. The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, size, mn_arr, mx_arr = inputs[:4]
        x = u8_tensor(ctx, data, "input data")
        dims = int32_words(ctx, size, "output size {h_out, w_out}")
        if dims.size < 2:
            raise ctx.fail(f"output size has {dims.size} value(s), nnlib reads 2 (newdims[0], newdims[1])")
        h_out, w_out = int(dims[0]), int(dims[1])
        if h_out < 0 or w_out < 0:
            raise ctx.fail(f"output size [{h_out}, {w_out}] is negative (nnlib: output prepare failed)")
        align = len(inputs) > 4 and int32_word0(inputs[4]) != 0
        b, h, w, d = x.shape
        if h_out == 0 or w_out == 0:
            return (np.zeros((b, h_out, w_out, d), np.uint8), *copied_range(ctx, mn_arr, mx_arr))
        both = h_out > 1 and w_out > 1
        hi, wi = nearest_index_c(h, h_out, both, align), nearest_index_c(w, w_out, both, align)
        y = x[:, hi][:, :, wi]
        return (np.ascontiguousarray(y), *copied_range(ctx, mn_arr, mx_arr))


@register("QuantizedResizeBilinear_8")
class QuantizedResizeBilinear8(Kernel):
    """Bilinear resize of quint8 codes as hexagon_nn's device computes it (ops/src/op_resizebilinear.c).

    ``resizebilinear_qu8_execute``'s dispatch and each path's arithmetic:
    :mod:`hexnn_import.ops.nnlib_resize_flat` (the same size is a copy; the HVX 2x and 4x upscales give the
    portable ``resizebilinear_general``'s codes, computed with clang's fused multiply-adds - the 4x one bar its
    right edge where it reads past the row, followed, with a one-time DeviceDefectWarning -; the align-corners
    4x ``resizebilinear_hvx`` with 7-bit column and 15-bit row weights; refused where the device fails there).
    align_corners (input 4) is "the first 4 bytes as int32 non-zero". The output range is the input range
    copied as given.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, size, mn_arr, mx_arr = inputs[:4]
        mn, mx = ctx.scalar(mn_arr, "input min"), ctx.scalar(mx_arr, "input max")
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        h_out, w_out = int_values(ctx, size, "output size {h_out, w_out}", (2,))
        align = False
        if len(inputs) > 4:
            raw = np.ascontiguousarray(inputs[4])
            if raw.dtype.kind == "f":
                raw = raw.astype(np.float32)
            align = bool(raw.view(np.uint8)[:4].any()) if raw.nbytes >= 4 else bool(raw.any())
        if (h_out, w_out) == x.shape[1:3]:
            return (x.copy(), *range_out(mn, mx))
        if h_out < 0 or w_out < 0 or min(x.shape) < 1:
            raise ctx.fail(f"cannot resize {list(x.shape)} to [{h_out}, {w_out}]")
        path = device_path(x.shape, h_out, w_out, align)
        if path == "hvx":
            why = hvx_refusal(x.shape, h_out)
            if why is not None:
                raise ctx.fail(f"align_corners {list(x.shape)} -> [{h_out}, {w_out}] takes nnlib's resizebilinear_hvx, "
                               f"which fails: {why}")
            return (hvx_align_codes(x, h_out, w_out), *range_out(mn, mx))
        if path == "4x":
            if x4_past_row(x.shape) and not ctx.state.get("resize_4x_told"):
                ctx.state["resize_4x_told"] = True
                warnings.warn(f"{ctx.node} ({ctx.op}): hexagon_nn's resizebilinear_4x (op_resizebilinear.c) takes the "
                              f"right neighbour of each row's last pixel from the bytes after the row when "
                              f"(w_in - 1) * depth is a multiple of 128 ({list(x.shape)}): the next row's first pixel, "
                              f"as here, and past the input tensor on its last row, where the engine keeps the pixel "
                              f"itself", DeviceDefectWarning, stacklevel=2)
            return (x4_codes(x), *range_out(mn, mx))
        if align and min(h_out, w_out) == 1 and not ctx.state.get("resize_nan_told"):
            ctx.state["resize_nan_told"] = True
            warnings.warn(f"{ctx.node} ({ctx.op}): align_corners to an output size of [{h_out}, {w_out}]: hexagon_nn's "
                          f"resizebilinear_general (op_resizebilinear.c) divides by (out - 1) = 0, every position is "
                          f"NaN and every output code 255 on the DSP, as here", DeviceDefectWarning, stacklevel=2)
        return (general_codes(x, h_out, w_out, align), *range_out(mn, mx))
