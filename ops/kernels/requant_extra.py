"""Range conversions: Quantize_int32, Dequantize_qint32_f, Requantize_8to8,
QuantizedBiasAdd_32p32to32 (SEMANTICS.md §1, §2, §3, §4)."""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.kernel_io import float_data, i32_codes, range_out, u8_codes
from hexnn_import.ops.node_cache import node_cached, replay_get, replay_store
from hexnn_import.ops.quant import RANGE_EPS, adjust_range, qint32_one, round_away, sat16, sat_u8, step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register

INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1
#: Requantize_8to8 copies codes (shifted by the zero difference) when ``|gain - 1|`` is below this (§4).
UNIT_GAIN_TOLERANCE = 6.1e-5


def sat_i32(x: np.ndarray) -> np.ndarray:
    """Clip to the int32 range and return int32."""
    return np.clip(x, INT32_MIN, INT32_MAX).astype(np.int32)


@register("Quantize_int32")
class QuantizeInt32(Kernel):
    """float -> qint32 (SEMANTICS §2).

    ``m = max(-min, max)``; ``q = round_away(x * 2**24 / (2*m))`` in float64;
    output range ``(-256*m, 256*m)`` (so one code is ``m / 2**23``).
    Choices where the documents are silent: the input range only needs finite
    ends with ``min <= max`` (it need not contain 0, as for Quantize); values
    beyond the output range saturate to int32; NaN is an error and +-Inf
    saturates. A zero-width range (``m = 0``) is legal (SEMANTICS §1): ``m``
    is floored at 1e-18, hexagon_nn's width floor (include/quantize.h
    ``quantize_int``: ``range = fmaxf(1e-18f, maxval - minval)``), so 0 gives
    code 0 and the reported range is ``(-256e-18, 256e-18)``.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = ctx.finite_range(mn_arr, mx_arr, "input")
        m = max(-in_min, in_max, RANGE_EPS)
        x = float_data(ctx, data, "input data", allow_inf=True)
        with np.errstate(invalid="ignore", over="ignore"):
            q = round_away(x * (2.0 ** 24 / (2.0 * m)))
        return (sat_i32(q), *range_out(-256.0 * m, 256.0 * m))


@register("Dequantize_qint32_f")
class DequantizeQint32F(Kernel):
    """qint32 -> float with zero offset: ``x = q * (max - min) / 2**32`` (SEMANTICS §2).

    Computed in float64 and returned as float32. The input range must be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = ctx.sane_range(mn_arr, mx_arr, "input")
        q = i32_codes(ctx, data, "input data")
        return ((q.astype(np.float64) * qint32_one(in_min, in_max)).astype(np.float32),)


def requantize_8to8_codes(ctx: KernelContext, x: np.ndarray, in_range: tuple[float, float],
                          out_range: tuple[float, float]) -> np.ndarray:
    """quint8 codes moved from ``in_range`` to ``out_range`` by the fixed-point paths of SEMANTICS §4."""
    in_step, in_zero = step_zero(*in_range)
    out_step, out_zero = step_zero(*out_range)
    if in_step == 0.0 or out_step == 0.0:
        # a zero-width input holds only zeros, a zero-width output can hold nothing else: every
        # code is the output's zero code (SEMANTICS §1; op_requantize.c would compute a NaN/inf gain)
        return np.full(x.shape, out_zero, dtype=np.uint8)
    gain = in_step / out_step
    d = x.astype(np.int64) - in_zero
    if abs(gain - 1.0) < UNIT_GAIN_TOLERANCE:
        return sat_u8(d + out_zero)
    if gain < 1.0:
        gi = int(sat16(np.int64(round_away(gain * 2.0 ** 15))))
        return sat_u8(sat16((2 * d * gi + 2 ** 15) >> 16) + out_zero)
    mant, exp = math.frexp(gain)
    if exp > 15:
        raise ctx.fail(f"gain in_step/out_step = {gain} is too large (frexp exponent {exp} > 15): "
                       f"the output range is more than 2**15 times narrower than the input range")
    gi = int(sat16(np.int64(round_away(mant * 2.0 ** 15))))
    rsh = 15 - exp
    rounding = 2 ** (rsh - 1) if rsh > 0 else 0
    return sat_u8(sat16((d * gi + rounding) >> rsh) + out_zero)


