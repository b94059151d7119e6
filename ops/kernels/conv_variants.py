"""Dilated, grouped and transposed convolutions with the Supernode output stage (SEMANTICS.md §3, §5).

All four ops compute the exact product sum of their convolution
(:mod:`hexnn_import.ops.conv_variants_core`) and then the §5 output stage
of the Supernode (:mod:`hexnn_import.ops.output_stage.spec_stage`): bias in accumulator
units, optional channel scales, fixed or auto output range (auto ends
-inf / +inf start from ``[0, 0.5]`` and widen persistently).

Choices where the documents are silent (hexagon_nn itself expands these ops
at prepare time; the project's prepare does so for the transposed
convolutions prepare.c expands - optimizer/transpose_conv.py: a d32
Supernode and DepthToSpace_8_d32 - so these kernels run only where a graph
is not prepared, or for the forms no pass expands):

- **Dilated**: filter HWIO ``[fh, fw, din, dout]``; dilation values
  ``{h, w}`` (any integer dtype); output size and padding as any SAME /
  VALID / SAME_CAFFE convolution with window ``(f - 1) * d + 1``
  (``padding.out_and_pad``). The text allows only 1x1 strides: any other is
  an error. Channel scales in (1/2048, 1] (the project's bound for the
  text's "(0, 1]").
- **Grouped**: filter ``[fh, fw, din / groups, dout]``; ``groups`` must
  divide both depths; output channel block ``g`` sees input channel block
  ``g``. Channel scales in (1/32, 1] as the text says.
- **Transposed**: weights ``[O, fh, fw, I]`` (``[O / groups, fh, fw, I]``
  with groups, giving ``O / groups * groups`` output channels); the scatter
  form of TF ``conv2d_transpose``, output size ``(in - 1) * stride + f -
  pad_before - pad_after`` from the explicit pad tensor; the node's padding
  field is not used. Channel scales in (1/32, 1] for p32 (as its text
  says), (1/2048, 1] for p8 (text: "(0, 1]").
- Narrow and zero-width ranges compute and never raise (min > max or a NaN / Inf
  end is an error): a zero-width input or weight range gives the bias alone, a
  zero-width output range codes 0 / 255 by sign; the rule and where it departs from
  hexagon_nn 2.14.1 (op_dilated_conv.c, op_grouped_conv.c, op_transpose_conv.c) are in
  :mod:`hexnn_import.ops.output_stage.requant`.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.conv_core import read_stride, u8_tensor
from hexnn_import.ops.conv_variants_core import (dilated_grouped_sum, read_dilation, read_groups, read_pads,
                                                 transpose_sum)
from hexnn_import.ops.output_stage.spec_stage import (CONV_START, K_LOW_1_32, prepare_output, product_steps,
                                                      read_bias32, read_scales)
from hexnn_import.ops.registry import Kernel, KernelContext, register


def _filter4(ctx: KernelContext, w: np.ndarray, layout: str) -> tuple[int, int, int, int]:
    """The filter's shape, required 4-D with no empty dimension."""
    if w.ndim != 4 or min(w.shape) < 1:
        raise ctx.fail(f"filter has shape {list(w.shape)}, expected 4-D {layout} with no empty dimension")
    return w.shape  # type: ignore[return-value]


@register("QuantizedDilatedConv2d_8x8p32to8")
class QuantizedDilatedConv2d8x8p32to8(Kernel):
    """Dilated convolution + qint32 bias + §5 requantize to quint8 (stride must be 1x1)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``."""
        x_arr, w_arr, b_arr, in_min, in_max, w_min, w_max, b_min, b_max, stride, dil, o_min, o_max = inputs[:13]
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "filter")
        dout = _filter4(ctx, w, "[fh,fw,din,dout]")[3]
        sh, sw = read_stride(ctx, stride)
        if (sh, sw) != (1, 1):
            raise ctx.fail(f"stride {sh}x{sw}: only 1x1 strides are supported by this op")
        dilation = read_dilation(ctx, dil)
        steps = product_steps(ctx, in_min, in_max, w_min, w_max, "filter")
        bias32 = read_bias32(ctx, b_arr, b_min, b_max, dout, True, steps.prod)
        k = read_scales(ctx, inputs[13] if len(inputs) > 13 else None, dout)
        stage = prepare_output(ctx, steps.prod, bias32, k, o_min, o_max, CONV_START)
        sums = dilated_grouped_sum(ctx, x, steps.in_zero, w, steps.w_zero, (1, 1), dilation, 1)
        return stage.apply(ctx, sums)


@register("QuantizedGroupedConv2d_8x8p32to8")
class QuantizedGroupedConv2d8x8p32to8(Kernel):
    """Grouped convolution + qint32 bias + §5 requantize to quint8."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``."""
        x_arr, w_arr, b_arr, in_min, in_max, w_min, w_max, b_min, b_max, stride, grp, o_min, o_max = inputs[:13]
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "filter")
        dout = _filter4(ctx, w, "[fh,fw,din/groups,dout]")[3]
        groups = read_groups(ctx, grp, x.shape[3], dout)
        steps = product_steps(ctx, in_min, in_max, w_min, w_max, "filter")
        bias32 = read_bias32(ctx, b_arr, b_min, b_max, dout, True, steps.prod)
        k = read_scales(ctx, inputs[13] if len(inputs) > 13 else None, dout, K_LOW_1_32)
        stage = prepare_output(ctx, steps.prod, bias32, k, o_min, o_max, CONV_START)
        sums = dilated_grouped_sum(ctx, x, steps.in_zero, w, steps.w_zero, read_stride(ctx, stride), (1, 1), groups)
        return stage.apply(ctx, sums)


class _TransposeConv(Kernel):
    """Shared body of the transposed convolutions; subclasses pick the bias type and scale bound."""

    QINT32_BIAS = True
    K_LOW: float | None = None

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, pad, stride, b_arr, b_min, b_max, o_min, o_max = inputs[:13]
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "weights")
        og = _filter4(ctx, w, "[O,H,W,I]")[0]
        groups = read_groups(ctx, inputs[14] if len(inputs) > 14 else None, x.shape[3], None)
        dout = og * groups
        pads = read_pads(ctx, pad)
        steps = product_steps(ctx, in_min, in_max, w_min, w_max)
        bias32 = read_bias32(ctx, b_arr, b_min, b_max, dout, self.QINT32_BIAS, steps.prod)
        k = read_scales(ctx, inputs[13] if len(inputs) > 13 else None, dout, self.K_LOW)
        stage = prepare_output(ctx, steps.prod, bias32, k, o_min, o_max, CONV_START)
        sums = transpose_sum(ctx, x, steps.in_zero, w, steps.w_zero, pads, read_stride(ctx, stride), groups)
        return stage.apply(ctx, sums)


@register("QuantizedTransposeConv2d_8x8p32to8")
class QuantizedTransposeConv2d8x8p32to8(_TransposeConv):
    """Transposed convolution + qint32 bias + §5 requantize; channel scales in (1/32, 1]."""

    QINT32_BIAS = True
    K_LOW = K_LOW_1_32


@register("QuantizedTransposeConv2d_8x8p8to8")
class QuantizedTransposeConv2d8x8p8to8(_TransposeConv):
    """Transposed convolution + quint8 bias + §5 requantize; channel scales in (1/2048, 1]."""

    QINT32_BIAS = False
    K_LOW = None
