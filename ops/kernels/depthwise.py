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
- Narrow and zero-width ranges compute and never raise (min > max or a NaN / Inf
  end is an error): a zero-width input or weight range gives the bias alone, a
  zero-width output range codes 0 / 255 by sign; the rule and where it departs from
  hexagon_nn 2.14.1 (op_supernode.c, op_dwise_snode_8bit.c) are in :mod:`hexnn_import.ops.supernode_core`.

Measured on the 2-core development machine: DepthwiseSupernode_8x8p32to8 on
1x112x112x32 with a 3x3 filter, SAME, stride 1 takes ~10 ms (median of 21)
with a fixed output range, ~11 ms with a fresh auto range (widened and the
output stage recomputed) - before the speed work of issue 11: both kernels
now keep the centred filter (float32 when exact, :class:`DepthwisePlan`),
the bias terms and the per-range output constants in ``ctx.state``
(:mod:`hexnn_import.ops.node_cache`), and evaluate the output stage in
float64 where a bound proves it exact.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.conv_core import check_exact, conv_geometry, read_stride, u8_tensor
from hexnn_import.ops.depthwise_core import DepthwisePlan, check_depthwise_filter, depthwise_plan, depthwise_sum_at
from hexnn_import.ops.kernels.conv import product_range, to_qint32
from hexnn_import.ops.node_cache import node_cached, replay_get, replay_store
from hexnn_import.ops.output_stage import (DEPTHWISE_START, ProductSteps, prepare_output, product_steps, read_bias32,
                                           read_scales)
from hexnn_import.ops.registry import Kernel, KernelContext, register
from hexnn_import.ops.supernode_core import OutputPlan, requantize_fixed

#: int32 holds every integer below this in magnitude (a smaller sum bound needs no qint32 range check).
_I32_SAFE = 2.0 ** 31 - 1


def range_values(ctx: KernelContext, arrs: tuple[np.ndarray, ...], names: tuple[str, ...]) -> tuple[float, ...]:
    """The float values of scalar range inputs (a cache key; checked for sanity where they are used)."""
    return tuple(ctx.scalar(a, n) for a, n in zip(arrs, names))


def cached_depthwise(ctx: KernelContext, x: np.ndarray, w_arr: np.ndarray, in_min: np.ndarray,
                     in_max: np.ndarray, w_min: np.ndarray, w_max: np.ndarray, w_what: str,
                     key: tuple[float, ...]) -> tuple[ProductSteps, DepthwisePlan]:
    """The node's :class:`ProductSteps` and :class:`DepthwisePlan`, built once per filter and ranges."""
    def build() -> tuple[ProductSteps, DepthwisePlan]:
        w = u8_tensor(ctx, w_arr, w_what)
        steps = product_steps(ctx, in_min, in_max, w_min, w_max, w_what)
        check_depthwise_filter(ctx, x, w)
        check_exact(ctx, w.shape[0] * w.shape[1])
        return steps, depthwise_plan(w, steps.w_zero, steps.in_zero)
    return node_cached(ctx.state, "depthwise", (w_arr,), key, build)


@register("QuantizedDepthwiseConv2d_8x8to32")
class QuantizedDepthwiseConv2d8x8to32(Kernel):
    """Depthwise convolution of quint8 data to qint32 (SEMANTICS §3).

    Inputs: data ``[b,h,w,din]``, filter ``[fh,fw,din,dmul]``, in_min,
    in_max, filter_min, filter_max, stride shape ``[1,sh,sw,1]``. A sum that
    does not fit int32 is an error (it could not be exact).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride = inputs
        x = u8_tensor(ctx, x_arr, "input data")
        key = range_values(ctx, (in_min, in_max, w_min, w_max), ("input min", "input max", "filter min", "filter max"))
        steps, plan = cached_depthwise(ctx, x, w_arr, in_min, in_max, w_min, w_max, "filter", key)
        check_depthwise_filter(ctx, x, plan.w)
        g = conv_geometry(ctx, x.shape, plan.w.shape, *read_stride(ctx, stride))
        sums = depthwise_sum_at(x, plan, g)
        fits = float(plan.bound.max()) < _I32_SAFE
        acc = sums.astype(np.int32) if fits else to_qint32(ctx, sums.astype(np.int64))
        mn, mx = product_range(steps.in_step, steps.w_step)
        if fits and x is x_arr:  # uint8 data: later runs with the same other inputs redo only the arithmetic
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda x_new: (depthwise_sum_at(x_new, plan, g).astype(np.int32),
                                                                  mn, mx))
        return (acc, mn, mx)


class _DepthwiseSupernode(Kernel):
    """Shared body; ``QINT32_BIAS`` says whether the bias is qint32 (p32) or quint8 (p8)."""

    QINT32_BIAS = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``: exact depthwise sums, then the §5 output stage."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride, b_arr, b_min, b_max, o_min, o_max = inputs
        x = u8_tensor(ctx, x_arr, "input data")
        key = range_values(ctx, (in_min, in_max, w_min, w_max, b_min, b_max),
                           ("input min", "input max", "weights min", "weights max", "bias min", "bias max"))
        steps, plan = cached_depthwise(ctx, x, w_arr, in_min, in_max, w_min, w_max, "weights", key)
        check_depthwise_filter(ctx, x, plan.w)

        def build() -> OutputPlan:
            dout = plan.w.shape[2] * plan.w.shape[3]
            bias32 = read_bias32(ctx, b_arr, b_min, b_max, dout, self.QINT32_BIAS, steps.prod)
            return OutputPlan(steps.prod, bias32, read_scales(ctx, None, dout), plan.bound)

        out_plan = node_cached(ctx.state, "depthwise_output", (w_arr, b_arr), key, build)
        stage = prepare_output(ctx, steps.prod, out_plan.bias32, out_plan.k, o_min, o_max, DEPTHWISE_START,
                               out_plan)
        g = conv_geometry(ctx, x.shape, plan.w.shape, *read_stride(ctx, stride))
        out = stage.apply(ctx, depthwise_sum_at(x, plan, g))
        if not stage.rng.auto and x is x_arr:  # fixed output range, uint8 data: replay later runs (node_cache)
            rq, fs = out_plan.stage(stage.rng.lo, stage.rng.hi)
            mn, mx = out[1], out[2]
            mn.flags.writeable = mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,),
                         lambda x_new: (requantize_fixed(depthwise_sum_at(x_new, plan, g), rq, fs), mn, mx))
        return out


@register("DepthwiseSupernode_8x8p32to8")
class DepthwiseSupernode8x8p32to8(_DepthwiseSupernode):
    """Depthwise convolution + qint32 bias (zero 0) + requantize to quint8 (SEMANTICS §5)."""

    QINT32_BIAS = True


@register("DepthwiseSupernode_8x8p8to8")
class DepthwiseSupernode8x8p8to8(_DepthwiseSupernode):
    """Depthwise convolution + quint8 bias + requantize to quint8 (SEMANTICS §5)."""

    QINT32_BIAS = False
