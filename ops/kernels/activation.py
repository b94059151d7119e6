"""Unary quint8 activations: QuantizedClamp_8, QuantizedNeg_8, QuantizedPRelu_8,
QuantizedPRelu_8_V2 (SEMANTICS.md §1, §6).

Where the documents fix no arithmetic these compute the real result of each
input code and quantize it with round-half-away onto the output range:
exactly (rational tables of :mod:`hexnn_import.ops.exact_q8`) where the
result depends on quint8 codes only, in float64 where a float parameter
(PRelu_8's alphas) enters per element.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.broadcast import broadcast_onto
from hexnn_import.ops.exact_q8 import clip_values, code_values, combine, quantize_values
from hexnn_import.ops.kernel_io import float_data, range_out, u8_codes
from hexnn_import.ops.kernels.add8 import requested_ends
from hexnn_import.ops.quant import (
    adjust_range,
    dequantize_u8,
    quantize_u8,
    sat_u8,
)
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: ctx.state key: the alpha shape PRelu_8_V2 saw first (later executions must keep it).
ALPHA_SHAPE_KEY = "prelu_alpha_shape"


def output_range(ctx: KernelContext, lo: float, hi: float) -> tuple[float, float]:
    """Extend ``[lo, hi]`` to hold 0 and zero-fix it with adjust_range.

    A zero-width result (clamping to ``[0, 0]``, a zero-width input) is legal
    (SEMANTICS §1): it stays ``[0, 0]`` and codes are quantized over
    hexagon_nn's width floor 1e-18 (include/quantize.h ``quantize_uint8``).
    """
    return adjust_range(min(0.0, lo), max(0.0, hi))


@register("QuantizedClamp_8")
class QuantizedClamp8(Kernel):
    """``clip(x, clamp_min, clamp_max)`` on quint8, onto a new range (SEMANTICS §6 style).

    Choices where the documents are silent ("clamp quantized tensor to a new
    range"): the output range is the exact range of the result,
    ``[clip(in_min), clip(in_max)]`` with ``clip`` to ``[clamp_min,
    clamp_max]``, extended to hold 0 and zero-fixed with adjust_range; each
    code is requantized exactly (``round_away`` of the exact rational). An
    infinite clamp bound does not clamp; NaN or ``clamp_min > clamp_max`` is
    an error. Clamping to ``[0, 0]`` gives the output range ``[0, 0]`` and code 0.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, in_mn, in_mx, c_mn, c_mx = inputs
        in_min, in_max = ctx.sane_range(in_mn, in_mx, "input")
        c_lo, c_hi = ctx.scalar(c_mn, "clamp min"), ctx.scalar(c_mx, "clamp max")
        if math.isnan(c_lo) or math.isnan(c_hi) or c_lo > c_hi:
            raise ctx.fail(f"clamp range [{c_lo}, {c_hi}] is not a range with min <= max")
        x = u8_codes(ctx, data, "input data")
        lo, hi = (min(max(v, c_lo), c_hi) for v in (in_min, in_max))
        out = output_range(ctx, lo, hi)
        clipped = clip_values(code_values(in_min, in_max), c_lo if math.isfinite(c_lo) else None,
                              c_hi if math.isfinite(c_hi) else None)
        return (sat_u8(quantize_values(clipped, *out)[x]), *range_out(*out))


@register("QuantizedNeg_8")
class QuantizedNeg8(Kernel):
    """``-x`` on quint8 (SEMANTICS §6 style).

    Choice where the documents are silent: the output range is the mirrored
    input range ``adjust_range(-in_max, -in_min)``; each code is requantized
    exactly, so a zero-exact input range gives ``q = 255 - x``.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, in_mn, in_mx = inputs
        in_min, in_max = ctx.sane_range(in_mn, in_mx, "input")
        x = u8_codes(ctx, data, "input data")
        out = output_range(ctx, -in_max, -in_min)
        nums, den = code_values(in_min, in_max)
        return (sat_u8(quantize_values((-nums, den), *out)[x]), *range_out(*out))


def prelu_range(in_min: float, in_max: float, alpha_lo: float, alpha_hi: float) -> tuple[float, float]:
    """Exact range of ``x if x >= 0 else alpha * x`` for x in ``[in_min, in_max]``, alpha in ``[alpha_lo, alpha_hi]``."""
    return min(0.0, alpha_hi * in_min), max(in_max, alpha_lo * in_min)


@register("QuantizedPRelu_8")
class QuantizedPRelu8(Kernel):
    """PReLU with float alphas: ``x if x >= 0 else alpha * x`` (SEMANTICS §6 style).

    Choices where the documents are silent: the alphas broadcast one way onto
    the data (``[1,1,1,d]`` per channel, a scalar, or any shape with 1s where
    the data is larger); NaN/Inf alphas are errors. The output range is the
    exact range of the result over the input range and the alphas given
    (:func:`prelu_range`), zero-fixed with adjust_range. The result is
    computed in float64 from the dequantized input and quantized with
    round-half-away.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, in_mn, in_mx, alpha_arr = inputs
        in_min, in_max = ctx.sane_range(in_mn, in_mx, "input")
        x = u8_codes(ctx, data, "input data")
        alpha = float_data(ctx, alpha_arr, "alphas")
        if alpha.size == 0:
            raise ctx.fail("alphas tensor is empty")
        alpha_b = broadcast_onto(ctx, alpha, x.shape, "alphas")
        out = output_range(ctx, *prelu_range(in_min, in_max, float(alpha.min()), float(alpha.max())))
        real = dequantize_u8(x, in_min, in_max)
        result = np.where(real >= 0.0, real, alpha_b * real)
        return (quantize_u8(result, *out), *range_out(*out))


@register("QuantizedPRelu_8_V2")
class QuantizedPRelu8V2(Kernel):
    """PReLU with quint8 alphas (own range), optional output range (SEMANTICS §6 style).

    The alphas broadcast one way onto the data as for QuantizedPRelu_8. "Alpha
    values may change on each execute as long as the alpha tensor size
    remains the same": the alpha shape of the first execution is kept in
    ``ctx.state`` and a later different shape is an error. Output range:
    inputs 6/7 when given (an absent or infinite end takes the default),
    otherwise the exact result range over the alpha values present
    (:func:`prelu_range`), zero-fixed with adjust_range. Each result is
    ``round_away`` of the exact rational, from a 256x256 (x code, alpha code) table.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, in_mn, in_mx, alpha_arr, al_mn, al_mx = inputs[:6]
        in_min, in_max = ctx.sane_range(in_mn, in_mx, "input")
        al_range = ctx.sane_range(al_mn, al_mx, "alpha")
        x = u8_codes(ctx, data, "input data")
        alpha = u8_codes(ctx, alpha_arr, "alphas")
        if alpha.size == 0:
            raise ctx.fail("alphas tensor is empty")
        first = ctx.state.setdefault(ALPHA_SHAPE_KEY, tuple(alpha.shape))
        if tuple(alpha.shape) != first:
            raise ctx.fail(f"alphas shape changed from {list(first)} to {list(alpha.shape)} between executions")
        alpha_b = broadcast_onto(ctx, alpha, x.shape, "alphas")
        lo, hi = requested_ends(ctx, inputs)
        al_real = dequantize_u8(np.array([alpha.min(), alpha.max()]), *al_range)
        d_lo, d_hi = prelu_range(in_min, in_max, float(al_real[0]), float(al_real[1]))
        out = output_range(ctx, d_lo if lo == -math.inf else lo, d_hi if hi == math.inf else hi)
        xv, av = code_values(in_min, in_max), code_values(*al_range)
        prod, den = combine(xv, av, "mul")
        ident = np.multiply.outer(xv[0] * av[1], np.ones(256, dtype=object))
        table = np.where((xv[0] >= 0)[:, None], ident, prod)
        return (sat_u8(quantize_values((table, den), *out)[x, alpha_b]), *range_out(*out))
