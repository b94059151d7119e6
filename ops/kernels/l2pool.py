"""QuantizedL2Pool_8 on flat quint8 tensors, hexagon_nn's C bit for bit (ops/src/op_l2pool.c ``l2pool_execute_ref``).

The C (the flat op's execute and its _ref are the same function):

- out size per axis ``nn_pad_compute_outsize(in, window, stride, padding)``
  (include/nn_graph_padding.h): VALID ``(in - win) / stride + 1`` (0 when the
  window is larger), SAME / SAME_CAFFE ``ceil(in / stride)``; NN_PAD_NA is an
  error, other padding values give size 0;
- window start ``out * stride - adj``, ``adj = ((out - 1) * stride + win - in) / 2``
  (C division, truncating toward zero), clipped to the input; ``count`` taps;
- ``zero = quantize_uint8(0, min, max)``; ``S = sum((x - zero)^2)`` (int32),
  ``recip = (65536 / count + 1) >> 1``, ``s = (S * recip + 0x4000) >> 15``, and
  the code is ``sqrt_fx((uint16) s)`` (include/op_sqrth_8.h: a 16-entry
  quadratic fixed-point square root, x86 branch), in :data:`SQRT_FX` (a table);
- output range ``[0, 255 * ((max - min) / 255f)]`` in float32; any input range.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out, require_4d, shape4, u8_codes
from hexnn_import.ops.nnlib_f32 import F, quantize_uint8
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID, Kernel, KernelContext, register

#: ``lut_sqrt_cn`` of include/op_sqrth_8.h: per 16 ranges of the normalised input, (c0, c1, c2) of
#: ``y = c0 + d*(c1 + d*c2)`` in Q15 (the constants are data the result depends on bit for bit).
_SQRT_COEF = np.array([
    23170, 11582, -2767, 23884, 11237, -2533, 24576, 10920, -2330, 25249, 10629, -2153,
    25905, 10360, -1998, 26545, 10111, -1860, 27170, 9879, -1737, 27780, 9662, -1627,
    28378, 9458, -1529, 28963, 9267, -1440, 29537, 9087, -1359, 30099, 8917, -1286,
    30652, 8757, -1218, 31194, 8605, -1157, 31727, 8460, -1101, 32251, 8322, -1049,
], dtype=np.int64).reshape(16, 3)


def _i16(v: np.ndarray) -> np.ndarray:
    """Assignment to ``int16_t`` (wraps)."""
    return ((v + 32768) & 0xFFFF) - 32768


def _mpyrsat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``mpyrsat``: ``sat16((a * b + 0x4000) >> 15)``."""
    return np.clip((a * b + 0x4000) >> 15, -32768, 32767)


def _sqrt_fx_table() -> np.ndarray:
    """``sqrt_fx(u)`` for every uint16 ``u`` (op_sqrth_8.h, x86 branch), as uint8."""
    u = np.arange(65536, dtype=np.int64)
    bits = np.zeros_like(u)
    nz = u > 0
    bits[nz] = np.floor(np.log2(u[nz])).astype(np.int64) + 1
    expnt = np.where(nz, 16 - bits, 0)                       # cl0: leading zeros in 16 bits
    un = (u << expnt) & 0xFFFF
    rng_, dx = (un >> 11) & 15, un & 0x7FF
    c = _SQRT_COEF[rng_]
    y = c[:, 2]
    y = _i16(_mpyrsat(y, dx) + c[:, 1])
    y = _i16(_mpyrsat(y, dx) + c[:, 0])
    y2 = _i16(_mpyrsat(np.int64(23170), y))
    y = np.where(expnt & 1, y2, y)
    y = _i16(y >> (expnt >> 1))
    y = _i16((y + 64) >> 7)
    y = np.where(y > 255, 255, y)
    return np.where(nz, y & 0xFF, 0).astype(np.uint8)


#: ``sqrt_fx`` of every uint16.
SQRT_FX = _sqrt_fx_table()


def out_size(n: int, win: int, stride: int, padding: int) -> int:
    """``nn_pad_compute_outsize`` (include/nn_graph_padding.h)."""
    if padding == PAD_VALID:
        return (n - win) // stride + 1 if n >= win else 0
    if padding in (PAD_SAME, PAD_SAME_CAFFE, PAD_NA):
        m = n + (stride - 1 if padding != PAD_NA else 0)
        return m // stride if m >= stride else 0
    return 0


def window_bounds(n: int, win: int, stride: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """``(start, end)`` of each output's window, clipped to ``0..n`` (l2pool_execute_ref's ``adj`` rule)."""
    span = (n_out - 1) * stride + win - n
    adj = int(span / 2)                                      # C integer division truncates toward zero
    start = np.arange(n_out, dtype=np.int64) * stride - adj
    return np.maximum(start, 0), np.minimum(start + win, n)


@register("QuantizedL2Pool_8")
class QuantizedL2Pool8(Kernel):
    """L2 pooling exactly as hexagon_nn's C (see the module docstring); inputs data, min, max, window, stride.

    Only the shapes of window (``[1, wh, ww, 1]``) and stride (``[1, sh, sw, 1]``)
    are read; batch or depth != 1 in either is an error, as are NN_PAD_NA and a
    zero stride.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, window, stride = inputs
        mn, mx = F(ctx.scalar(mn_arr, "input min")), F(ctx.scalar(mx_arr, "input max"))
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        wb, wh, ww, wd = shape4(ctx, window, "window shape")
        sb, sh, sw, sd = shape4(ctx, stride, "stride shape")
        if (wb, wd, sb, sd) != (1, 1, 1, 1):
            raise ctx.fail(f"window shape {[wb, wh, ww, wd]} / stride shape {[sb, sh, sw, sd]}: bad window/stride shape")
        if ctx.padding == PAD_NA:
            raise ctx.fail("NN_PAD_NA: this op might pad")
        if sh < 1 or sw < 1:
            raise ctx.fail(f"stride {[sh, sw]} must be >= 1")
        b, h, w, d = x.shape
        oh, ow = out_size(h, wh, sh, ctx.padding), out_size(w, ww, sw, ctx.padding)
        level = F(F(mx - mn) / F(255.0))
        rng_out = range_out(F(0.0), F(F(255.0) * level))
        if oh * ow * b * d == 0:
            return (np.zeros((b, oh, ow, d), np.uint8), *rng_out)
        zero = int(quantize_uint8(F(0.0), mn, mx))
        dev = x.astype(np.int64) - zero
        sq = dev * dev
        # 2-D prefix sums give every clipped window's sum of squares (exact integers)
        cum = np.zeros((b, h + 1, w + 1, d), np.int64)
        cum[:, 1:, 1:] = sq.cumsum(axis=1).cumsum(axis=2)
        y0, y1 = window_bounds(h, wh, sh, oh)
        x0, x1 = window_bounds(w, ww, sw, ow)
        total = (cum[:, y1][:, :, x1] - cum[:, y0][:, :, x1] - cum[:, y1][:, :, x0] + cum[:, y0][:, :, x0])
        count = np.outer(y1 - y0, x1 - x0)                   # >= 1 for SAME/VALID windows
        recip = ((65536 // np.maximum(count, 1)) + 1) >> 1
        s = total * recip[None, :, :, None] + 0x4000
        s = ((s + 2 ** 31) % 2 ** 32) - 2 ** 31               # int32 product (wraps)
        out = SQRT_FX[(s >> 15) & 0xFFFF]
        return (out, *rng_out)
