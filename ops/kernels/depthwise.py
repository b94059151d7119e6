"""QuantizedDepthwiseConv2d_8x8to32 and DepthwiseSupernode_8x8p{8,32}to8 (SEMANTICS.md §3, §5).

Filter ``[fh, fw, din, dmul]``; output channel ``c * dmul + m`` is input
channel ``c`` convolved with ``w[:, :, c, m]``, so the output depth is
``din * dmul``. Padded taps contribute exactly 0. The exact sums come from
:mod:`hexnn_import.ops.depthwise_core`.

- ``QuantizedDepthwiseConv2d_8x8to32``: as hexagon_nn's
  ``depthwiseconv2d_execute_ref`` (op_depthwiseconv.c): unclamped
  ``quantize_int`` offsets, wrapping int32 sums, the C's padding geometry and
  float32 output range ``(INT32_MIN * lvl, INT32_MAX * lvl)``
  (:mod:`hexnn_import.ops.conv_ref_core`).
- ``DepthwiseSupernode_*``: hexagon_nn's op_dwise_snode_8bit.c (float32 constants, the device's
  per-element arithmetic, its auto-range retries), 12 inputs or 13 (channel scales), bias
  ``[1,1,1,din*dmul]``: :mod:`hexnn_import.ops.kernels.dwise_scaled`, shared with the _d32 twins.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.conv_core import read_stride, u8_tensor
from hexnn_import.ops.conv_ref_core import ref_depthwise_plan, ref_depthwise_sums, ref_geometry
from hexnn_import.ops.depthwise_core import DepthwisePlan, check_depthwise_filter
from hexnn_import.ops.kernels.conv import ref_range_out, ref_ranges
from hexnn_import.ops.kernels.dwise_scaled import dwise_supernode_scaled
from hexnn_import.ops.nnlib_f32_conv import quantize_int
from hexnn_import.ops.node_cache import node_cached, replay_get, replay_store
from hexnn_import.ops.registry import Kernel, KernelContext, register


def range_values(ctx: KernelContext, arrs: tuple[np.ndarray, ...], names: tuple[str, ...]) -> tuple[float, ...]:
    """The float values of scalar range inputs (a cache key; checked for sanity where they are used)."""
    return tuple(ctx.scalar(a, n) for a, n in zip(arrs, names))


@register("QuantizedDepthwiseConv2d_8x8to32")
class QuantizedDepthwiseConv2d8x8to32(Kernel):
    """Depthwise convolution of quint8 data to qint32 (``op_depthwiseconv.c: depthwiseconv2d_execute_ref``).

    Inputs: data ``[b,h,w,din]``, filter ``[fh,fw,din,dmul]``, in_min,
    in_max, filter_min, filter_max, stride shape ``[1,sh,sw,1]``. As the C:
    offsets ``quantize_int(0, min, max)`` (unclamped: ranges excluding 0 are
    accepted), int32 sums that wrap, float32 output range, C padding geometry
    (:mod:`hexnn_import.ops.conv_ref_core`).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(acc, out_min, out_max)``."""
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride = inputs
        x = u8_tensor(ctx, x_arr, "input data")
        key = range_values(ctx, (in_min, in_max, w_min, w_max), ("input min", "input max", "filter min", "filter max"))

        def build() -> tuple[tuple[np.ndarray, np.ndarray], DepthwisePlan]:
            w = u8_tensor(ctx, w_arr, "filter")
            rin, rw = ref_ranges(ctx, in_min, in_max, w_min, w_max, "input", "filter")
            check_depthwise_filter(ctx, x, w)
            mn, mx = ref_range_out(rin, rw)
            mn.flags.writeable = mx.flags.writeable = False   # shared by every run (the engine copies them)
            return (mn, mx), ref_depthwise_plan(w, quantize_int(0.0, *rw), quantize_int(0.0, *rin))

        (mn, mx), plan = node_cached(ctx.state, "depthwise_ref", (w_arr,), key, build)
        check_depthwise_filter(ctx, x, plan.w)
        g = ref_geometry(ctx, x.shape, plan.w.shape[0], plan.w.shape[1], *read_stride(ctx, stride))
        acc = ref_depthwise_sums(x, plan, g)
        if x is x_arr:  # uint8 data: later runs with the same other inputs redo only the arithmetic
            replay_store(ctx.state, inputs, (0,), lambda x_new: (ref_depthwise_sums(x_new, plan, g), mn, mx))
        return (acc, mn, mx)


class _DepthwiseSupernode(Kernel):
    """Shared body (:mod:`.dwise_scaled`, 12 or 13 inputs); ``QINT32_BIAS`` says whether the bias is qint32
    (p32) or quint8 (p8)."""

    QINT32_BIAS = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``: exact depthwise sums, then hexagon_nn's output stage."""
        return dwise_supernode_scaled(ctx, inputs, self.QINT32_BIAS)


@register("DepthwiseSupernode_8x8p32to8")
class DepthwiseSupernode8x8p32to8(_DepthwiseSupernode):
    """Depthwise convolution + qint32 bias (zero 0) + requantize to quint8 (op_dwise_snode_8bit.c); 12/13 inputs."""

    QINT32_BIAS = True


@register("DepthwiseSupernode_8x8p8to8")
class DepthwiseSupernode8x8p8to8(_DepthwiseSupernode):
    """Depthwise convolution + quint8 bias + requantize to quint8 (op_dwise_snode_8bit.c); 12/13 inputs."""

    QINT32_BIAS = False