@register("Requantize_8to8")
class Requantize8to8(Kernel):
    """quint8 -> quint8 on a new range (SEMANTICS §4).

    Both ranges must be sane, and the requested output range must already
    hold 0.0 exactly on a code: SEMANTICS §4 makes it an error when
    adjust_range would change it (the op text's "may be expanded" is
    overruled). ``gain = in_step / out_step``: ``|gain - 1| < 6.1e-5`` copies
    codes shifted by the zero difference; ``gain < 1`` and ``gain > 1`` use
    the 16-bit fixed-point multipliers of §4. Choice where §4 is silent: with
    ``gain > 1`` and ``rsh = 15 - exp = 0`` the rounding term ``2**(rsh-1)``
    is taken as 0 (no shift, nothing to round). The output range is the
    requested one. Zero-width ranges are legal (SEMANTICS §1): a zero-width
    input or output gives the output's zero code everywhere (the tensor is all
    zeros; op_requantize.c would divide by the zero width). As there, a
    non-zero output range more than 2**15 times narrower than the input range
    is an error ("Out range too small compared to in range").
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, in_mn, in_mx, out_mn, out_mx = inputs
        in_range = ctx.sane_range(in_mn, in_mx, "input")
        out_range = ctx.sane_range(out_mn, out_mx, "requested output")
        fixed = adjust_range(*out_range)
        if fixed != out_range:
            raise ctx.fail(f"requested output range [{out_range[0]}, {out_range[1]}] has no exact zero code "
                           f"(adjust_range would make it [{fixed[0]}, {fixed[1]}])")
        x = u8_codes(ctx, data, "input data")
        return (requantize_8to8_codes(ctx, x, in_range, out_range), *range_out(*out_range))


@register("QuantizedBiasAdd_32p32to32")
class QuantizedBiasAdd32p32to32(Kernel):
    """qint32 data + qint32 per-channel bias -> qint32 (SEMANTICS §3).

    qint32 codes have zero offset (one code = ``(max - min) / 2**32``, as
    Dequantize_qint32_f reads them), so "rescaling to the wider range" is a
    gain: the operand whose range is narrower (smaller ``max - min``) is
    multiplied by ``one_narrow / one_wide`` (<= 1, computed in float64) and
    rounded half away from zero; then both are added in int64 and saturated
    to int32. The output range is the wider input's range (the data's on a
    tie, where no rescaling happens). Choices where the documents are silent:
    as for QuantizedBiasAdd_8p8to32, the bias holds exactly ``d`` values (one
    per channel of the data's last axis, any shape) broadcast over b, h, w;
    both ranges must be sane; outputs are min then max (catalog note). A
    zero-width bias range means an all-zero bias (adds nothing); a zero-width
    data range with a wider bias range rescales the data by 0 (SEMANTICS §1;
    op_biasadd.c would form a 0/0 gain there).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, bias, in_mn, in_mx, b_mn, b_mx = inputs
        in_range = ctx.sane_range(in_mn, in_mx, "input")
        b_range = ctx.sane_range(b_mn, b_mx, "bias")
        x = i32_codes(ctx, data, "input data")
        b = i32_codes(ctx, bias, "bias data")
        if x.ndim < 1:
            raise ctx.fail("input data is a 0-d array, expected [b,h,w,d]")
        if b.size != x.shape[-1]:
            raise ctx.fail(f"bias has shape {list(b.shape)} ({b.size} values), expected {x.shape[-1]} "
                           f"values, one per channel of input shape {list(x.shape)}")
        one_x, one_b = qint32_one(*in_range), qint32_one(*b_range)

        def build() -> np.ndarray:
            bs = b.reshape(-1).astype(np.int64)
            if one_b == 0.0:  # a zero-width bias range: the bias is all zeros (SEMANTICS §1)
                return np.zeros_like(bs)
            if one_b < one_x:
                bs = round_away(bs * (one_b / one_x)).astype(np.int64)
            return bs

        if one_b > one_x:
            ratio, b_flat = one_x / one_b, b.reshape(-1)
            mn, mx = range_out(*b_range)

            def run(x_new: np.ndarray) -> tuple[np.ndarray, ...]:
                # xs = round_away(x * (one_x / one_b)) in float64, in place: the operations of quant.round_away
                v = np.multiply(x_new, ratio, dtype=np.float64)
                v += np.copysign(0.5, v)
                np.trunc(v, out=v)
                v += b_flat
                np.clip(v, INT32_MIN, INT32_MAX, out=v)
                return v.astype(np.int32), mn, mx
        else:
            # the (rescaled) bias is kept per bias array and ranges (speed, issue 11)
            bs = node_cached(ctx.state, "bias32", (bias,), (in_range, b_range), build)
            mn, mx = range_out(*in_range)

            def run(x_new: np.ndarray) -> tuple[np.ndarray, ...]:
                return add_sat_i32(x_new, bs), mn, mx
        if x is data and b is bias:  # int32 data and bias: replay later runs (node_cache.Replay)
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), run)
        return run(x)


def add_sat_i32(x: np.ndarray, bs: np.ndarray) -> np.ndarray:
    """``sat_i32(x + bs)`` for int32 ``x`` and int64 ``bs`` (last-axis broadcast).

    When the extremes of ``x`` and ``bs`` show the sum cannot leave int32,
    it is added in int32 directly (one pass); otherwise in int64 and clipped.
    """
    if x.size and bs.size:
        lo, hi = int(x.min()) + int(bs.min()), int(x.max()) + int(bs.max())
        if INT32_MIN <= lo and hi <= INT32_MAX and INT32_MIN <= int(bs.min()) and int(bs.max()) <= INT32_MAX:
            return np.add(x, bs.astype(np.int32))
    return sat_i32(np.add(x, bs, dtype=np.int64))
