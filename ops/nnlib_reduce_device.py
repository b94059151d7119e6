"""hexagon_nn's device arithmetic of two reductions to quint8, step for step in numpy (issue 36).

- QuantizedMean_8 (``ops/src/op_reducing_mean.c``, the only registration: ``reducing_mean_execute`` and its
  HVX ``set_output_scaling_for_mean``): the int32 sum of the codes less ``in_offset * n`` (``vsub:sat``) is
  scaled by ``QuantizeMultiplierSmallerThanOne(fminf(0.99999f, in_step / (out_step * n)))``
  (``MultiplyByQuantizedMultiplier``: the ``q6op_Vw_vmpy_VwVw_s1_rnd_sat`` product ``(x * m + 2**30) >> 31``,
  then ``RoundingDivideByPOT``), the output offset added (``vadd:sat``), then ``vpacke`` (the low 16 bits
  of each word) and ``vpack:sat`` to uint8 (include/quantize.h, include/hvx_inlines.h).
- QuantizedAvgPool_8_d32 reducing the image to 1x1 (``ops/src/op_avgpool_d32.c``,
  ``avgpool_reduce_to_1x1_worker_thread`` / ``avgpool_reduce_to_1x1_post_worker_thread``): the output range
  is made from the window sums' own min and max (``quantize_adjust_range``), and the sums are scaled to it by
  a 16-bit fraction and a shift.

Every float expression is float32 as the C evaluates it (:mod:`hexnn_import.ops.nnlib_f32`).
"""
from __future__ import annotations

import numpy as np
from hexnn_import.ops.nnlib_f32 import (
    F,
    level_size_zero,
    quantize_adjust_range,
    roundf_i32,
)

I64 = np.int64
_I32_MIN, _I32_MAX = -2 ** 31, 2 ** 31 - 1


def sat32(v: np.ndarray) -> np.ndarray:
    """int64 values saturated to int32's range (``:sat`` word ops)."""
    return np.clip(v, _I32_MIN, _I32_MAX)


def flt_getexp(x: np.float32) -> int:
    """``flt_getexp`` (include/quantize.h): the biased exponent field less 126."""
    return int((int(np.float32(x).view(np.int32)) >> 23) & 0xFF) - 126


def flt_getfrac(x: np.float32) -> np.float32:
    """``flt_getfrac`` (include/quantize.h): ``x`` with its exponent field forced to 126 (0.5 .. 0.99999)."""
    bits = (int(np.float32(x).view(np.uint32)) & 0x807FFFFF) | (126 << 23)
    return F(np.array(bits, dtype=np.uint32).view(np.float32))


def quantize_multiplier_smaller_than_one(m: np.float32) -> tuple[int, int] | None:
    """``QuantizeMultiplierSmallerThanOne`` (include/quantize.h): ``(multiplier, right_shift)``, or None where
    the C returns -1 (``m`` not in (0, 1))."""
    if not (m > 0 and m < 1):
        return None
    q = flt_getfrac(m)
    shift = -flt_getexp(m)
    q_fixed = int(np.floor(F(q * F(2.0 ** 31))))
    if q_fixed == 2 ** 31:
        q_fixed //= 2
        shift -= 1
    if shift < 0 or q_fixed > 2 ** 31:
        return None
    return q_fixed, shift


def rounding_divide_by_pot(x: np.ndarray, exponent: int) -> np.ndarray:
    """``RoundingDivideByPOT`` (include/quantize.h): ``vasr(sat32(x + rbias), min(exponent, 31))``."""
    rbias = 0 if exponent > 31 else (1 << exponent) >> 1
    return sat32(x + rbias) >> min(exponent, 31)


def multiply_by_quantized_multiplier(x: np.ndarray, multiplier: int, right_shift: int) -> np.ndarray:
    """``MultiplyByQuantizedMultiplier(x, multiplier, -right_shift)`` (include/quantize.h) on int32 values held
    in int64: no left shift, the rounded Q31 product (its saturation binds only at -2**31 * -2**31), then
    the rounding right shift."""
    prod = (x * I64(multiplier) + I64(2 ** 30)) >> 31
    return rounding_divide_by_pot(prod, right_shift)


def mean_codes(total: np.ndarray, n: int, in_min: np.float32, in_max: np.float32,
               out_min: np.float32, out_max: np.float32) -> np.ndarray:
    """quint8 codes of ``set_output_scaling_for_mean`` (op_reducing_mean.c) for int64 code sums ``total`` of
    ``n`` elements each; ``[in_min, in_max]`` is the input range after ``adjust_minmax_for_zero``."""
    _, in_offset = level_size_zero(in_min, in_max)
    _, out_offset = level_size_zero(out_min, out_max)
    ratio = mean_ratio(n, in_min, in_max, out_min, out_max)
    real = MEAN_CAP if np.isnan(ratio) else min(MEAN_CAP, ratio)   # fminf
    q = quantize_multiplier_smaller_than_one(real)
    mult, shift = q if q is not None else (0, 0)      # errlog only: the C goes on with 0, 0
    x = sat32(total.astype(I64) - I64(in_offset) * I64(n))
    s = sat32(multiply_by_quantized_multiplier(x, mult, shift) + I64(out_offset))
    low16 = ((s + 2 ** 15) & 0xFFFF) - 2 ** 15         # vpacke: the even (low) halfword of each word
    return np.clip(low16, 0, 255).astype(np.uint8)     # vpack:sat


