"""HeatmapMaxKP_f and QuantizedHeatmapMaxKP_8: keypoint peaks of heatmaps (hexagon_nn_ops.txt).

Per batch ``b`` and heatmap ``m`` (heatmaps ``[B, H, W, M]``, or ``[B, M, H, W]``
when is_NCHW != 0; H, W >= 2): the first position of the largest value, then
a sub-pixel estimate from its 3x3 neighbourhood (edges mirrored: the row
above row 0 is row 1, likewise for columns), as hexagon_nn does: with
``B = (f[1,2]-f[1,0], f[2,1]-f[0,1])`` (twice the gradient) and
``A = -Hessian`` (``A00 = 2f11 - f12 - f10``, ``A11 = 2f11 - f21 - f01``,
``A01 = -(f00 - f02 - f20 + f22)/4``), solve ``A d = B / 2``. The solve is
refused (offset 0, peak ``f11``) when ``A00*A11 <= 0`` or
``det < 1e-5 + 1e-5 * A00*A11``. An offset longer than 1.5 on either axis is
scaled down to 1.5 and the peak is then ``f11 + (d.B - d.A.d) / 2``;
otherwise ``f11 + d.B / 4``. The position maps into the rectangle
``{xlo, ylo, xhi, yhi}`` of the batch: ``x = xlo + max(xhi - xlo, 1) / W *
(ix + 0.5 + dx)`` (likewise y). Rectangles ``[1, 1, B, 4]`` give peaks
``[1, 1, B, M]`` and x,y ``[1, B, M, 2]``; ``[B, 1, 1, 4]`` gives ``[B, 1, 1, M]``
and ``[B, 1, M, 2]``.

Quantized variant: windows are dequantized and solved in float64 (hexagon_nn
uses a fixed-point solve; the results agree to its rounding). Rectangles and
x,y are quint16 box codes (zero 0, step 0.125 - the same scale in and out),
so x,y codes are ``xlo + round_away(...)`` on the code values, clipped to
0..65535. Peaks are quantized onto ``adjust_range(min(0, min peak),
max(0, max peak, min peak + 2 * in_step))`` (hexagon_nn's range: it may
exceed the input max), rounding half away from zero.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.detect_io import U16_MAX, u16_codes
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import float_data, range_out, require_4d, u8_codes
from hexnn_import.ops.quant import adjust_range, dequantize_u8, quantize_u8, round_away, step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register

DETER_TOL_ABS = 1e-5
DETER_TOL_REL = 1e-5
MAX_XY_CORR = 1.5


def heatmaps_nhwc(ctx: KernelContext, x: np.ndarray, nchw_arr: np.ndarray) -> np.ndarray:
    """Heatmaps as ``[B, H, W, M]`` (transposed from NCHW when the selector says so); H, W >= 2."""
    x = require_4d(ctx, x, "heatmaps")
    if int_param(ctx, nchw_arr, "is_NCHW") != 0:
        x = x.transpose(0, 2, 3, 1)
    if x.shape[1] < 2 or x.shape[2] < 2 or x.shape[3] < 1:
        raise ctx.fail(f"heatmaps are {x.shape[1]}x{x.shape[2]} ({x.shape[3]} maps): each must be at least 2x2")
    return x


def rect_layout(ctx: KernelContext, rects: np.ndarray, batches: int) -> bool:
    """True for the ``[B, 1, 1, 4]`` rectangle layout, False for ``[1, 1, B, 4]``."""
    s = tuple(np.shape(rects))
    if len(s) != 4 or s[3] != 4 or s[1] != 1 or min(s[0], s[2]) != 1 or max(s[0], s[2]) != batches:
        raise ctx.fail(f"rectangles have shape {list(s)}, expected [1, 1, {batches}, 4] or [{batches}, 1, 1, 4]")
    return s[0] > 1


def peak_windows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First argmax per (batch, map) and its mirrored 3x3 window: ``(iy, ix) [B, M]``, window ``[B, M, 3, 3]``."""
    b, h, w, m = x.shape
    flat = x.transpose(0, 3, 1, 2).reshape(b, m, h * w)
    iy, ix = np.divmod(np.argmax(flat, axis=2), w)
    rows = np.stack([np.where(iy > 0, iy - 1, iy + 1), iy, np.where(iy + 1 < h, iy + 1, iy - 1)], axis=-1)
    cols = np.stack([np.where(ix > 0, ix - 1, ix + 1), ix, np.where(ix + 1 < w, ix + 1, ix - 1)], axis=-1)
    bi = np.arange(b)[:, None, None, None]
    mi = np.arange(m)[None, :, None, None]
    win = x[bi, rows[..., :, None], cols[..., None, :], mi]
    return iy, ix, win.astype(np.float64)


