"""float <-> quint8 conversion: Quantize, AutoQuantize, Dequantize (SEMANTICS.md §1, §2).

Arithmetic is done in float64 on the float32 inputs and the float64 range
that ``adjust_range`` returns; only the reported min/max are rounded to
float32 (they are float outputs of the graph).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import float_data, range_out, u8_codes
from hexnn_import.ops.quant import RANGE_EPS, adjust_range, dequantize_u8, quantize_u8
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


@register("Quantize")
class Quantize(Kernel):
    """float -> quint8 over a given range, zero-fixed by adjust_range (SEMANTICS §2).

    Choices where the documents are silent: the given range only needs to be
    finite with ``min <= max`` - it need not contain 0, since adjust_range
    extends it to 0 (as TensorFlow's QuantizeV2 does); NaN in the data is an
    error, while +-Inf saturates to code 255 / 0.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = ctx.finite_range(mn_arr, mx_arr, "input")
        x = float_data(ctx, data, "input data", allow_inf=True)
        return quantize_adjusted(ctx, x, in_min, in_max)


@register("AutoQuantize")
class AutoQuantize(Kernel):
    """float -> quint8 over the data's own range (SEMANTICS §2).

    ``in_min = min(0, min(x))``, ``in_max = max(0, max(x))``, then
    ``in_max = max(in_max, in_min + 1e-4)``, then as Quantize. NaN or Inf in
    the data is an error (SEMANTICS §2); so is an empty tensor (it has no range).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (data,) = inputs
        x = float_data(ctx, data, "input data")
        if x.size == 0:
            raise ctx.fail("input data is empty, it has no range to quantize over")
        in_min = min(0.0, float(x.min()))
        in_max = max(0.0, float(x.max()))
        in_max = max(in_max, in_min + AUTO_MIN_WIDTH)
        return quantize_adjusted(ctx, x, in_min, in_max)


@register("Dequantize")
class Dequantize(Kernel):
    """quint8 -> float: ``x = (q - zero) * step`` (SEMANTICS §1, §2).

    The range must be sane; the result is computed in float64 and returned as float32.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        q = u8_codes(ctx, data, "input data")
        return (dequantize_u8(q, mn, mx).astype(np.float32),)
