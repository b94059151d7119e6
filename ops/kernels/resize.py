"""QuantizedResizeBilinear_8 and ResizeNearestNeighbor_8 on flat quint8 tensors (op texts; SEMANTICS.md §6).

Both resample h and w to ``{h_out, w_out}`` (input 1, two int32 values)
with TensorFlow's legacy source coordinates, the ones the texts name
(ResizeNearestNeighbor_8 "implements tf.resize_nearest_neighbor"; only an
align_corners flag is documented, no half-pixel variant):

- ``align_corners`` and ``out > 1``: ``src = y * (in - 1) / (out - 1)``;
- otherwise: ``src = y * in / out`` (align_corners with ``out == 1`` gives
  ``src = 0`` either way).

Source coordinates are exact rationals ``num / den`` computed in integers,
not float32 products as on the device, so a coordinate that float32 would
round across an integer still lands where the exact formula puts it. Codes
are resampled directly: the range passes through unchanged (it must be sane).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import flag_param, int_values
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
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


def resize_inputs(ctx: KernelContext, inputs: tuple[np.ndarray, ...]
                  ) -> tuple[np.ndarray, tuple[int, int], float, float, bool]:
    """Read ``(codes, (h_out, w_out), min, max, align_corners)``; align_corners defaults to 0."""
    data, size, mn_arr, mx_arr = inputs[:4]
    mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
    x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
    if x.shape[1] < 1 or x.shape[2] < 1:
        raise ctx.fail(f"input data has shape {list(x.shape)}, with no pixels to resample")
    align = flag_param(ctx, inputs[4], "align_corners") if len(inputs) > 4 else False
    return x, out_size(ctx, size), mn, mx, align


@register("ResizeNearestNeighbor_8")
class ResizeNearestNeighbor8(Kernel):
    """Nearest-neighbour resize (tf.resize_nearest_neighbor, legacy coordinates).

    Source index per axis: ``floor(src)`` without align_corners,
    ``round_half_away(src)`` with it (the device rounds with C ``round``),
    clipped to ``in - 1``. Inputs: data, size, min, max, optional
    align_corners (0 / non-zero).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x, (h_out, w_out), mn, mx, align = resize_inputs(ctx, inputs)
        _, h, w, _ = x.shape
        idx = []
        for n_in, n_out in ((h, h_out), (w, w_out)):
            num, den = source_coords(n_in, n_out, align)
            # src >= 0, so round-half-away is floor(src + 1/2) = (2*num + den) // (2*den)
            i = (2 * num + den) // (2 * den) if align else num // den
            idx.append(np.minimum(i, n_in - 1))
        y = x[:, idx[0]][:, :, idx[1]]
        return (np.ascontiguousarray(y), *range_out(mn, mx))


@register("QuantizedResizeBilinear_8")
class QuantizedResizeBilinear8(Kernel):
    """Bilinear resize of quint8 codes (tf.resize_bilinear, legacy coordinates).

    Per axis: ``i0 = floor(src)``, ``i1 = min(i0 + 1, in - 1)``,
    ``f = src - i0``; ``v = lerp(lerp(q00, q01, fx), lerp(q10, q11, fx), fy)``
    and ``out = round_half_away(v)``. The texts give no arithmetic, so ``v``
    is evaluated *exactly*: with ``fy = ny/dy``, ``fx = nx/dx`` the integer
    ``V = v * dy * dx`` is formed in int64 and ``out = (2V + D) // (2D)``,
    ``D = dy * dx`` (v >= 0, so this is round-half-away). This equals float64
    interpolation of the codes except that ties are never lost to rounding
    error, and it agrees with the device's 2x fast path, whose averages
    round halves up. Inputs: data, size, min, max, optional align_corners
    (float or int, 0 / non-zero; default 0); the range passes through.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x, (h_out, w_out), mn, mx, align = resize_inputs(ctx, inputs)
        _, h, w, _ = x.shape
        ny, dy = source_coords(h, h_out, align)
        nx, dx = source_coords(w, w_out, align)
        y0, fy = ny // dy, (ny % dy)[None, :, None, None]
        x0, fx = nx // dx, (nx % dx)[None, None, :, None]
        y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
        q = x.astype(np.int64)
        rows0, rows1 = q[:, y0], q[:, y1]
        top = rows0[:, :, x0] * (dx - fx) + rows0[:, :, x1] * fx
        bottom = rows1[:, :, x0] * (dx - fx) + rows1[:, :, x1] * fx
        v = top * (dy - fy) + bottom * fy
        d = dy * dx
        out = (2 * v + d) // (2 * d)
        return (out.astype(np.uint8), *range_out(mn, mx))