def solve_peak(f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sub-pixel offsets ``(dx, dy)`` and peak estimate from windows ``f [..., 3, 3]`` (module docstring)."""
    b0 = f[..., 1, 2] - f[..., 1, 0]
    b1 = f[..., 2, 1] - f[..., 0, 1]
    a00 = 2 * f[..., 1, 1] - (f[..., 1, 2] + f[..., 1, 0])
    a11 = 2 * f[..., 1, 1] - (f[..., 2, 1] + f[..., 0, 1])
    a01 = -0.25 * ((f[..., 0, 0] - f[..., 0, 2]) - (f[..., 2, 0] - f[..., 2, 2]))
    xp1 = a00 * a11
    det = xp1 - a01 * a01
    ok = (xp1 > 0) & (det >= DETER_TOL_ABS + DETER_TOL_REL * xp1)
    safe_det = np.where(ok, det, 1.0)
    dxv = a11 * b0 - a01 * b1
    dyv = a00 * b1 - a01 * b0
    maxv = np.maximum(np.abs(dxv), np.abs(dyv))
    small = maxv <= MAX_XY_CORR * 2 * safe_det
    scale = np.where(small, 0.5 / safe_det, MAX_XY_CORR / np.where(maxv > 0, maxv, 1.0))
    dx, dy = dxv * scale, dyv * scale
    simple = 0.25 * (dx * b0 + dy * b1)
    full = 0.5 * (dx * (b0 - (dx * a00 + dy * a01)) + dy * (b1 - (dx * a01 + dy * a11)))
    adj = np.where(small, simple, full)
    zero = np.zeros_like(dx)
    return np.where(ok, dx, zero), np.where(ok, dy, zero), f[..., 1, 1] + np.where(ok, adj, zero)


Placed = tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def place(rects: np.ndarray, iy: np.ndarray, ix: np.ndarray, dx: np.ndarray, dy: np.ndarray,
          h: int, w: int) -> Placed:
    """Peak positions in each batch's rectangle ``{xlo, ylo, xhi, yhi}`` as ``((xlo, x - xlo), (ylo, y - ylo))``."""
    r = rects.reshape(-1, 4).astype(np.float64)
    xlen = np.maximum(r[:, 2] - r[:, 0], 1.0)[:, None]
    ylen = np.maximum(r[:, 3] - r[:, 1], 1.0)[:, None]
    return (r[:, 0, None], xlen / w * (ix + 0.5 + dx)), (r[:, 1, None], ylen / h * (iy + 0.5 + dy))


def shaped(peaks: np.ndarray, xy: np.ndarray, by_batch: bool) -> tuple[np.ndarray, np.ndarray]:
    """Output shapes of the two rectangle layouts."""
    b, m = peaks.shape
    if by_batch:
        return peaks.reshape(b, 1, 1, m), xy.reshape(b, 1, m, 2)
    return peaks.reshape(1, 1, b, m), xy.reshape(1, b, m, 2)


@register("HeatmapMaxKP_f")
class HeatmapMaxKPf(Kernel):
    """Float heatmap peaks (float64 arithmetic, float32 outputs)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        hm_arr, rect_arr, nchw_arr = inputs
        x = heatmaps_nhwc(ctx, float_data(ctx, hm_arr, "heatmaps"), nchw_arr)
        by_batch = rect_layout(ctx, rect_arr, x.shape[0])
        rects = float_data(ctx, rect_arr, "rectangles")
        iy, ix, win = peak_windows(x)
        dx, dy, pk = solve_peak(win)
        (x0, xs), (y0, ys) = place(rects, iy, ix, dx, dy, x.shape[1], x.shape[2])
        xy = np.stack([x0 + xs, y0 + ys], axis=-1)
        peaks, xy = shaped(pk, xy, by_batch)
        return peaks.astype(np.float32), xy.astype(np.float32)


@register("QuantizedHeatmapMaxKP_8")
class QuantizedHeatmapMaxKP8(Kernel):
    """quint8 heatmap peaks (requantized onto their own range) and quint16 x,y codes."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        hm_arr, mn_arr, mx_arr, rect_arr, nchw_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "heatmaps")
        q = heatmaps_nhwc(ctx, u8_codes(ctx, hm_arr, "heatmaps"), nchw_arr)
        by_batch = rect_layout(ctx, rect_arr, q.shape[0])
        rects = u16_codes(ctx, rect_arr, "rectangles")
        iy, ix, win = peak_windows(q)
        dx, dy, pk = solve_peak(dequantize_u8(win, mn, mx))
        (x0, xs), (y0, ys) = place(rects, iy, ix, dx, dy, q.shape[1], q.shape[2])
        xy = np.clip(np.stack([x0 + round_away(xs), y0 + round_away(ys)], axis=-1), 0, U16_MAX)
        in_step, _ = step_zero(mn, mx)
        lo = min(0.0, float(pk.min()))
        hi = max(0.0, float(pk.max()), lo + 2 * in_step)
        out_mn, out_mx = adjust_range(lo, hi)
        peaks, xy = shaped(quantize_u8(pk, out_mn, out_mx), xy.astype(np.uint16), by_batch)
        return (peaks, *range_out(out_mn, out_mx), xy)