#: ``fminf(0.99999f, ...)``: op_reducing_mean.c's cap on the mean's multiplier
MEAN_CAP = F(0.99999)


def mean_ratio(n: int, in_min: np.float32, in_max: np.float32, out_min: np.float32, out_max: np.float32
               ) -> np.float32:
    """``in_step / (out_step * n)`` as ``set_output_scaling_for_mean`` computes it (before the cap)."""
    in_step, _ = level_size_zero(in_min, in_max)
    out_step, _ = level_size_zero(out_min, out_max)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return F(in_step / F(out_step * F(n)))


def mean_cap_shortfall(ratio: np.float32) -> float:
    """Codes by which the cap (:data:`MEAN_CAP`) pulls an output at the far end of the output range towards the
    zero code: ``255 * (1 - 0.99999 / ratio)`` (0 where the ratio is below the cap)."""
    return 0.0 if not ratio > MEAN_CAP else float(255.0 * (1.0 - float(MEAN_CAP) / float(ratio)))


def avgpool_1x1_scaling(sum_min: int, sum_max: int, count: int, range_min: np.float32, range_max: np.float32
                        ) -> tuple[np.float32, np.float32, int, int, int]:
    """``avgpool_reduce_to_1x1_post_worker_thread``'s ranging (op_avgpool_d32.c): ``(out_min, out_max,
    inp_offset, scale_fac, scale_rsh)`` from the least and largest window sum (``count`` taps each)."""
    winsize = F(count)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rdiff = F(F(range_max - range_min) / F(F(255.0) * winsize))
        in_zero = F(-range_min / rdiff)
        g_min = F(min(F(0.0), F(F(sum_min) - in_zero)) * rdiff)
        g_max = max(F(max(F(0.0), F(F(sum_max) - in_zero)) * rdiff), F(g_min + F(0.001)))
        out_range = F(g_max - g_min)
        if F(F(255.1) * rdiff) >= out_range:
            expfac = F(F(F(255.1) * rdiff) / out_range)
            g_min, g_max = F(g_min * expfac), F(g_max * expfac)
        out_min, out_max, _, recip = quantize_adjust_range(g_min, g_max)
        scale_target = F(rdiff * recip)
        rsh = min(31, max(0, -flt_getexp(scale_target)))
        scale_fac = int(np.clip(roundf_i32(F(scale_target * F(2.0 ** (rsh + 15)))), -2 ** 15, 2 ** 15 - 1))
        outz = F(0.0)
        if out_min < 0:
            actual = F(F(scale_fac) * F(2.0 ** -(rsh + 15)))
            outz = F(F(F(-out_min) * recip) / actual)
        offset = int(roundf_i32(F(F(2.0) * F(outz - in_zero))))
    return out_min, out_max, offset, scale_fac, rsh


def avgpool_1x1_codes(sums: np.ndarray, offset: int, scale_fac: int, rsh: int) -> np.ndarray:
    """The post worker's per-sum path: ``vadd`` (wrapping) ``2 * sum + offset``, ``vmpyo:<<1:rnd:sat`` by
    ``scale_fac`` (``(v * scale_fac + 0x4000) >> 15``), ``>> scale_rsh``, ``vasr:rnd:sat`` by 1 to int16,
    ``vpack:sat`` to uint8."""
    v = ((2 * sums.astype(I64) + offset + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31
    v = sat32((v * scale_fac + 0x4000) >> 15) >> rsh
    return np.clip(np.clip((v + 1) >> 1, -2 ** 15, 2 ** 15 - 1), 0, 255).astype(np.uint8)


def avgpool_1x1_zero_lane(count: int, range_min: np.float32, range_max: np.float32) -> int:
    """``roundf_i32(in_zero)``: the sum the worker means to put in depth-padding lanes before taking the min / max.

    The device falls short of it: ``Q6_Q_vand_VR(depthmask, 1)`` sets one byte in four, so ``vmux`` replaces
    only the low byte of those lanes' sums and the sums of whatever the d32 padding holds reach the range. The
    engine does not model padding contents and uses the intended zero sum (tests/ops/test_hvx_network.py)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rdiff = F(F(range_max - range_min) / F(F(255.0) * F(count)))
        return int(roundf_i32(F(-range_min / rdiff)))
