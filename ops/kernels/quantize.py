"""float <-> quint8 conversion: Quantize, AutoQuantize, Dequantize (SEMANTICS.md §1, §2).

The registered kernels compute as op_quantize.c's device paths do: Quantize / AutoQuantize through the HVX
fixed point of ops/nnlib_hvx_quant.py (issue 36), Dequantize through its HVX product (issue 19).
``quantize_adjusted`` (float64, ``adjust_range``) is kept for other kernels that quantize a float result.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import float_data, range_out, u8_codes
from hexnn_import.ops.quant import RANGE_EPS, adjust_range, quantize_u8
from hexnn_import.ops.nnlib_f32 import EPS18, F, flt_div_255, roundf_i32_sat
from hexnn_import.ops.nnlib_hvx_quant import find_minmax_of_floats, find_scaling_for_hvx_quant, quantize_floats_to_8b
from hexnn_import.ops.node_cache import node_memo
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: The least width portable ``autoquantize_execute`` gives a range (SEMANTICS §2, ``fmax(max, min + 1e-4f)``);
#: the device path does not apply it (AutoQuantize's doc); QuantizeForTest_16b_d32 keeps it.
AUTO_MIN_WIDTH = 1e-4
#: The least width the device's AutoQuantize gives a range: op_quantize.c ``find_scaling_for_hvx_quant``'s
#: ``maxv = fmaxf(minv + 1e-18f, max)`` (its min is never above 0, its max never below 0).
DEVICE_MIN_WIDTH = float(EPS18)


def quantize_adjusted(ctx: KernelContext, x: np.ndarray, in_min: float,
                      in_max: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantize float64 ``x`` over ``adjust_range(in_min, in_max)``; returns (codes, min, max).

    ``q = sat_u8(round_away((x - out_min) / step))``, ``step = (out_max - out_min) / 255``
    (SEMANTICS §2). A zero-width range is legal (SEMANTICS §1): as hexagon_nn's
    Quantize (op_quantize.c ``find_scaling_for_hvx_quant``:
    ``maxv = fmaxf(minv + 1e-18f, max)``) max is first raised to
    ``min(0, in_min) + 1e-18``, so ``[0, 0]`` becomes ``[0, 1e-18]``: 0 gives
    code 0 and any positive value saturates to 255.
    """
    out_min, out_max = adjust_range(in_min, max(float(in_max), min(0.0, float(in_min)) + RANGE_EPS))
    q = quantize_u8(x, out_min, out_max)
    return (q, *range_out(out_min, out_max))


def quantize_device(ctx: KernelContext, x: np.ndarray, neg_min: np.float32, max_in: np.float32,
                    extremes: tuple[float, float] | None = None) -> tuple[np.ndarray, ...]:
    """float32 ``x`` as the device quantizes it on ``{-min, max}`` (ops/nnlib_hvx_quant.py:
    ``find_scaling_for_hvx_quant`` then ``quantize_floats_to_8b_asm``); returns (codes, min, max).

    A range whose width overflows float32 is an error: there the device's zero fix gives a NaN min (its bits
    come from the NaN the division returns, so no fixed answer to follow)."""
    p = find_scaling_for_hvx_quant(neg_min, max_in)
    with np.errstate(over="ignore", invalid="ignore"):
        ok = p is not None and np.isfinite(p.minval) and np.isfinite(F(p.maxval - p.minval))
    if not ok:
        raise ctx.fail(f"range [{-neg_min}, {max_in}]: its width overflows float32 (the device's range is NaN)")
    return (quantize_floats_to_8b(x, p, extremes), *range_out(p.minval, p.maxval))


