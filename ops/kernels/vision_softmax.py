"""Softmax_uint8: softmax of quint8 data along depth, float result (hexagon_nn_ops.txt).

The text gives 3 or 4 inputs (data, min, max, optional beta, default 1.0)
and one float output. Computed in float64 from the dequantized input
(SEMANTICS §1, ``real = (q - zero) * step``):
``out = exp(beta * (x - max_x)) / sum(exp(beta * (x - max_x)))`` over the depth
axis, returned as float32. (hexagon_nn tabulates ``exp(beta * step * (q - 255))``
in float32; softmax is shift-invariant, so only float rounding differs.)
The input range must be sane; beta must be finite.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.detect_io import finite_scalar
from hexnn_import.ops.kernel_io import require_4d, u8_codes
from hexnn_import.ops.quant import dequantize_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register


def softmax_depth(x: np.ndarray, beta: float) -> np.ndarray:
    """float64 softmax of ``beta * x`` along the last axis."""
    z = beta * (x - x.max(axis=-1, keepdims=True)) if x.size else x
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


@register("Softmax_uint8")
class SoftmaxUint8(Kernel):
    """Softmax over depth of dequantized quint8 data; float32 output of the input's shape."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs[:3]
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        beta = finite_scalar(ctx, inputs[3], "beta") if len(inputs) > 3 else 1.0
        q = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        if q.shape[3] == 0:
            raise ctx.fail(f"input data has shape {list(q.shape)}: softmax needs a non-empty depth")
        return (softmax_depth(dequantize_u8(q, mn, mx), beta).astype(np.float32),)
