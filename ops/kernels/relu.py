"""QuantizedRelu_8 and QuantizedReluX_8 on quint8 codes, as hexagon_nn computes them.

Followed (SEMANTICS §0: the C code wins): ``ops/src/op_relu.c:
relu_execute`` / ``reluX_execute`` with the ``relu_kernel`` / ``reluX_kernel``
assembly (asm_src/relu_kernel_h.S: ``vmax`` with the zero code, then ``vmin``
with the limit code). The codes are ``quantize_uint8`` (include/quantize.h,
float32) of 0 and of the limit over the input range; the output range is
the input range copied. Any finite range with min <= max is accepted, also
one that excludes 0 (its zero code is then 0 or 255).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.nnlib_f32 import quantize_uint8
from hexnn_import.ops.registry import Kernel, KernelContext, register


@register("QuantizedRelu_8")
class QuantizedRelu8(Kernel):
    """``max(x, quantize_uint8(0))``; range passes through (``relu_execute``)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(codes, out_min, out_max)``."""
        data, mn_arr, mx_arr = inputs
        mn, mx = ctx.finite_range(mn_arr, mx_arr, "input")
        x = u8_codes(ctx, data, "input data")
        zero = quantize_uint8(0.0, mn, mx)
        return (np.maximum(x, zero), *range_out(mn, mx))


@register("QuantizedReluX_8")
class QuantizedReluX8(Kernel):
    """``min(max(x, quantize_uint8(0)), quantize_uint8(X))``; range passes through (``reluX_execute``).

    ``max`` first and ``min`` last, as the kernel does, so ``X`` below the
    range's minimum gives code 0 everywhere. NaN X is an error; +Inf X
    saturates to code 255 (Hexagon's saturating float->int conversion).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(codes, out_min, out_max)``."""
        data, mn_arr, mx_arr, x_arr = inputs
        mn, mx = ctx.finite_range(mn_arr, mx_arr, "input")
        limit = ctx.scalar(x_arr, "threshold X")
        if math.isnan(limit):
            raise ctx.fail("threshold X is NaN")
        x = u8_codes(ctx, data, "input data")
        zero = quantize_uint8(0.0, mn, mx)
        with np.errstate(over="ignore", invalid="ignore"):   # an infinite X saturates
            q_limit = quantize_uint8(limit, mn, mx)
        return (np.minimum(np.maximum(x, zero), q_limit), *range_out(mn, mx))