@register("Quantize")
class Quantize(Kernel):
    """float -> quint8 over a given range: op_quantize.c ``quantize_execute_opt``, the registered device path
    (issue 36: the engine computes what the DSP computes; :func:`quantize_device`).

    The range is ``find_scaling_for_hvx_quant``'s: kept as given when it excludes 0 (``min > 0``), else max
    raised to ``min + 1e-18`` and the zero fixed by ``adjust_minmax_for_zero`` (not for widths under 1e-6).
    The asm's fixed point rounds a half (and up to 0.06 of a code above it) down, and wraps inputs about 2**12
    times the range away (+-Inf included) instead of saturating. Choices: the engine requires finite ends with
    ``min <= max`` and refuses NaN data (the device converts its bits).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        a = np.asarray(data)
        ends = (ctx.scalar(mn_arr, "input min"), ctx.scalar(mx_arr, "input max"))
        if not all(np.isfinite(ends)) and a.dtype.kind == "f" and np.isinf(a).any():
            # a range taken from the data (a floored AutoQuantize, optimizer/bias_fit_floor.py): name the data
            raise ctx.fail(f"input data contains Inf (its range [{ends[0]}, {ends[1]}] is not finite)")
        in_min, in_max = ctx.finite_range(mn_arr, mx_arr, "input")
        if a.dtype != np.float32 or np.isnan(a).any():
            a = float_data(ctx, data, "input data", allow_inf=True).astype(np.float32)
        return quantize_device(ctx, a, F(-F(in_min)), F(in_max))


@register("AutoQuantize")
class AutoQuantize(Kernel):
    """float -> quint8 over the data's own range: op_quantize.c ``autoquantize_execute_opt``
    (``autoquantize_hvx``), the registered device path (issue 36).

    ``{-min, max}`` from ``find_minmax_of_floats_asm`` (maxima from 0, so ``-min`` is +0.0 and the output min
    -0.0 when no value is negative), then as Quantize (:func:`quantize_device`): a range under 1e-4 wide keeps
    its width (``maxv = fmaxf(minv + 1e-18f, max)``: a blank input gives ``[-0.0, 1e-18]``), where the portable
    ``autoquantize_execute`` widens it to 1e-4. A conv reading such a range has a product step near 1e-21, at
    which a fused Supernode refuses its bias (fill_bias_buf "Final too big"): the optimizer's bias fit decides
    at this floor (:data:`DEVICE_MIN_WIDTH`, optimizer/bias_fit_inputs.py) and keeps such convs as chains. NaN
    or Inf in the data is an error (the C's "inf or NaN input"); so is an empty tensor (it has no range).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (data,) = inputs
        x = np.asarray(data)
        if x.dtype != np.float32:
            x = float_data(ctx, data, "input data").astype(np.float32)
        if x.size == 0:
            raise ctx.fail("input data is empty, it has no range to quantize over")
        neg_min, mx = find_minmax_of_floats(x)
        if not (np.isfinite(neg_min) and np.isfinite(mx)):
            float_data(ctx, x, "input data")  # names the NaN or Inf
        return quantize_device(ctx, x, neg_min, mx, (-float(neg_min), float(mx)))


#: Dequantize's feasible steps (op_quantize.c ``dequantize_execute``): an error from ``0x2.0p120`` (2**121) up,
#: all zeros below 2**-126.
STEP_MAX, STEP_MIN = F(2.0 ** 121), F(2.0 ** -126)


def hvx_dequant_table(qzero: int, step: np.float32) -> np.ndarray:
    """The 256 float32 values ``hvx_do_dequantize`` (op_quantize.c, HVX only) gives codes 0..255, modelled
    from ``hvx_dequantize_64xh``'s intrinsics: ``d = q - qzero``; ``prod = |d| * mantissa24(step)``
    (``vmpyie``/``vmpyio``), normalized by its leading-zero count ``c`` (``vcl0``, ``vasl``), ``+0x80`` and
    ``>> 8`` for the 23 mantissa bits; exponent field ``exp(step) + 8 - c``, +1 when the rounding carried out
    of bit 31; the sign of ``d``; ``d = 0`` gives +0.0. That is the exact ``|d| * step`` rounded to float32
    with ties AWAY from zero (a float32 multiply rounds ties to even), bit patterns included where the
    exponent overflows."""
    bits = int(np.asarray(step, dtype=np.float32).view(np.uint32))
    scale = (bits & 0x7FFFFF) | 0x800000
    base = ((bits >> 23) & 0xFF) + 8
    d = np.arange(256, dtype=np.int64) - qzero
    a = np.abs(d)
    prod = a * scale                                   # < 2**32
    c = 32 - np.frexp(prod.astype(np.float64))[1].astype(np.int64)  # leading zeros in 32 bits (prod > 0)
    norm = (prod << np.maximum(c, 0)) & 0xFFFFFFFF
    m = (norm + 0x80) & 0xFFFFFFFF
    e = base - c + (m < 2 ** 31)
    r = np.where(d < 0, 1 << 31, 0) | ((e << 23) & 0xFFFFFFFF) | ((m >> 8) & 0x7FFFFF)
    r = np.where(a == 0, 0, r)
    return r.astype(np.uint32).view(np.float32)


def dequantize_table(mn: np.float32, mx: np.float32) -> np.ndarray | None:
    """The float32 value op_quantize.c ``dequantize_execute`` gives each of the 256 codes on ``[mn, mx]`` on the
    device, or None where it errs ("infeasible quantization step", ``step >= 0x2.0p120``).

    ``step = flt_div_255(fmaxf(1e-18f, max - min))``, ``qzero = saturate_u8(roundf_i32(-min / step))``;
    a step below 2**-126 gives all zeros; otherwise :func:`hvx_dequant_table`."""
    with np.errstate(over="ignore", invalid="ignore"):
        step = flt_div_255(max(EPS18, F(mx - mn)))
    if not step < STEP_MAX:
        return None
    if step < STEP_MIN:
        return np.zeros(256, dtype=np.float32)
    with np.errstate(over="ignore"):
        qzero = int(np.clip(roundf_i32_sat(F(F(-mn) / step)), 0, 255))
    return hvx_dequant_table(qzero, step)


@register("Dequantize")
class Dequantize(Kernel):
    """quint8 -> float: op_quantize.c ``dequantize_execute`` (the HVX path, :func:`dequantize_table`).

    Any finite range is accepted, as in the C (a range that excludes 0 gets ``qzero`` 0 or 255). NaN/Inf
    ends are errors, and so is a range whose width overflows float32 (there the C goes on with a NaN step
    and writes garbage; its own "infeasible step" error needs a step >= 2**121, which no finite width reaches).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        mn, mx = F(ctx.scalar(mn_arr, "input min")), F(ctx.scalar(mx_arr, "input max"))
        if not (np.isfinite(mn) and np.isfinite(mx)):
            raise ctx.fail(f"input range [{mn}, {mx}] is not finite")
        q = u8_codes(ctx, data, "input data")
        # the table depends on the range alone: kept per range in the node state (speed, issue 37)
        table = node_memo(ctx.state, "dequantize", (mn.tobytes(), mx.tobytes()), lambda: dequantize_table(mn, mx))
        out = None if table is None else table[q]
        if out is None:
            raise ctx.fail(f"infeasible quantization step for range [{mn}, {mx}] (its width overflows float32)")
        return (out,)
