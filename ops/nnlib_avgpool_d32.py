"""hexagon_nn's device arithmetic of QuantizedAvgPool_8_d32 where the output is not 1x1, step for step in numpy
(issue 36; the 1x1 reduction is :mod:`hexnn_import.ops.nnlib_reduce_device`).

``avgpool_execute`` (ops/src/op_avgpool_d32.c) plans the pool with ``setup_integral_buffer_plan``
(src/integral_buffer.c: the input trimmed where strides skip it, an output dimension of 1 made a window over the
whole (trimmed) input, windows wider than the input shrunk, edge-padding scales) and then takes one of:

- a 3x3 window, stride 1, input at least 2x2 (and the input's d32 padding room enough to "zap" it,
  ``padding_is_enough_to_zap``): the edges are padded in place with the rounded mean of the two nearest rows
  (``row_zap_2rows``, top then bottom) and then columns (asm ``avgpool_zap_lr``), and asm
  ``avgpool_slice_hvx_3x3_stride1`` sums 9 taps and scales by 3641 (``(s * 3641 + 0x4000) >> 15``);
- a 2x2 window, stride-w 2: the flat QuantizedAvgPool_8's result (the device's bytes, op row
  ``QuantizedAvgPool_8_d32``);
- otherwise the integral buffer (``avgpool_process_slice_hvx``, include/nn_integral_buffer.h): 256 x the running
  sums with a zero row and column, edge-padding rows and columns extrapolated by a 15-bit scale
  ``-p / (w - p)`` (``integ_buf_find_padding_scales``, ``Q6_Vw_vmpyo_VwVh_s1_rnd_sat``), and each window's sum
  shifted to 16 bits, scaled by a 15-bit mantissa and shifted by 6 (``consumer_run_row_hvx``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.ops.windows import Axis

I64 = np.int64


@dataclass(frozen=True)
class PlanAxis(Axis):
    """One axis of ``setup_integral_buffer_plan``: a window axis (input length used, window, stride, output
    length, padding before / after) and the 'infeasible' padding count."""

    infeas: int


def plan_axis(size: int, window: int, stride: int, out: int, before: int, after: int) -> PlanAxis:
    """The plan along one axis from the C's output size and padding (src/integral_buffer.c): trim the input a
    stride > 1 never reaches (no padding after), a window over all of it when the output is 1, else the count of
    padding beyond what the window can hold and the window shrunk where it is wider than the input plus padding."""
    if after == 0 and stride > 1:
        size = min(size, window + (out - 1) * stride)
    infeas = 0
    if out == 1:
        return PlanAxis(size, size, 1, 1, 0, 0, 0)
    if window - 1 - size > 0:
        infeas = window - 1 - size
        shrink = window - max(before, after) - size
        if shrink > 0:
            window, infeas, before, after = window - 2 * shrink, infeas - 2 * shrink, before - shrink, after - shrink
    return PlanAxis(size, window, stride, out, before, after, infeas)


def lut_reciprocal(n: int) -> int:
    """``lut_reciprocal_i32[n - 1]`` (src/hvx_constants.c): 1/n with 31 fraction bits, rounded, capped below 2**31."""
    return min(2 ** 31 - 1, (2 ** 32 // n + 1) // 2)


def padding_scales(n: int, window: int, infeas: int) -> list[int]:
    """``integ_buf_find_padding_scales``: for padding index 1..n, ``-p / (w - p)`` with 15 fraction bits where
    ``p = max(index, infeas + 1)``; -1.0 where ``w - p <= p``."""
    out = []
    for pi in range(1, n + 1):
        p = max(pi, infeas + 1)
        wmp = window - p
        if wmp <= p:
            out.append(-0x8000)
        else:
            recip = (lut_reciprocal(wmp) * p) & 0xFFFFFFFF
            out.append(int(np.int16(-((recip + 0x8000) >> 16))))
    return out


def _mulo(a: np.ndarray, scale: int) -> np.ndarray:
    """``Q6_Vw_vmpyo_VwVh_s1_rnd_sat`` of int32 words by a 16-bit scale: ``(a * s + 0x4000) >> 15``, saturated."""
    return np.clip((a * I64(scale) + 0x4000) >> 15, -2 ** 31, 2 ** 31 - 1)


def _wrap32(v: np.ndarray) -> np.ndarray:
    return ((v + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31


def integral_buffer(x: np.ndarray, rows: PlanAxis, cols: PlanAxis) -> np.ndarray:
    """The integral buffer with its edge padding, ``[b, before + 1 + h + after, before + 1 + w + after, d]``:
    row / column ``before`` is the zero row / column (include/nn_integral_buffer.h ``producer_load_rows_hvx``,
    ``producer_add_bottom_padding_hvx``)."""
    b, h, w, d = x.shape
    r0, c0 = rows.before, cols.before
    buf = np.zeros((b, r0 + 1 + h + rows.after, c0 + 1 + w + cols.after, d), I64)
    buf[:, r0 + 1:r0 + 1 + h, c0 + 1:c0 + 1 + w] = 256 * x.astype(I64).cumsum(1).cumsum(2)
    sw = padding_scales(max(cols.before, cols.after), cols.window, cols.infeas)
    for p in range(1, cols.before + 1):
        buf[:, :, c0 - p] = 0 if p <= cols.infeas else _mulo(buf[:, :, c0 - p + cols.window], sw[p - 1])
    right = c0 + w
    for p in range(1, cols.after + 1):
        delt = buf[:, :, right] - buf[:, :, right - min(w, cols.window - p)]
        buf[:, :, right + p] = buf[:, :, right] - _mulo(_wrap32(delt), sw[p - 1])
    sh = padding_scales(max(rows.before, rows.after), rows.window, rows.infeas)
    for p in range(1, rows.before + 1):
        buf[:, r0 - p] = 0 if p <= rows.infeas else _mulo(buf[:, r0 + rows.window - p], sh[p - 1])
    bottom = r0 + h
    ref0 = bottom - min(rows.window - 1, h)
    for k in range(rows.after):
        delt = buf[:, bottom] - buf[:, ref0 + max(0, k - rows.infeas)]
        buf[:, bottom + 1 + k] = buf[:, bottom] - _mulo(_wrap32(delt), sh[k])
    return buf


def ceiling_log2(v: int) -> int:
    """``ceiling_log2`` (include/quantize.h)."""
    return v - 1 if v < 4 else (v - 1).bit_length()


def integral_codes(x: np.ndarray, rows: PlanAxis, cols: PlanAxis) -> np.ndarray:
    """The integral-buffer path's output codes (``consumer_run_row_hvx``): each window's area sum
    ``vasr:rnd:sat`` by ``recip_shift`` to int16, ``vmpy:<<1:rnd:sat`` by ``recip_mant``, ``vasr:rnd:sat`` by 6
    to uint8 (``recip_shift = ceiling_log2(w_h * w_w) + 1``, ``recip_mant`` = 2**(13 + shift) / size rounded)."""
    buf = integral_buffer(x[:, :rows.size, :cols.size], rows, cols)
    ys = np.arange(rows.out) * rows.stride
    xs = np.arange(cols.out) * cols.stride
    up, dn = buf[:, ys], buf[:, ys + rows.window]
    area = (dn[:, :, xs + cols.window] - up[:, :, xs + cols.window]) - (dn[:, :, xs] - up[:, :, xs])
    size = rows.window * cols.window
    rsh = ceiling_log2(size) + 1
    mant = (((16384 << rsh) & 0xFFFFFFFF) // size + 1) >> 1
    v = np.clip((_wrap32(area) + (1 << (rsh - 1))) >> rsh, -2 ** 15, 2 ** 15 - 1)
    s = np.clip((2 * v * mant + 0x8000) >> 16, -2 ** 15, 2 ** 15 - 1)
    return np.clip((s + 32) >> 6, 0, 255).astype(np.uint8)


def _vavg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``vavg:rnd`` of unsigned bytes (held wider): ``(a + b + 1) >> 1``."""
    return (a + b + 1) >> 1


