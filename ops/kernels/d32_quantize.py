"""float -> d32 quantization: AutoQuantize_d32, QuantizeForTest_d32 (early name QuantizeForTestd32),
QuantizeForTest_16b_d32 (SEMANTICS.md §2, §4, §7; op texts).

All take a float tensor and the four optional padding inputs of
Convert_to_d32 (depth-before, width-left, minimum width-right, top/bottom).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.ops.d32_io import d32_output, flat_input, read_padding, run_flat
from hexnn_import.ops.kernel_io import float_data, range_out, require_4d
from hexnn_import.ops.kernels.quantize import AUTO_MIN_WIDTH
from hexnn_import.ops.nnlib_f32 import F, adjust_minmax_for_zero, roundf_i32
from hexnn_import.ops.quant import dequantize_u8, round_away, sat16
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Codes of a 16-bit symmetric range (-M, M): real = q * M / 2**15 (SEMANTICS §4).
Q16_SCALE = 32768.0


def _wants_ref(ctx: KernelContext) -> bool:
    """Output 3 (the float copy) is given unless the node declares only 3 outputs."""
    return ctx.n_outputs is None or ctx.n_outputs >= 4


@register("AutoQuantize_d32")
class AutoQuantizeD32(Kernel):
    """AutoQuantize (SEMANTICS §2) with the codes laid out as d32 with the requested padding.

    The arithmetic is the flat AutoQuantize kernel's, run on the input.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        q, mn, mx = run_flat(ctx, "AutoQuantize", [flat_input(ctx, inputs[0], "input data")])
        return (d32_output(q, read_padding(ctx, inputs, 1)), mn, mx)


@register("QuantizeForTest_d32", "QuantizeForTestd32")
class QuantizeForTestD32(Kernel):
    """Float to d32 quint8 plus an optional float copy, as op_quantfortest_d32.c computes it (float32).

    Range: ``min = fminf(0, min(x))``, ``max = fmaxf(fmaxf(0, max(x)), min + 0.001f)``, then
    ``adjust_minmax_for_zero`` when ``min < 0``. Codes (``quantize_with_dequant``):
    ``saturate_u8(roundf_i32((x - min) * (255f / (max - min))))``; output 3, when the node declares
    it (or in ``run_op``), is ``(float)q * ((max - min) / 255f) + min``.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        x = float_data(ctx, require_4d(ctx, flat_input(ctx, inputs[0], "input data"), "input data"), "input data")
        if x.size == 0:
            raise ctx.fail("input data is empty, it has no range to quantize over")
        x = np.asarray(x, np.float32)
        mn = min(F(0.0), F(x.min()))
        mx = max(max(F(0.0), F(x.max())), F(mn + F(0.001)))
        if mn < 0:
            _, mn, mx = adjust_minmax_for_zero(mn, mx)
        qscale = F(F(255.0) / F(mx - mn))
        q = np.clip(roundf_i32((x - mn) * qscale), 0, 255).astype(np.uint8)
        out = (d32_output(q, read_padding(ctx, inputs, 1)), *range_out(float(mn), float(mx)))
        if _wants_ref(ctx):
            deq = F(F(mx - mn) / F(255.0))
            out += (q.astype(np.float32) * deq + mn,)
        return out


@register("QuantizeForTest_16b_d32")
class QuantizeForTest16bD32(Kernel):
    """float -> 16-bit symmetric codes in the d32 arrangement (int16 elements), plus an optional float copy.

    The text is a copy of QuantizeForTest_d32's with a qint16 output; the
    arithmetic follows SEMANTICS §2 (range of the data) and §4 (16-bit ranges
    are symmetric, codes -32768..32767): ``lo = min(0, min(x))``,
    ``hi = max(0, max(x), lo + 1e-4)``, ``M = max(-lo, hi)``, output range
    ``(-M, M)``, ``q = sat16(round_away(x * 32768 / M))`` (so ``real = q * M / 32768``;
    ``x = M`` saturates to 32767). Output 3 is ``q * M / 32768`` as float32,
    with M the reported float32 max. NaN/Inf in the data is an error. The
    d32 tensor holds int16 elements in the §7 arrangement.
    """

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        x = float_data(ctx, require_4d(ctx, flat_input(ctx, inputs[0], "input data"), "input data"), "input data")
        if x.size == 0:
            raise ctx.fail("input data is empty, it has no range to quantize over")
        lo = min(0.0, float(x.min()))
        hi = max(0.0, float(x.max()), lo + AUTO_MIN_WIDTH)
        m = float(np.float32(max(-lo, hi)))  # the reported max; codes use the value a reader sees
        q = sat16(round_away(x * (Q16_SCALE / m))).astype(np.int16)
        out = (d32_output(q, read_padding(ctx, inputs, 1)), *range_out(-m, m))
        if _wants_ref(ctx):
            out += ((q.astype(np.float64) * (m / Q16_SCALE)).astype(np.float32),)
        return out
