"""float <-> quint8 conversion: Quantize, AutoQuantize, Dequantize (SEMANTICS.md §1, §2).

The registered kernels compute as op_quantize.c does, in float32 (ops/nnlib_f32.py) (issue 19).
``quantize_adjusted`` (float64, ``adjust_range``) is kept for other kernels that quantize a float result.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import float_data, range_out, u8_codes
from hexnn_import.ops.quant import RANGE_EPS, adjust_range, quantize_u8
from hexnn_import.ops.nnlib_f32 import EPS18, F, flt_div_255, quantize_adjust_range, roundf_i32_sat
from hexnn_import.ops.node_cache import node_memo
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: AutoQuantize forces ``in_max >= in_min + AUTO_MIN_WIDTH`` (SEMANTICS §2).
AUTO_MIN_WIDTH = 1e-4


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


def quantize_ref_f32(x: np.ndarray, min_in: np.float32, max_in: np.float32) -> tuple[np.ndarray, ...]:
    """op_quantize.c ``quantize_execute_ref`` / ``autoquantize_execute`` after their range checks, in float32:
    ``(min, max, _, recip) = quantize_adjust_range(min_in, max_in)`` (include/quantize.h), then
    ``q = saturate_u8(roundf_i32((x - min) * recip))`` with the device's saturating cast (+-Inf data gives
    255 / 0, NaN gives 0). Returns (codes, min, max)."""
    out_min, out_max, _, recip = quantize_adjust_range(min_in, max_in)
    xf = np.asarray(x, dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        v = (xf - out_min) * recip
    q = np.clip(roundf_i32_sat(v), 0, 255).astype(np.uint8)
    return (q, *range_out(out_min, out_max))


def quantize_f32_fast(x: np.ndarray, min_in: np.float32, max_in: np.float32) -> tuple[np.ndarray, ...] | None:
    """:func:`quantize_ref_f32` on float32 data without NaN in five passes (speed, issue 37), or None where the
    range's width overflows float32 (there the reference's NaN products decide). The same float32 operations:
    ``v = (x - min) * recip``; a negative ``v`` gives code 0 in the reference (``(int)(v - 0.5f)`` <= 0, then
    clipped), and so does ``max(v, 0) + 0.5f``; for ``v >= 0`` both add the same ``0.5f``; the truncating
    cast commutes with the clip at 255 (an integer), and +Inf data still saturates to 255."""
    out_min, out_max, _, recip = quantize_adjust_range(min_in, max_in)
    if not (np.isfinite(recip) and recip > 0 and np.isfinite(F(out_max - out_min))):
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.subtract(x, out_min, dtype=np.float32)
        np.multiply(v, recip, out=v)
    np.maximum(v, F(0.0), out=v)
    np.add(v, F(0.5), out=v)
    np.minimum(v, F(255.0), out=v)
    return (v.astype(np.uint8), *range_out(out_min, out_max))


@register("Quantize")
class Quantize(Kernel):
    """float -> quint8 over a given range: op_quantize.c ``quantize_execute_ref``, float32 throughout.

    The range is zero-fixed by ``quantize_adjust_range`` (which first widens it to contain 0) and the codes
    are ``saturate_u8(roundf_i32((x - min) * (255f / range)))`` (:func:`quantize_ref_f32`).
    Choices where the C differs or errs: ``quantize_execute_ref`` rejects ranges that exclude 0 or are
    narrower than 1e-8 (``check_range_is_sane``) while the device path (``quantize_execute_opt``) accepts
    them; the engine accepts any finite range with ``min <= max``, widens it to contain 0 and raises a
    zero-width ``[0, 0]`` to ``[0, 1e-18]`` as the device's ``find_scaling_for_hvx_quant`` does
    (``maxv = fmaxf(minv + 1e-18f, max)``). NaN in the data is an error; +-Inf saturates to 255 / 0.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = ctx.finite_range(mn_arr, mx_arr, "input")
        x = float_data(ctx, data, "input data", allow_inf=True)
        mn, mx = F(in_min), F(in_max)
        mx = max(mx, F(min(F(0.0), mn) + EPS18))
        return quantize_ref_f32(x, mn, mx)


@register("AutoQuantize")
class AutoQuantize(Kernel):
    """float -> quint8 over the data's own range: op_quantize.c ``autoquantize_execute``, float32.

    ``min_in = min(0, min(x))``, ``max_in = max(0, max(x))`` (``find_range_of_floats``), then
    ``max_in = fmax(max_in, min_in + 1e-4f)``, then as Quantize (:func:`quantize_ref_f32`). NaN or Inf in
    the data is an error (the C's "bad range for autoquantize"); so is an empty tensor (it has no range).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (data,) = inputs
        if isinstance(data, np.ndarray) and data.dtype == np.float32 and data.size:
            fast = self.fast(ctx, data)
            if fast is not None:
                return fast
        x = float_data(ctx, data, "input data").astype(np.float32)
        if x.size == 0:
            raise ctx.fail("input data is empty, it has no range to quantize over")
        in_min = min(F(0.0), F(x.min()))
        in_max = max(F(0.0), F(x.max()))
        in_max = max(in_max, F(in_min + F(AUTO_MIN_WIDTH)))
        return quantize_ref_f32(x, in_min, in_max)

    def fast(self, ctx: KernelContext, x: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """float32 data (speed, issue 37): its extremes first (NaN propagates through them, Inf shows in them,
        so they also make the reference's checks), then :func:`quantize_f32_fast`; None: the reference path."""
        lo, hi = F(x.min()), F(x.max())
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return None   # the reference path names the NaN or Inf
        in_min, in_max = min(F(0.0), lo), max(F(0.0), hi)
        return quantize_f32_fast(x, in_min, max(in_max, F(in_min + F(AUTO_MIN_WIDTH))))


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
