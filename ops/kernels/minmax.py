"""Elementwise max/min of quint8 tensors as nnlib computes them (hexagon/ops/src/op_minimum_maximum.c):
QuantizedMaximum / QuantizedMinimum (nnlib QuantizedMaximum_8 / QuantizedMinimum_8), and the names
QuantizedMax_8 / QuantizedMin_8 as the project's catalog describes them (elementwise, same arithmetic)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.nnlib_f32 import F, level_size_zero
from hexnn_import.ops.node_cache import node_memo
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: ``SHIFT`` of op_minimum_maximum.c: the requantization multiplier has 12 fraction bits.
SHIFT = 12


def output_range(ctx: KernelContext, inputs: Sequence[np.ndarray]) -> tuple[np.float32, np.float32]:
    """``minmax_execute``'s output range: inputs 6/7 when given (8 inputs), input 6 and ``fmaxf(a_max, b_max)``
    (7 inputs), else ``[fminf(a_min, b_min), fmaxf(a_max, b_max)]``; used as is (no zero-fixing)."""
    a_mn, a_mx, b_mn, b_mx = (F(ctx.scalar(inputs[i], n)) for i, n in
                              ((2, "input A min"), (3, "input A max"), (4, "input B min"), (5, "input B max")))
    hi = F(ctx.scalar(inputs[7], "output max")) if len(inputs) > 7 else max(a_mx, b_mx)
    lo = F(ctx.scalar(inputs[6], "output min")) if len(inputs) > 6 else min(a_mn, b_mn)
    if lo >= hi:
        raise ctx.fail(f"output min {lo} >= output max {hi} (nnlib: minimum/maximum output min >= output max)")
    return lo, hi


def requant_table(in_min: np.float32, in_max: np.float32, out_min: np.float32, out_max: np.float32) -> np.ndarray:
    """``requantize_to_outrange`` for the 256 codes (uint8), modelled from ``jointly_quantize`` (HVX only).

    ``mult = round(4096f * (in_step / out_step))`` (saturating to int32 as on Hexagon), used as an
    unsigned 16-bit number (its low half, ``Q6_Ww_vmpy_VhVuh``); per code:
    ``usat8(sat16(sat16(((x - in_zero) * mult + 2048) >> 12) + out_zero))`` (``vasr:rnd:sat``,
    ``vadd:sat``, ``vpack:sat``). Steps and zeros from ``get_qu8_level_size_zero``.
    """
    in_step, in_zero = level_size_zero(in_min, in_max)
    out_step, out_zero = level_size_zero(out_min, out_max)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        v = float(F(F(4096.0) * F(in_step / out_step)))
    r = np.nan if np.isnan(v) else np.floor(abs(v) + 0.5) * np.sign(v)  # C round(): half away from zero
    mult = -1 if np.isnan(r) else int(max(-2.0 ** 31, min(2.0 ** 31 - 1, r)))
    d = np.arange(256, dtype=np.int64) - in_zero
    s = np.clip((d * (mult & 0xFFFF) + (1 << (SHIFT - 1))) >> SHIFT, -32768, 32767)
    return np.clip(s + out_zero, 0, 255).astype(np.uint8)


class _MinMax(Kernel):
    """Shared body: each input moved onto the output range unless its range equals it, then vmin/vmax."""

    take_max = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a = u8_codes(ctx, inputs[0], "input A data")
        b = u8_codes(ctx, inputs[1], "input B data")
        lo, hi = output_range(ctx, inputs)
        moved = []
        for codes, i in ((a, 2), (b, 4)):
            mn, mx = F(ctx.scalar(inputs[i], "input min")), F(ctx.scalar(inputs[i + 1], "input max"))
            if mn != lo or mx != hi:
                table = node_memo(ctx.state, "minmax_requant", (float(mn), float(mx), float(lo), float(hi)),
                                  lambda mn=mn, mx=mx: requant_table(mn, mx, lo, hi))
                codes = table.take(codes)
            moved.append(codes)
        qa, qb = broadcast_pair(ctx, *moved)
        pick: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.maximum if self.take_max else np.minimum
        return (pick(qa, qb), *range_out(float(lo), float(hi)))


_DOC = """

    nnlib ``minmax_execute`` (op_minimum_maximum.c). Output range: inputs 6
    and 7 when both are given; input 6 and ``max(a_max, b_max)`` with 7
    inputs; else ``[min(a_min, b_min), max(a_max, b_max)]`` (for both ops);
    not zero-fixed; ``min >= max`` is an error. An input whose range differs
    from the output range is requantized onto it with nnlib's 12-bit
    fixed-point multiplier (:func:`requant_table`, a model of the HVX
    ``jointly_quantize``); then ``{f}`` of the codes. Shapes broadcast as
    numpy does (nnlib: its HVX same-shape / scalar / depth paths or
    ``nn_elementwise_with_broadcast``). Input ranges are used as given
    (ranges that exclude 0 included).
    """


@register("QuantizedMaximum", "QuantizedMax_8")
class QuantizedMaximum(_MinMax):
    __doc__ = "Elementwise ``max(a, b)`` of quint8 tensors." + _DOC.format(f="max")
    take_max = True


@register("QuantizedMinimum", "QuantizedMin_8")
class QuantizedMinimum(_MinMax):
    __doc__ = "Elementwise ``min(a, b)`` of quint8 tensors." + _DOC.format(f="min")
    take_max = False
