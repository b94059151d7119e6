"""What hexagon_nn's 8x8->32 *reference* convolutions compute beyond the exact product sums (issue 19).

``ops/src/op_conv2d.c: conv2d_execute_ref`` and ``op_depthwiseconv.c:
depthwiseconv2d_execute_ref`` differ from the engine's Supernode stage in
three ways, all followed here (the product sums themselves come from
:mod:`hexnn_import.ops.conv_core` / :mod:`hexnn_import.ops.depthwise_core`,
unchanged for the supernodes):

- **offsets**: ``quantize_int(0, min, max)``, not clamped to 0..255, from the
  raw ranges (a range that excludes 0 is accepted: its offset lies outside
  0..255 and is subtracted as it is);
- **int32 wrap**: ``sum += (x - x_off) * (w - w_off)`` in int32, so a sum
  past int32 wraps modulo 2**32 (never an error). When the per-channel bound
  of the sum is too large for float64 to be exact (2**53), the sums are taken
  in int64, which is still right modulo 2**32;
- **geometry**: ``nn_pad_compute_outsize_and_padbefore`` (VALID window
  larger than the input: no output; NA accepted), taps outside the input
  skipped (the same as centred zeros).

The output range is :func:`hexnn_import.ops.nnlib_f32_conv.product_range_f32`.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from hexnn_import.ops.conv_core import ConvGeometry, ConvPlan, conv_plan, conv_sum_at
from hexnn_import.ops.depthwise_core import DepthwisePlan, depthwise_plan, depthwise_sum_at
from hexnn_import.ops.nnlib_f32_conv import wrap_i32
from hexnn_import.ops.padding import nn_outsize_padding
from hexnn_import.ops.registry import KernelContext

#: float64 represents every integer below this exactly.
_F64_EXACT = 2.0 ** 53
#: int32 holds every integer below this in magnitude.
_I32_SAFE = 2.0 ** 31 - 1


def ref_geometry(ctx: KernelContext, in_shape: tuple[int, ...], fh: int, fw: int, stride_h: int,
                 stride_w: int) -> ConvGeometry:
    """Output size and padding of ``nn_pad_compute_outsize_and_padbefore`` for ``ctx.padding`` (never an error)."""
    _, h, w, _ = in_shape
    oh, top, bottom = nn_outsize_padding(h, fh, stride_h, ctx.padding)
    ow, left, right = nn_outsize_padding(w, fw, stride_w, ctx.padding)
    return ConvGeometry(oh, ow, top, bottom, left, right, stride_h, stride_w)


def ref_conv_plan(w: np.ndarray, w_off: int, x_off: int) -> ConvPlan:
    """:func:`conv_plan` for any offsets: int64 weights when a float64 sum could be inexact."""
    plan = conv_plan(w, w_off, x_off)
    if plan.bound.size and float(plan.bound.max()) >= _F64_EXACT:
        fh, fw, din, dout = w.shape
        wc = (w.astype(np.int64) - w_off).reshape(fh * fw * din, dout)
        plan = replace(plan, wmat=np.ascontiguousarray(wc))
    return plan


def ref_depthwise_plan(w: np.ndarray, w_off: int, x_off: int) -> DepthwisePlan:
    """:func:`depthwise_plan` for any offsets: int64 taps when a float64 sum could be inexact."""
    plan = depthwise_plan(w, w_off, x_off)
    if plan.bound.size and float(plan.bound.max()) >= _F64_EXACT:
        wc = (w.astype(np.int64) - w_off).transpose(0, 1, 3, 2)
        plan = DepthwisePlan(w, int(x_off), np.ascontiguousarray(wc), plan.bound)
    return plan


def to_int32(sums: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Exact integer(-valued) sums as the C's int32 results (wrapped modulo 2**32 past int32)."""
    if not bound.size or float(bound.max()) < _I32_SAFE:
        return sums.astype(np.int32)
    return wrap_i32(sums)


def ref_conv_sums(x: np.ndarray, plan: ConvPlan, g: ConvGeometry) -> np.ndarray:
    """``conv2d_execute_ref``'s int32 outputs ``[b, oh, ow, dout]``."""
    dout = plan.shape[3]
    if g.out_h * g.out_w * x.shape[0] == 0:
        return np.zeros((x.shape[0], g.out_h, g.out_w, dout), np.int32)
    return to_int32(conv_sum_at(x, plan, g), plan.bound)


def ref_depthwise_sums(x: np.ndarray, plan: DepthwisePlan, g: ConvGeometry) -> np.ndarray:
    """``depthwiseconv2d_execute_ref``'s int32 outputs ``[b, oh, ow, din * dmul]``."""
    dout = plan.w.shape[2] * plan.w.shape[3]
    if g.out_h * g.out_w * x.shape[0] == 0:
        return np.zeros((x.shape[0], g.out_h, g.out_w, dout), np.int32)
    return to_int32(depthwise_sum_at(x, plan, g), plan.bound)
