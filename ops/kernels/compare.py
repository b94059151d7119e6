"""Quantized comparisons (QuantizedEqual_8 ... QuantizedGreaterEqual_8) and Select_8.

The comparisons compare the real values of two quint8 tensors with their own
ranges, broadcasting as their op texts say, and give a uint8 tensor of 0/1 -
as nnlib's device code does (op_compare_8.c ``compare_execute``, checked under
qemu-hexagon: tests/ops/test_hvx_compare.py): equal float32 ranges compare the
codes; different ones compare the float32 values op_quantize.c's HVX
``hvx_do_dequantize`` gives each code, with step
``fmaxf(1e-4f, flt_div_255(max - min))`` and zero
``saturate_u8(roundf_i32(-min / step))``.
Select_8 picks X or Y per element and requantizes both onto one output range.
"""
from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.float_ref import real_input
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.kernels.quantize import hvx_dequant_table
from hexnn_import.ops.nnlib_f32 import F, flt_div_255, roundf_i32, saturate_u8
from hexnn_import.ops.quant import adjust_range, quantize_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register


def device_values(a_range: tuple[float, float], b_range: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """What op_compare_8.c compares for each of the 256 codes of A and of B: the codes themselves when the float32
    ranges are equal, else the float32 values of ``hvx_do_dequantize`` (module doc)."""
    if F(a_range[0]) == F(b_range[0]) and F(a_range[1]) == F(b_range[1]):
        codes = np.arange(256, dtype=np.int32)
        return codes, codes
    tables = []
    for mn, mx in (a_range, b_range):
        step = max(F(1e-4), flt_div_255(F(F(mx) - F(mn))))
        zero = int(saturate_u8(roundf_i32(F(-F(mn)) / step)))
        tables.append(hvx_dequant_table(zero, step))
    return tables[0], tables[1]


class _QuantizedCompare(Kernel):
    """``out = 1 if real(A) OP real(B) else 0`` with numpy-style 4-D broadcasting (op texts).

    Both ranges must be sane (SEMANTICS §1). Shapes must match on each axis
    or be 1 there (``ops/broadcast.py``); the output has the broadcast shape
    and dtype uint8. Values are compared as the device does (:func:`device_values`).
    """

    relation: Callable[[np.ndarray, np.ndarray], np.ndarray] = operator.eq

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a_data, b_data, a_mn, a_mx, b_mn, b_mx = inputs
        a_range = ctx.sane_range(a_mn, a_mx, "input A")
        b_range = ctx.sane_range(b_mn, b_mx, "input B")
        a = u8_codes(ctx, require_4d(ctx, a_data, "input A data"), "input A data")
        b = u8_codes(ctx, require_4d(ctx, b_data, "input B data"), "input B data")
        a, b = broadcast_pair(ctx, a, b)
        va, vb = device_values(a_range, b_range)
        return (type(self).relation(va[a], vb[b]).astype(np.uint8),)


@register("QuantizedEqual_8")
class QuantizedEqual8(_QuantizedCompare):
    """``real(A) == real(B)`` elementwise, 0/1 uint8 (see :class:`_QuantizedCompare`)."""

    relation = operator.eq


@register("QuantizedNotEqual_8")
class QuantizedNotEqual8(_QuantizedCompare):
    """``real(A) != real(B)`` elementwise, 0/1 uint8 (see :class:`_QuantizedCompare`)."""

    relation = operator.ne


@register("QuantizedLess_8")
class QuantizedLess8(_QuantizedCompare):
    """``real(A) < real(B)`` elementwise, 0/1 uint8 (see :class:`_QuantizedCompare`)."""

    relation = operator.lt


@register("QuantizedLessEqual_8")
class QuantizedLessEqual8(_QuantizedCompare):
    """``real(A) <= real(B)`` elementwise, 0/1 uint8 (see :class:`_QuantizedCompare`)."""

    relation = operator.le


@register("QuantizedGreater_8")
class QuantizedGreater8(_QuantizedCompare):
    """``real(A) > real(B)`` elementwise, 0/1 uint8 (see :class:`_QuantizedCompare`)."""

    relation = operator.gt


@register("QuantizedGreaterEqual_8")
class QuantizedGreaterEqual8(_QuantizedCompare):
    """``real(A) >= real(B)`` elementwise, 0/1 uint8 (see :class:`_QuantizedCompare`)."""

    relation = operator.ge


@register("Select_8")
class Select8(Kernel):
    """X where the condition is true, else Y; all three of the same shape (op text).

    Choices where the documents are silent (they follow hexagon_nn's
    reference): the condition has no range - a code other than 0 is true (the
    comparisons give 0/1); output range = adjust_range(min(x_min, y_min),
    max(x_max, y_max)) (SEMANTICS §1); the chosen value is requantized
    from its dequantized float64 value with round-half-away,
    ``q = sat_u8(round_away((real - out_min) / out_step))`` (§2), so an
    input whose range equals the output range keeps its codes. No broadcasting.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        cond_data, x_data, x_mn, x_mx, y_data, y_mn, y_mx = inputs
        cond = u8_codes(ctx, require_4d(ctx, cond_data, "condition"), "condition")
        x, x_min, x_max = real_input(ctx, x_data, x_mn, x_mx, "input X")
        y, y_min, y_max = real_input(ctx, y_data, y_mn, y_mx, "input Y")
        if not cond.shape == x.shape == y.shape:
            raise ctx.fail(f"shapes differ: condition {list(cond.shape)}, X {list(x.shape)}, "
                           f"Y {list(y.shape)}; Select_8 requires one shape")
        out_min, out_max = adjust_range(min(x_min, y_min), max(x_max, y_max))
        chosen = np.where(cond != 0, x, y)
        return (quantize_u8(chosen, out_min, out_max), *range_out(out_min, out_max))