def zapped_3x3_codes(x: np.ndarray, pad_rows: bool, pad_cols: bool) -> np.ndarray:
    """The asm 3x3 / stride 1 path (``avgpool_process_slice_special``), SAME padding 1 on each side of the axes
    flagged: the input is surrounded by "zapped" rows - the top the rounded mean of rows 0 and 1, the bottom of
    rows h-2 and h-1 (``row_zap_2rows``) - then (those rows included) columns - the left of columns 0 and 1, the
    right of w-1 and w-2 (asm ``avgpool_zap_lr``) - and every 3x3 sum is scaled by ``(s * 3641 + 0x4000) >> 15``
    (asm ``avgpool_slice_hvx_3x3_stride1``; the low byte is kept: at most 255)."""
    z = x.astype(I64)
    if pad_rows:
        z = np.concatenate([_vavg(z[:, :1], z[:, 1:2]), z, _vavg(z[:, -2:-1], z[:, -1:])], axis=1)
    if pad_cols:
        z = np.concatenate([_vavg(z[:, :, :1], z[:, :, 1:2]), z, _vavg(z[:, :, -1:], z[:, :, -2:-1])], axis=2)
    h, w = z.shape[1] - 2, z.shape[2] - 2
    s = sum(z[:, i:i + h, j:j + w] for i in range(3) for j in range(3))
    return (((s * 3641 + 0x4000) >> 15) & 0xFF).astype(np.uint8)


def padding_is_enough_to_zap(rows: PlanAxis, cols: PlanAxis, top: int, bottom: int, left: int, right: int) -> bool:
    """``padding_is_enough_to_zap`` (op_avgpool_d32.c) on the input's d32 padding."""
    if rows.before == rows.after == cols.before == cols.after == 0:
        return True
    lr = max(cols.before, cols.after)
    bot = rows.after + (lr > right)
    return not (rows.before > top or bot > bottom or lr > left or 2 * lr > left + right)
