"""Supernode_8x8p32to8 and Supernode_8x8p8to8: convolution + bias + requantize (SEMANTICS.md §5).

Inputs (catalog order): data, weights, in_min, in_max, w_min, w_max, stride,
bias, bias_min, bias_max, out_min, out_max, optional channel scales.

- ``in_step, in_zero`` and ``w_step, w_zero`` come from the given ranges
  (sane, not zero-fixed: SEMANTICS §1 ``step_zero``); ``prod = in_step * w_step``.
- Bias: p32 takes a qint32 bias with ``b_zero = 0`` and ``b_step`` = one
  qint32 code, ``(bias_max - bias_min) / 2**32`` (SEMANTICS §1); p8 takes a
  quint8 bias with ``step_zero(bias_min, bias_max)``. Either way
  ``bias32[c] = (b[c] - b_zero) * b_step / prod``.
- The product sum is computed once (:mod:`hexnn_import.ops.conv_core`); the
  output stage (:mod:`hexnn_import.ops.output_stage`, shared with the
  depthwise, dilated, grouped, transposed and batch-norm ops) redoes only
  itself on an auto-range recompute, since the sum does not depend on the
  output range.
- The range used is reported in float32; the arithmetic uses its float64
  value (the float32 rounding of a reported end is below 1e-7 relative).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from hexnn_import.ops.conv_core import conv_sum, read_stride, u8_tensor
from hexnn_import.ops.output_stage import CONV_START, prepare_output, product_steps, read_bias32, read_scales
from hexnn_import.ops.registry import Kernel, KernelContext, register


class _Supernode(Kernel):
    """Shared body of the flat supernodes; ``qint32_bias`` picks the p32 or p8 bias."""

    qint32_bias: ClassVar[bool] = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``: exact product sum, then the §5 output stage."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride, b_arr, b_min, b_max, o_min, o_max = inputs[:12]
        k_arr = inputs[12] if len(inputs) > 12 else None
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "weights")
        dout = w.shape[3]
        steps = product_steps(ctx, in_min, in_max, w_min, w_max)
        bias32 = read_bias32(ctx, b_arr, b_min, b_max, dout, self.qint32_bias, steps.prod)
        stage = prepare_output(ctx, steps.prod, bias32, read_scales(ctx, k_arr, dout), o_min, o_max, CONV_START)
        sh, sw = read_stride(ctx, stride)
        return stage.apply(ctx, conv_sum(ctx, x, steps.in_zero, w, steps.w_zero, sh, sw))


@register("Supernode_8x8p32to8")
class Supernode8x8p32to8(_Supernode):
    """Convolution + qint32 bias + requantize to quint8 (SEMANTICS §5; bias zero is 0)."""

    qint32_bias = True


@register("Supernode_8x8p8to8")
class Supernode8x8p8to8(_Supernode):
    """Convolution + quint8 bias + requantize to quint8 (SEMANTICS §5)."""

    qint32_bias = False
