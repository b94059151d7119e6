"""Range conversions: Quantize_int32, Dequantize_qint32_f, Requantize_8to8 (SEMANTICS.md §1, §2, §4).

(QuantizedBiasAdd_32p32to32 lives in :mod:`hexnn_import.ops.kernels.bias_add`.)"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.kernel_io import i32_codes, range_out, u8_codes
from hexnn_import.ops.quant import adjust_range, round_away, sat16, sat_u8, step_zero
from hexnn_import.ops.nnlib_f32 import EPS18, F, i32_to_f32, roundf_i32_sat
from hexnn_import.ops.node_cache import replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Requantize_8to8 copies codes (shifted by the zero difference) when ``|gain - 1|`` is below this (§4).
UNIT_GAIN_TOLERANCE = 6.1e-5


@register("Quantize_int32")
class QuantizeInt32(Kernel):
    """float -> qint32: op_quantize.c ``quantize32_execute``, float32 as there.

    ``m = fmaxf(-min, max)``; ``recip = (float)(0x1.0p24 / (double)(m - -m))``;
    ``q = roundf_i32(x * recip)`` (float32 product and sum, the device's saturating cast: beyond int32 ->
    INT32_MIN / INT32_MAX, NaN -> -1); output range ``(-m * 256f, m * 256f)``. Any finite range is
    accepted (the C checks none). A zero-width range ``m = 0`` gives an infinite ``recip`` as in the C:
    0 -> -1 (0 * inf is NaN), positive -> INT32_MAX, negative -> INT32_MIN, range ``[-0, 0]``. NaN data
    gives -1 as the device does; +-Inf saturates.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = F(ctx.scalar(mn_arr, "input min")), F(ctx.scalar(mx_arr, "input max"))
        if not (np.isfinite(in_min) and np.isfinite(in_max)):
            raise ctx.fail(f"input range [{in_min}, {in_max}] is not finite")
        m = max(F(-in_min), in_max)
        width = float(F(m - F(-m)))
        recip = F(2.0 ** 24 / width) if width != 0.0 else F(np.inf)
        x = np.asarray(data)
        if x.dtype.kind not in "biuf":
            raise ctx.fail(f"input data has dtype {x.dtype}, expected float data")
        with np.errstate(invalid="ignore", over="ignore"):
            q = roundf_i32_sat(x.astype(np.float32) * recip)
        return (q.astype(np.int32), *range_out(F(-m * F(256.0)), F(m * F(256.0))))


@register("Dequantize_qint32_f")
class DequantizeQint32F(Kernel):
    """qint32 -> float: op_quantize.c ``dequantize_i32_execute``, float32 as there.

    ``step = fmaxf(1e-18f, max - min) / 2**32``; ``x = (float)q * step`` (the int32 code rounded to
    float32 first). Any finite range is accepted (the C checks none).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        mn, mx = F(ctx.scalar(mn_arr, "input min")), F(ctx.scalar(mx_arr, "input max"))
        if not (np.isfinite(mn) and np.isfinite(mx)):
            raise ctx.fail(f"input range [{mn}, {mx}] is not finite")
        step = F(max(EPS18, F(mx - mn)) / F(2.0 ** 32))
        q = i32_codes(ctx, data, "input data")
        return (i32_to_f32(q) * step,)


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

    The input range may be any finite one with min <= max: one that excludes 0 runs as on the device
    (op_requantize.c ``do_requantize_8to8_execute`` checks no input range; its 8-bit offset
    ``saturate_u8(roundf_i32(-255 * min / range))`` saturates to 0 or 255, the zero code :func:`step_zero`
    clamps to; issue 36). The requested output range must be sane and already
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
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        data, in_mn, in_mx, out_mn, out_mx = inputs
        in_range = ctx.finite_range(in_mn, in_mx, "input")   # 0 outside it: the offset saturates (issue 36)
        out_range = ctx.sane_range(out_mn, out_mx, "requested output")
        fixed = adjust_range(*out_range)
        if fixed != out_range:
            raise ctx.fail(f"requested output range [{out_range[0]}, {out_range[1]}] has no exact zero code "
                           f"(adjust_range would make it [{fixed[0]}, {fixed[1]}])")
        x = u8_codes(ctx, data, "input data")
        q = requantize_8to8_codes(ctx, x, in_range, out_range)
        mn, mx = range_out(*out_range)
        if x is data:
            # each code maps to one code: later runs with the same ranges look the 256 codes up (node_cache.Replay;
            # speed, issue 37)
            table = requantize_8to8_codes(ctx, np.arange(256, dtype=np.uint8), in_range, out_range)
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda x_new: (table.take(x_new), mn, mx))
        return (q, mn, mx)
