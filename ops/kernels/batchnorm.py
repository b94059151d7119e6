"""QuantizedBatchNorm_8x8p8to8 and QuantizedBatchNorm_8x8p32to8: ``out = in * scale[d] + bias[d]``.

SEMANTICS.md does not name batch norm; the op is a 1x1 depthwise
convolution with multiplier 1, so it is computed as one (choice recorded
here):

- ``in_step, in_zero`` and ``scale_step, scale_zero`` from the given sane
  ranges, ``prod = in_step * scale_step``; the exact product
  ``(x - in_zero) * (scale[d] - scale_zero)`` per element;
- then the Supernode output stage of §5 (:mod:`hexnn_import.ops.output_stage.spec_stage`)
  with ``k = 1``: quint8 bias (p8) or qint32 bias with zero 0 (p32) in
  accumulator units, fixed or auto output range. An auto range starts from
  the depthwise ``[-0.125, 0.125]``, widened and remembered on the node as
  for every supernode.
- Narrow and zero-width ranges compute and never raise (min > max or a NaN / Inf
  end is an error): a zero-width input or weight range gives the bias alone, a
  zero-width output range codes 0 / 255 by sign; the rule and where it departs from
  hexagon_nn 2.14.1 (op_batchnorm_d32.c) are in :mod:`hexnn_import.ops.output_stage.requant`.

Scale and bias are ``[1,1,1,d]`` or ``[1,1,1,1]`` (a single value applies to
every channel), as the op text says; the output has the input's shape.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.conv_core import u8_tensor
from hexnn_import.ops.kernel_io import u8_codes
from hexnn_import.ops.output_stage.spec_stage import (DEPTHWISE_START, prepare_output, product_steps, read_bias32,
                                                      read_scales)
from hexnn_import.ops.registry import Kernel, KernelContext, register


class _BatchNorm(Kernel):
    """Shared body; ``QINT32_BIAS`` says whether the bias is qint32 (p32) or quint8 (p8)."""

    QINT32_BIAS = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``."""
        x_arr, s_arr, in_min, in_max, s_min, s_max, b_arr, b_min, b_max, o_min, o_max = inputs
        x = u8_tensor(ctx, x_arr, "input data")
        depth = x.shape[3]
        if depth < 1:
            raise ctx.fail(f"input shape {list(x.shape)} has no channels")
        s = u8_codes(ctx, s_arr, "scale").reshape(-1)
        if s.size not in (1, depth):
            raise ctx.fail(f"scale has {s.size} elements (shape {list(np.shape(s_arr))}), expected "
                           f"[1,1,1,{depth}] or [1,1,1,1] for input shape {list(x.shape)}")
        steps = product_steps(ctx, in_min, in_max, s_min, s_max, "scale")
        bias32 = read_bias32(ctx, b_arr, b_min, b_max, depth, self.QINT32_BIAS, steps.prod, broadcast=True)
        stage = prepare_output(ctx, steps.prod, bias32, read_scales(ctx, None, depth), o_min, o_max,
                               DEPTHWISE_START)
        sums = (x.astype(np.int64) - steps.in_zero) * (s.astype(np.int64) - steps.w_zero)
        return stage.apply(ctx, sums)


@register("QuantizedBatchNorm_8x8p8to8")
class QuantizedBatchNorm8x8p8to8(_BatchNorm):
    """Per-channel scale and quint8 bias, requantized to quint8 (module doc)."""

    QINT32_BIAS = False


@register("QuantizedBatchNorm_8x8p32to8")
class QuantizedBatchNorm8x8p32to8(_BatchNorm):
    """Per-channel scale and qint32 bias (zero 0), requantized to quint8 (module doc)."""

    QINT32_BIAS = True
