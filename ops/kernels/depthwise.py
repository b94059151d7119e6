"""QuantizedDepthwiseConv2d_8x8to32 and DepthwiseSupernode_8x8p{8,32}to8 (SEMANTICS.md §3, §5).

Filter ``[fh, fw, din, dmul]``; output channel ``c * dmul + m`` is input
channel ``c`` convolved with ``w[:, :, c, m]``, so the output depth is
``din * dmul``. Padding from the node (SAME / VALID / SAME_CAFFE; NA is an
error); padded taps contribute exactly 0. The exact sums come from
:mod:`hexnn_import.ops.depthwise_core`.

- ``QuantizedDepthwiseConv2d_8x8to32``: the sums as qint32, output range
  ``(-2**31 * one, 2**31 * one)``, ``one = in_step * w_step`` (§3).
- ``DepthwiseSupernode_*``: the sums through the §5 output stage
  (:mod:`hexnn_import.ops.output_stage`), bias ``[1,1,1,din*dmul]``; the
  op takes no channel scales (12 inputs), so ``k = 1``. An auto output
  range starts from ``[-0.125, 0.125]`` (§5, depthwise).

Measured on the 2-core development machine: DepthwiseSupernode_8x8p32to8 on
1x112x112x32 with a 3x3 filter, SAME, stride 1 takes ~10 ms (median of 21)
with a fixed output range, ~11 ms with a fresh auto range (widened and the
output stage recomputed).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.conv_core import read_stride, u8_tensor
from hexnn_import.ops.depthwise_core import check_depthwise_filter, depthwise_sum
from hexnn_import.ops.kernels.conv import product_range, to_qint32
from hexnn_import.ops.output_stage import (DEPTHWISE_START, prepare_output, product_steps, read_bias32,
                                           read_scales)
from hexnn_import.ops.registry import Kernel, KernelContext, register


@register("QuantizedDepthwiseConv2d_8x8to32")
class QuantizedDepthwiseConv2d8x8to32(Kernel):
    """Depthwise convolution of quint8 data to qint32 (SEMANTICS §3).

    Inputs: data ``[b,h,w,din]``, filter ``[fh,fw,din,dmul]``, in_min,
    in_max, filter_min, filter_max, stride shape ``[1,sh,sw,1]``. A sum that
    does not fit int32 is an error (it could not be exact).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride = inputs
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "filter")
        steps = product_steps(ctx, in_min, in_max, w_min, w_max, "filter")
        acc = depthwise_sum(ctx, x, steps.in_zero, w, steps.w_zero, *read_stride(ctx, stride))
        return (to_qint32(ctx, acc), *product_range(steps.in_step, steps.w_step))


class _DepthwiseSupernode(Kernel):
    """Shared body; ``QINT32_BIAS`` says whether the bias is qint32 (p32) or quint8 (p8)."""

    QINT32_BIAS = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``: exact depthwise sums, then the §5 output stage."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride, b_arr, b_min, b_max, o_min, o_max = inputs
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "weights")
        check_depthwise_filter(ctx, x, w)
        dout = w.shape[2] * w.shape[3]
        steps = product_steps(ctx, in_min, in_max, w_min, w_max)
        bias32 = read_bias32(ctx, b_arr, b_min, b_max, dout, self.QINT32_BIAS, steps.prod)
        stage = prepare_output(ctx, steps.prod, bias32, read_scales(ctx, None, dout), o_min, o_max,
                               DEPTHWISE_START)
        sums = depthwise_sum(ctx, x, steps.in_zero, w, steps.w_zero, *read_stride(ctx, stride))
        return stage.apply(ctx, sums)


@register("DepthwiseSupernode_8x8p32to8")
class DepthwiseSupernode8x8p32to8(_DepthwiseSupernode):
    """Depthwise convolution + qint32 bias (zero 0) + requantize to quint8 (SEMANTICS §5)."""

    QINT32_BIAS = True


@register("DepthwiseSupernode_8x8p8to8")
class DepthwiseSupernode8x8p8to8(_DepthwiseSupernode):
    """Depthwise convolution + quint8 bias + requantize to quint8 (SEMANTICS §5)."""

    QINT32_BIAS = False
