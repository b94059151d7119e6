"""QuantizedSqrt_8, QuantizedRecip_8 and QuantizedDiv_8 on quint8 data.

QuantizedSqrt_8 follows hexagon_nn's op_sqrt.c (a 256-entry code table) bit for bit. Recip and Div follow
op_recip.c and op_div.c as the device runs them (float32 with fused multiply-adds, HVX only moving bytes),
checked against that code under qemu-hexagon (issue 36; ``recip_div_device``).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.kernels.recip_div_device import (code_values, div_auto_range, div_tables, recip_float_path,
                                                       recip_table, step_255)
from hexnn_import.ops.nnlib_f32 import F
from hexnn_import.ops.nnlib_f32_nonlin import read_any_range
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
    """``1 / x`` elementwise: op_recip.c ``recip_execute`` as the device runs it (float32, ``recip_div_device``).

    Under 256 elements every element's reciprocal in float32 and the range of those with 0 put in (an exact 0
    gives +Inf and code 255, as on the device); from 256 elements the 256-entry table of the codes the C
    computes. Where the C leaves things unset the engine keeps an answer of its own: a table entry the C never
    writes (the code whose value is exactly 0; the zero code between the split range's ends) gives the
    reciprocal saturated onto the range (+Inf: 255); an input range excluding 0 (or inverted) from 256 elements,
    where the C writes neither codes nor range, is refused.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        lo, hi = read_any_range(ctx, mn_arr, mx_arr, "input")
        x = u8_codes(ctx, require_4d(ctx, data, "input data"), "input data")
        if x.size < 256:
            q, mn, mx = recip_float_path(x, lo, hi)
            return (q, *range_out(mn, mx))
        got = recip_table(x, lo, hi)
        if got is None:
            raise ctx.fail(f"input range [{lo}, {hi}] does not hold 0 at or inside its ends and the input has "
                           f"{x.size} >= 256 elements: op_recip.c recip_execute then writes neither the code table "
                           "nor the output range (none of its three branches runs)")
        table, _, mn, mx = got
        return (table[x], *range_out(mn, mx))


@register("QuantizedDiv_8")
class QuantizedDiv8(Kernel):
    """``a / b``: op_div.c ``div_execute`` as the device runs it (float32, ``recip_div_device``).

    ``b`` is ``[1,1,1,d]`` (div_check). d == 1, 6 inputs (div_scalar_execute): the divisor ``s = fmaf(b, step,
    b_min)``; ``s > 0`` keeps the codes with range ``(a_min / s, a_max / s)``, else codes ``255 - a`` with range
    ``(a_max / s, a_min / s)`` (no zero is put in). d == 1, 8 inputs (div_scalar_static_minmax_execute): the
    static range as given and a 256-code table through ``quantize_uint8``. d > 1 (div_depthwise_execute): the
    range from A's ends over every divisor with 0 put in (or the static one), one table per divisor, element i
    (flat) using divisor ``i mod d``. A divisor of 0 is an error ("division by zero"), as in the C.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        if len(inputs) not in (6, 8):
            raise ctx.fail(f"got {len(inputs)} inputs: op_div.c div_check wants 6 or 8 (static output min and max "
                           "together)")
        a_data, b_data, a_mn, a_mx, b_mn, b_mx = inputs[:6]
        a = u8_codes(ctx, require_4d(ctx, a_data, "input A data"), "input A data")
        b = u8_codes(ctx, require_4d(ctx, b_data, "input B data"), "input B data")
        a_lo, a_hi = read_any_range(ctx, a_mn, a_mx, "input A")
        b_lo, b_hi = read_any_range(ctx, b_mn, b_mx, "input B")
        if b.shape[:3] != (1, 1, 1):
            raise ctx.fail(f"input B has shape {list(b.shape)}: op_div.c divides by a scalar or a 1-D [1,1,1,d] "
                           "tensor only")
        den = code_values(b.ravel(), b_lo, step_255(b_lo, b_hi))
        if np.any(den == 0):
            raise ctx.fail("division by zero: input B holds the value 0")
        static = read_any_range(ctx, inputs[6], inputs[7], "static output") if len(inputs) == 8 else None
        if den.size == 1 and static is None:
            s = F(den[0])
            if s > 0:
                return (a.copy(), *range_out(F(a_lo / s), F(a_hi / s)))
            return ((255 - a).astype(np.uint8), *range_out(F(a_hi / s), F(a_lo / s)))
        lo, hi = static if static is not None else div_auto_range(den, a_lo, a_hi)
        tables = div_tables(den, a_lo, a_hi, lo, hi)
        flat = a.ravel()
        return (tables[np.arange(flat.size) % den.size, flat].reshape(a.shape), *range_out(lo, hi))
