"""QuantizedSqrt_8, QuantizedRecip_8 and QuantizedDiv_8 on quint8 data.

QuantizedSqrt_8 follows hexagon_nn's op_sqrt.c (a 256-entry code table) bit for bit. Recip and Div
(op_recip.c, op_div.c: HVX code, not modelled yet): the op texts (hexagon_nn_ops.txt) say what each op computes but not how the
bits come out; following SEMANTICS.md §6 (stated there for softmax, sigmoid
and tanh), each kernel computes in float64 from the dequantized inputs
(§1) and quantizes the result with round-half-away onto its output range
(§2). How each output range is chosen is written on each kernel.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.float_ref import finite_extent, quantize_auto, real_input
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.kernels.quantize import quantize_adjusted
from hexnn_import.ops.nnlib_f32 import F
from hexnn_import.ops.nnlib_f32_nonlin import read_any_range
from hexnn_import.ops.quant import dequantize_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register


#: op_sqrt.c's byte table: ``round(sqrt(255 * c))`` for codes c = 0..255 (the code of sqrt on a range that starts
#: at 0: ``sqrt(c * max/255) / (sqrt(max)/255)``); equal to nnlib's ``sqrt_lut`` entry for entry.
SQRT_LUT = np.minimum(np.floor(np.sqrt(255.0 * np.arange(256)) + 0.5), 255).astype(np.uint8)


@register("QuantizedSqrt_8")
class QuantizedSqrt8(Kernel):
    """``sqrt(x)`` elementwise: op_sqrt.c ``sqrt_execute`` (an HVX 256-entry table lookup).

    Codes are ``SQRT_LUT[x]`` whatever the input range (the table assumes ``in_min == 0``); the output range
    is ``(sqrtf(in_min), sqrtf(in_max))``. ``in_min < 0`` is an error ("does not support negative
    numbers"), as in the C; ``in_min > 0`` is accepted and computed as the C does (codes unchanged).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        in_min, in_max = read_any_range(ctx, mn_arr, mx_arr, "input")
        if in_min < 0:
            raise ctx.fail(f"input min {in_min} is negative; sqrt does not support negative numbers")
        x = u8_codes(ctx, data, "input data")
        with np.errstate(invalid="ignore"):
            out_max = np.sqrt(F(in_max))
        return (SQRT_LUT[x], *range_out(np.sqrt(F(in_min)), out_max))


@register("QuantizedRecip_8")
class QuantizedRecip8(Kernel):
    """``1 / x`` elementwise; output range from the observed result.

    Choices where the documents are silent (the range rule follows
    hexagon_nn's reference, which spans the reciprocals present):
    output range = ``[min(0, min(1/x)), max(0, max(1/x))]`` over the
    elements with ``x != 0``, floored to a width of 1e-4 and zero-fixed with
    adjust_range (AutoQuantize's rule, SEMANTICS §2). An element equal to 0
    has reciprocal +Inf and saturates to code 255 (IEEE ``1/+0``); it does not
    widen the range. Computed in float64, quantized with round-half-away.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        nonzero = x != 0
        y = np.full(x.shape, np.inf)
        np.divide(1.0, x, out=y, where=nonzero)
        return quantize_auto(y, *finite_extent(y))


@register("QuantizedDiv_8")
class QuantizedDiv8(Kernel):
    """``a / b`` with ``b`` of shape ``[1,1,1,d]`` broadcast along a's depth.

    Per the op text ``b`` has shape ``[1,1,1,d]`` with ``d`` equal to a's
    depth; ``d == 1`` (a scalar divisor, which hexagon_nn also accepts) is
    allowed too. A zero divisor is an error. Output range: inputs 6, 7
    ("static min/max") when given - finite, ``min <= max``, zero-fixed with
    adjust_range; otherwise derived from the formula: the quotients of a's
    range ends by every divisor, ``[min(0, min(a_end / b)), max(0,
    max(a_end / b))]``, floored to a width of 1e-4 and zero-fixed
    (AutoQuantize's rule, SEMANTICS §2). Computed in float64 from the
    dequantized inputs, quantized with round-half-away (SEMANTICS §6 recipe);
    results outside a static range saturate.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        if len(inputs) == 7:
            raise ctx.fail("got 7 inputs: static output min and max must be given together (6 or 8 inputs)")
        a_data, b_data, a_mn, a_mx, b_mn, b_mx = inputs[:6]
        a, a_min, a_max = real_input(ctx, a_data, a_mn, a_mx, "input A")
        b_min, b_max = ctx.sane_range(b_mn, b_mx, "input B")
        b_codes = u8_codes(ctx, require_4d(ctx, b_data, "input B data"), "input B data")
        depth = a.shape[3]
        if b_codes.shape[:3] != (1, 1, 1) or b_codes.shape[3] not in (1, depth):
            raise ctx.fail(f"input B has shape {list(b_codes.shape)}, expected [1,1,1,{depth}] "
                           f"(or [1,1,1,1]) for input A of shape {list(a.shape)}")
        b = dequantize_u8(b_codes, b_min, b_max)
        if np.any(b == 0):
            raise ctx.fail("division by zero: input B holds the value 0")
        y = a / b
        if len(inputs) == 8:
            lo, hi = ctx.finite_range(inputs[6], inputs[7], "static output")
            return quantize_adjusted(ctx, y, lo, hi)
        ends = np.concatenate([a_min / b.ravel(), a_max / b.ravel()])
        return quantize_auto(y, float(ends.min()), float(ends.max()))
