"""Supernode_8x8p32to8 and Supernode_8x8p8to8: convolution + bias + requantize (SEMANTICS.md §5).

Inputs (catalog order): data, weights, in_min, in_max, w_min, w_max, stride,
bias, bias_min, bias_max, out_min, out_max, optional channel scales.

- ``in_step, in_zero`` and ``w_step, w_zero`` come from the given ranges
  (sane, not zero-fixed: SEMANTICS §1 ``step_zero``); ``prod = in_step * w_step``.
- Bias: p32 takes a qint32 bias with ``b_zero = 0`` and ``b_step`` = one
  qint32 code, ``(bias_max - bias_min) / 2**32`` (SEMANTICS §1); p8 takes a
  quint8 bias with ``step_zero(bias_min, bias_max)``. Either way
  ``bias32[c] = (b[c] - b_zero) * b_step / prod``.
- The product sum is computed once (:mod:`hexnn_import.ops.conv_core`); an
  auto-range recompute (:mod:`hexnn_import.ops.autorange`) only redoes the
  output stage (:mod:`hexnn_import.ops.supernode_core`), since the sum does
  not depend on the output range.
- The range used is reported in float32; the arithmetic uses its float64
  value (the float32 rounding of a reported end is below 1e-7 relative).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops import autorange
from hexnn_import.ops.conv_core import conv_sum, read_stride, u8_tensor
from hexnn_import.ops.kernel_io import i32_codes, range_out, u8_codes
from hexnn_import.ops.quant import qint32_one, step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register
from hexnn_import.ops.supernode_core import bias_in_prod_units, channel_scales, requantize_auto

#: Start of an auto output range for a (non-depthwise) convolution (SEMANTICS §5).
AUTO_START = (0.0, 0.5)


class _Supernode(Kernel):
    """Shared body of the flat supernodes; subclasses say how the bias is quantized."""

    def bias_codes(self, ctx: KernelContext, arr: np.ndarray) -> np.ndarray:
        """The bias codes in the op's dtype."""
        raise NotImplementedError

    def bias_step_zero(self, ctx: KernelContext, b_min: float, b_max: float) -> tuple[float, int]:
        """``(b_step, b_zero)`` of the bias tensor."""
        raise NotImplementedError

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``: exact product sum, then the §5 output stage."""
        x_arr, w_arr, in_min, in_max, w_min, w_max, stride, b_arr, b_min, b_max, o_min, o_max = inputs[:12]
        k_arr = inputs[12] if len(inputs) > 12 else None
        x = u8_tensor(ctx, x_arr, "input data")
        w = u8_tensor(ctx, w_arr, "weights")
        dout = w.shape[3]
        in_step, in_zero = step_zero(*ctx.sane_range(in_min, in_max, "input"))
        w_step, w_zero = step_zero(*ctx.sane_range(w_min, w_max, "weights"))
        prod = in_step * w_step
        b = self.read_bias(ctx, b_arr, dout)
        b_step, b_zero = self.bias_step_zero(ctx, *ctx.sane_range(b_min, b_max, "bias"))
        bias32 = bias_in_prod_units(b, b_zero, b_step, prod)
        k = channel_scales(ctx, k_arr, dout)
        out_min, out_max = ctx.scalar(o_min, "output min"), ctx.scalar(o_max, "output max")
        rng = autorange.initial_range(ctx, out_min, out_max, float(np.max(k)) * prod, AUTO_START)
        sh, sw = read_stride(ctx, stride)
        sums = conv_sum(ctx, x, in_zero, w, w_zero, sh, sw)
        q, lo, hi = requantize_auto(ctx, sums, prod, bias32, k, rng)
        return (q, *range_out(lo, hi))

    def read_bias(self, ctx: KernelContext, b_arr: np.ndarray, dout: int) -> np.ndarray:
        """The bias as a flat ``[dout]`` array of the op's dtype."""
        b = self.bias_codes(ctx, b_arr)
        if b.size != dout:
            raise ctx.fail(f"bias has {b.size} elements (shape {list(b.shape)}), "
                           f"expected [1,1,1,{dout}] (one per output channel)")
        return b.reshape(-1)


@register("Supernode_8x8p32to8")
class Supernode8x8p32to8(_Supernode):
    """Convolution + qint32 bias + requantize to quint8 (SEMANTICS §5; bias zero is 0)."""

    def bias_codes(self, ctx: KernelContext, arr: np.ndarray) -> np.ndarray:
        """qint32 codes."""
        return i32_codes(ctx, arr, "bias")

    def bias_step_zero(self, ctx: KernelContext, b_min: float, b_max: float) -> tuple[float, int]:
        """One qint32 code of the bias range, zero 0 (SEMANTICS §1, §5)."""
        return qint32_one(b_min, b_max), 0


@register("Supernode_8x8p8to8")
class Supernode8x8p8to8(_Supernode):
    """Convolution + quint8 bias + requantize to quint8 (SEMANTICS §5)."""

    def bias_codes(self, ctx: KernelContext, arr: np.ndarray) -> np.ndarray:
        """quint8 codes."""
        return u8_codes(ctx, arr, "bias")

    def bias_step_zero(self, ctx: KernelContext, b_min: float, b_max: float) -> tuple[float, int]:
        """quint8 step and zero of the bias range (SEMANTICS §1)."""
        return step_zero(b_min, b_max)
