"""16-bit convolutions: QuantizedConv2d_16x16to32 and QuantizedTransposeConv2d_16x16p32to16
(op texts; SEMANTICS.md §3; code conventions in :mod:`q16_common`).

Both reuse the exact product sums of the 8-bit family - im2col + one
float64 BLAS product (:mod:`hexnn_import.ops.conv_core`) and the scatter
form of the transposed convolution (:mod:`hexnn_import.ops.conv_variants_core`)
- which are exact for any integer codes as long as every partial sum stays
below 2**53. One 16x16 product can reach 65535**2 < 2**32, so a reduction is
limited to 2**21 taps here (:func:`check_exact16`).

**QuantizedConv2d_16x16to32** (text: "Also requires SAME or VALID
padding"; data and filter quint8 or quint16, each by its dtype, filter HWIO).
``acc = sum((x - x_zero) * (w - w_zero))`` overflows int32 easily with
16-bit codes, so - as hexagon_nn does - the sum is scaled down by ``2**s``
with ``s = ceil(log2(fh * fw * din))`` (the taps of one output, padding
included): ``out = sat32((acc + 2**(s-1)) >> s)`` (no rounding when
``s = 0``); the output range is ``+-2**31 * in_step * w_step * 2**s``
(§3's range with the scaled unit). Deviation: hexagon_nn's reference clamps
the shifted sum to *unsigned* 32 bits, which zeroes every negative result;
the signed saturation here is what the qint32 output type means.

**QuantizedTransposeConv2d_16x16p32to16** (13 inputs: channel scales and
groups are not supported by the 16-bit variant, as the text says). Data and
weights quint16, weights ``[O, H, W, I]``, explicit pad ``[top, bottom,
left, right]``, stride shape, qint32 bias (one value per output channel,
zero code 0, one code ``(bias_max - bias_min) / 2**32``), output min/max.
``real = acc * in_step * w_step + bias``, computed in float64 from the
exact sums. Output range: a finite end is used as given; ``-inf`` / ``+inf``
("no output clipping") takes that end from the data of this execution
(``min(0, min(real))`` / ``max(0, max(real)) * 65536/65535``, so the largest
value lands on the top code) - a choice where the text is silent, as
QuantizeDownAndShrinkRange does; the range is then zero-fixed for quint16
(:func:`q16_common.adjust_range_u16`), and ``q = clip(zero +
round_away(real / step), 0, 65535)``. A zero-width range (an all-zero
result) is widened to 1e-4 on an auto end; given ends of zero width are
legal (SEMANTICS §1) and quantize over hexagon_nn's width floor 1e-18
(include/quantize.h ``quantize_uint16``).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.conv_core import (centered_padded, centered_weights, conv_geometry, exact_product, im2col,
                                        read_stride)
from hexnn_import.ops.conv_variants_core import read_pads, transpose_sum
from hexnn_import.ops.kernel_io import i32_codes, range_out
from hexnn_import.ops.kernels.q16_common import (STEPS16, U16_HI, adjust_range_u16, data16, kind_of, quantize_u16,
                                                 range_for, u16_zero)
from hexnn_import.ops.quant import qint32_one
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Largest |(x - x_zero) * (w - w_zero)| of one 16x16 tap.
MAX_TAP16 = 65535 * 65535
#: An auto output end of a degenerate (all-zero) result opens the range to this width.
DEGENERATE_WIDTH = 1e-4
_I32_LO, _I32_HI = -2 ** 31, 2 ** 31 - 1


def check_exact16(ctx: KernelContext, taps: int) -> None:
    """Refuse a reduction whose float64 partial sums could exceed 2**53 (module doc)."""
    if taps * MAX_TAP16 >= 2 ** 53:
        raise ctx.fail(f"reduction over {taps} taps of 16-bit codes is too long to be summed exactly "
                       f"(at most {2 ** 53 // MAX_TAP16})")


def filter4(ctx: KernelContext, w: np.ndarray, layout: str) -> tuple[int, int, int, int]:
    """A 4-D filter shape with no empty dimension."""
    if w.ndim != 4 or min(w.shape) < 1:
        raise ctx.fail(f"filter has shape {list(w.shape)}, expected 4-D {layout} with no empty dimension")
    return w.shape  # type: ignore[return-value]


def scale_shift(taps: int) -> int:
    """``ceil(log2(taps))``: the right shift that keeps a sum of ``taps`` products in 32 bits."""
    return (taps - 1).bit_length()


@register("QuantizedConv2d_16x16to32")
class QuantizedConv2d16x16to32(Kernel):
    """2-D convolution of quint8/quint16 data and filter to qint32, scaled by ``2**-s`` (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc >> s, out_min, out_max)``."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride = inputs
        x = data16(ctx, x_arr, "input data", ("quint8", "quint16"))
        w = data16(ctx, w_arr, "filter", ("quint8", "quint16"))
        xr = range_for(ctx, kind_of(x), in_min, in_max, "input")
        wr = range_for(ctx, kind_of(w), w_min, w_max, "filter")
        fh, fw, din, dout = filter4(ctx, w, "[fh,fw,din,dout]")
        if din != x.shape[3]:
            raise ctx.fail(f"filter depth {din} (filter shape {list(w.shape)}) does not match input depth "
                           f"{x.shape[3]} (input shape {list(x.shape)})")
        taps = fh * fw * din
        check_exact16(ctx, taps)
        g = conv_geometry(ctx, x.shape, w.shape, *read_stride(ctx, stride))
        cols = im2col(centered_padded(x, xr.zero, g), fh, fw, g)
        acc = exact_product(cols, centered_weights(w, wr.zero)).reshape(x.shape[0], g.out_h, g.out_w, dout)
        s = scale_shift(taps)
        if s:
            acc = (acc + (1 << (s - 1))) >> s
        unit = xr.step * wr.step * 2.0 ** s
        out = np.clip(acc, _I32_LO, _I32_HI).astype(np.int32)
        return (out, *range_out(-2.0 ** 31 * unit, 2.0 ** 31 * unit))


