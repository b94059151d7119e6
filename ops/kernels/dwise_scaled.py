"""The body of DepthwiseSupernode_8x8p{8,32}to8 (flat and _d32), with 12 inputs or 13 (channel scales), as
hexagon_nn 2.14.1 computes it (op_dwise_snode_8bit.c ``dwise_supernode_check`` / ``dwise_supernode_execute``,
include/supernode_utils.h; SEMANTICS.md §5).

- check: weight level ``(max - min) / (255.0f * 1.0f)`` and zero ``quantize_uint8(0.0f, min, max)`` (a
  weight range excluding 0 is accepted), ``dwise_sumb`` (the sum of ``w - w_zero`` per output channel),
  the channel scales (``check_channelscale_present`` + ``load_channel_scales``:
  :func:`~hexnn_import.ops.output_stage.nnlib_execute.read_channel_scales`), ``find_k_kinv`` (``k_factor = k``,
  ``k_factor_recip = 1/k``, ``max_k_factor = 1.0``) and ``setup_initial_output_range`` (auto ends start
  at ``[-0.125, 0.125]``): :func:`hexnn_import.ops.output_stage.nnlib_constants.sn_const`;
- execute: ``fill_info_minmax_basics`` + ``fill_bias_buf`` per computation, the HVX per-element arithmetic
  (modelled from asm_src dwconv2dbbb_*_h.S) and ``supernode_execute_workitem_check_for_retry``, at most 5
  computations, then the C's error "can't find range for depthwise": :mod:`hexnn_import.ops.output_stage.nnlib_execute`.

Channel scales come from prepare.c's make_supernodes, which fuses ``QuantizedDepthwiseConv2d_8x8to32 ->
QuantizedChannelScale_32xf -> bias add -> requantize -> [relu]`` into one node whose input 12 is the
ChannelScale's scale tensor (``ReplaceConv_DwiseSuperNode``). The fused node then computes, per channel,
``recip[c] = roundf_u32(ldexp(prod / out_level, 31 - shamt) * k[c])`` (with ``shamt`` from ``max_k = 1``)
and ``biasbuf[c] = round((bias + offset) * (1 / k[c]) - gemsumb * in_zero)``: the scale enters once, in the
final multiplier, whereas the unfused chain rounds ``sum * k`` to the ChannelScale's grid first; the two
may differ by one code, and this follows the C.

The exact product sums are :mod:`hexnn_import.ops.depthwise_core`'s (float32 when exact). The C's errors
are the engine's (:mod:`.supernode`); where the C divides by zero (a zero-width weight range: ``prod ==
0``) the engine gives the bias alone (:class:`~hexnn_import.ops.output_stage.nnlib_execute.BiasOnlyPlan`).
Not modelled: the device kernels' shape limits (filter height >= 2, width 3/5/7, horizontal stride 1 or 2,
errors of dwise_supernode_recalculate_strategy) and fill_bias_buf's check on the channels of the d32 depth
padding (bias 0 there: "Final too big" when ``-out_min / prod`` alone exceeds int32).

Measured on the 2-core development machine (1x112x112x96, 3x3, SAME, interleaved with the previous float64
output stage): ~11 ms per run with a fixed or a settled auto range (as before), ~11 ms with a fresh auto
range (before ~15 ms: a retry now needs only the per-channel extremes of the sums, see
:func:`hexnn_import.ops.output_stage.nnlib_execute.run_exact`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from hexnn_import.ops.compiled import build_depthwise, depthwise_sums
from hexnn_import.ops.conv_core import check_exact, conv_geometry, read_stride, u8_tensor
from hexnn_import.ops.depthwise_core import DepthwisePlan, check_depthwise_filter, depthwise_plan, depthwise_sum_at
from hexnn_import.ops.kernels.dwise_pad_columns import pad_columns_plan, run_with_pad_columns
from hexnn_import.ops.kernels.supernode import (data_stand_in, output_plans, read_operands, settle,
                                            store_replay)
from hexnn_import.ops.node_cache import node_cached, replay_get
from hexnn_import.ops.output_stage.nnlib_execute import STATE_KEY, BiasOnlyPlan, ExactPlan, read_channel_scales
from hexnn_import.ops.registry import KernelContext


def scales_slice_defect(w_shape: Sequence[int], stride_w: int, k: np.ndarray | None) -> bool:
    """The device defect of op_dwise_snode_8bit.c's ``dwconv2dbbb_s1_7xN_asm`` / ``dwconv2dbbb_s2_5xN_asm``
    (filter width 7, stride width 1 / width 5, stride width 2) with channel scales: every 32-channel depth slice
    after the first is requantized with the first slice's per-channel ``recip`` (the packet ``{ vrecip =
    vmem(recip_level++#1); memw(sp+#52) = recip_level }`` stores the pointer before its increment and the next
    slice reloads it). Deterministic, so the engine follows it (issue 36): channel ``c`` takes ``recip[c % 32]``,
    its bias stays its own (fill_bias_buf, C). Visible where the scales do not repeat every 32 channels."""
    dout = int(w_shape[2]) * int(w_shape[3])
    if k is None or dout <= 32 or (int(w_shape[1]), stride_w) not in ((7, 1), (5, 2)):
        return False
    return not np.array_equal(k, k[np.arange(dout) % 32])


def dwise_supernode_scaled(ctx: KernelContext, inputs: Sequence[np.ndarray], qint32_bias: bool,
                           d32_pad: tuple[int, int, int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, out_min, out_max)`` of a flat DepthwiseSupernode given 12 or 13 inputs (module doc). ``d32_pad``
    (a _d32 node's input left pad, right pad and total width): on the 3x3 kernels the output's padding columns
    enter an auto range, as on the device (:func:`.dwise_pad_columns.run_with_pad_columns`)."""
    replay = replay_get(ctx.state, inputs)
    if replay is not None:
        return replay(inputs[0])
    s = read_operands(ctx, inputs)
    x, x_arr, w_arr, b_arr, k_arr, ranges = s.x, s.x_arr, s.w_arr, s.b_arr, s.k_arr, s.ranges

    def build() -> tuple[DepthwisePlan, ExactPlan | BiasOnlyPlan]:
        w = u8_tensor(ctx, w_arr, "weights")
        check_depthwise_filter(ctx, x, w)
        check_exact(ctx, w.shape[0] * w.shape[1])
        dout = w.shape[2] * w.shape[3]
        k = read_channel_scales(ctx, k_arr, dout)
        plans = output_plans(ctx, w, b_arr, k, ranges, dout, qint32_bias, True, depthwise_plan)
        if ctx.op.endswith("_d32") and scales_slice_defect(w.shape, read_stride(ctx, s.stride)[1], k):
            plans[1].sc = replace(plans[1].sc, k=k[np.arange(dout) % 32])   # type: ignore[union-attr]
        return plans

    plan, out_plan = node_cached(ctx.state, "dwise_supernode", (w_arr, b_arr, k_arr), ranges, build)
    check_depthwise_filter(ctx, x, plan.w)
    g = conv_geometry(ctx, x.shape, plan.w.shape, *read_stride(ctx, s.stride))
    pad = (pad_columns_plan(ctx, plan, g, x.shape, d32_pad)
           if d32_pad is not None and read_channel_scales(ctx, k_arr, plan.w.shape[2] * plan.w.shape[3]) is None
           else None)
    # a node that has run before takes its sums from the compiled loop where there is one (the first run always
    # takes numpy's, against which a replay is checked); an auto-range node's later runs come through settle's replay
    sums = depthwise_sums(x, plan, g) if STATE_KEY in ctx.state else None
    out = run_with_pad_columns(ctx, x, depthwise_sum_at(x, plan, g) if sums is None else sums, out_plan,
                               s.out_min, s.out_max, pad)
    if x is x_arr:
        omin, omax, kept = s.out_min, s.out_max, data_stand_in(inputs)

        def again(x_new: np.ndarray) -> tuple[np.ndarray, ...]:
            fast = depthwise_sums(x_new, plan, g)
            return run_with_pad_columns(ctx, x_new, depthwise_sum_at(x_new, plan, g) if fast is None else fast,
                                        out_plan, omin, omax, pad)
        settle(ctx, kept, out, again, lambda got, rq, fs: store_replay(
            ctx, kept, got, lambda x_new: depthwise_sum_at(x_new, plan, g), rq, fs,
            lambda f: build_depthwise(plan, g, x.shape, f)), out_plan)
    return out
