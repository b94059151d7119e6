"""QuantizedRelu_8 and QuantizedReluX_8 on quint8 codes (SEMANTICS.md §6)."""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.quant import quantize_u8, step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register


@register("QuantizedRelu_8")
class QuantizedRelu8(Kernel):
    """``max(x, zero)`` where ``zero`` is the code of 0.0 in the input range; range passes through.

    SEMANTICS §6 (``zero`` per §1: ``sat_u8(round_away(-min / step))``). The
    input range must be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_codes(ctx, data, "input data")
        _, zero = step_zero(mn, mx)
        return (np.maximum(x, np.uint8(zero)), *range_out(mn, mx))


@register("QuantizedReluX_8")
class QuantizedReluX8(Kernel):
    """``min(max(x, zero), quantize(X))``; range passes through (SEMANTICS §6).

    ``quantize(X) = sat_u8(round_away((X - min) / step))`` over the input
    range (§2). Choices where the documents are silent: ``max`` is applied
    first and ``min`` last, literally as the op text's ``min(max(x,0),X)``,
    so ``X < 0`` gives the code of X everywhere; NaN X is an error, +Inf X
    saturates to code 255 (plain Relu). The output range is the input range
    (it is not narrowed to ``[min, X]``).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, x_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        limit = ctx.scalar(x_arr, "threshold X")
        if math.isnan(limit):
            raise ctx.fail("threshold X is NaN")
        x = u8_codes(ctx, data, "input data")
        _, zero = step_zero(mn, mx)
        q_limit = quantize_u8(np.array([limit]), mn, mx)[0]  # 1-element array: round_away's array path
        return (np.minimum(np.maximum(x, np.uint8(zero)), q_limit), *range_out(mn, mx))