def output_ends(ctx: KernelContext, o_min: np.ndarray, o_max: np.ndarray) -> tuple[float, float]:
    """Requested output ends: finite, or -inf (min) / +inf (max) for "no clipping"."""
    lo, hi = ctx.scalar(o_min, "output min"), ctx.scalar(o_max, "output max")
    if math.isnan(lo) or math.isnan(hi) or lo == math.inf or hi == -math.inf:
        raise ctx.fail(f"output range [{lo}, {hi}]: min must be finite or -inf, max finite or +inf")
    if math.isfinite(lo) and math.isfinite(hi) and lo > hi:
        raise ctx.fail(f"output range min {lo} > max {hi}")
    return lo, hi


def u16_output_range(ctx: KernelContext, real: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    """The zero-fixed quint16 output range from requested ends, auto ends following ``real`` (module doc)."""
    auto_lo, auto_hi = lo == -math.inf, hi == math.inf
    if auto_lo:
        lo = min(0.0, float(real.min())) if real.size else 0.0
    if auto_hi:
        hi = max(0.0, float(real.max())) * STEPS16 / U16_HI if real.size else 0.0
    lo, hi = adjust_range_u16(lo, hi)
    if hi - lo <= 0.0 and (auto_lo or auto_hi):
        if auto_hi:
            lo, hi = adjust_range_u16(lo, lo + DEGENERATE_WIDTH)
        else:
            lo, hi = adjust_range_u16(hi - DEGENERATE_WIDTH, hi)
    return lo, hi


@register("QuantizedTransposeConv2d_16x16p32to16")
class QuantizedTransposeConv2d16x16p32to16(Kernel):
    """Transposed convolution of quint16 data + qint32 bias, requantized to quint16 (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q16, out_min, out_max)``."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, pad, stride, b_arr, b_min, b_max, o_min, o_max = inputs
        x = data16(ctx, x_arr, "input data", ("quint16",))
        w = data16(ctx, w_arr, "weights", ("quint16",))
        xr = range_for(ctx, "quint16", in_min, in_max, "input")
        wr = range_for(ctx, "quint16", w_min, w_max, "weights")
        og, fh, fw, wi = filter4(ctx, w, "[O,H,W,I]")
        check_exact16(ctx, fh * fw * wi)
        bias = i32_codes(ctx, b_arr, "bias").reshape(-1)
        if bias.size != og:
            raise ctx.fail(f"bias has {bias.size} elements (shape {list(np.shape(b_arr))}), expected "
                           f"[1,1,1,{og}] (one per output channel)")
        b_one = qint32_one(*ctx.sane_range(b_min, b_max, "bias"))
        lo, hi = output_ends(ctx, o_min, o_max)
        sums = transpose_sum(ctx, x, xr.zero, w, wr.zero, read_pads(ctx, pad), read_stride(ctx, stride), 1)
        real = sums.astype(np.float64) * (xr.step * wr.step) + bias.astype(np.float64) * b_one
        lo, hi = u16_output_range(ctx, real, lo, hi)
        step = (hi - lo) / STEPS16
        return (quantize_u16(real, step, u16_zero(lo, step)), *range_out(lo, hi))
