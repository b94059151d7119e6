"""Binary quint8 arithmetic: QuantizedAdd_8p8to32, QuantizedSub_8p8to32, QuantizedMul_8x8to32,
QuantizedMul_8x8to8 (SEMANTICS.md §1, §3, §6).

Broadcasting (all ops here and in :mod:`add8`, :mod:`minmax`): numpy's rule
on 4-D shapes, as the texts of Add_8p8to32, Sub_8p8to32 and Mul_8x8to8
state ("must match or ... has a dimension with size 1", "all broadcast
modes"); the texts of Add_8p8to8 and Mul_8x8to32 say nothing, and the same
rule is used for them (what a TFLite/ONNX user expects). A scalar operand is
a ``[1,1,1,1]`` tensor and broadcasts everywhere.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.exact_q8 import code_values, combine, quantize_values
from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.quant import adjust_range, sat_u8, step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register

Range = tuple[float, float]


def read_operands(ctx: KernelContext, inputs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, Range, Range]:
    """``(a, b, a_range, b_range)`` from inputs 0..5: codes broadcast to one 4-D shape, sane ranges."""
    a_arr, b_arr, a_mn, a_mx, b_mn, b_mx = inputs[:6]
    a_range = ctx.sane_range(a_mn, a_mx, "input A")
    b_range = ctx.sane_range(b_mn, b_mx, "input B")
    a = u8_codes(ctx, a_arr, "input A data")
    b = u8_codes(ctx, b_arr, "input B data")
    a, b = broadcast_pair(ctx, a, b)
    return a, b, a_range, b_range


def pair_table(a_range: Range, b_range: Range, op: str, out_range: Range) -> np.ndarray:
    """256x256 pre-saturation output codes of ``a_real (op) b_real`` on ``out_range``, exact (SEMANTICS §6)."""
    table = combine(code_values(*a_range), code_values(*b_range), op)
    return quantize_values(table, *out_range)


def zero_fixed(lo: float, hi: float) -> Range:
    """``adjust_range(lo, hi)``; a zero-width result stays ``[0, 0]`` (every product is 0, all codes 0)."""
    return adjust_range(lo, hi)


def add_8p8to32(a: np.ndarray, a_range: Range, b: np.ndarray, b_range: Range,
                sign: int) -> tuple[np.ndarray, float]:
    """``(acc, M)``: qint32 ``a + sign * b`` on the output range ``(-M, M)`` (SEMANTICS §3 by analogy).

    The arithmetic of QuantizedBiasAdd_8p8to32 (§3) with B broadcast by shape:
    ``M = max(|a_min|, a_max, |b_min|, b_max) * 2**17``, ``one = 2*M / 2**32``,
    ``acc = trunc((a - a_zero) * (a_step/one) + sign * (b - b_zero) * (b_step/one) + 0.5)``
    in float32 (the gains rounded once from float64). A zero-width operand range
    gives step 0 and zero code 0 (its values are 0, its gain 0, as in
    op_biasadd.c); both ranges zero-width give all zeros on ``(0, 0)``. With ``sign = +1`` and
    B of shape ``[1,1,1,d]`` it equals QuantizedBiasAdd_8p8to32 bit for bit,
    so the prepare pass that turns one into the other changes nothing.
    """
    a_step, a_zero = step_zero(*a_range)
    b_step, b_zero = step_zero(*b_range)
    m = max(abs(a_range[0]), a_range[1], abs(b_range[0]), b_range[1]) * 2.0 ** 17
    if m == 0.0:
        # both ranges [0, 0]: every real value is 0; op_biasadd.c would divide 0 by a 0 level
        # size here (NaN gains), the engine gives the all-zero tensor on (0, 0) (SEMANTICS §1)
        return np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=np.int32), 0.0
    one = 2.0 * m / 2.0 ** 32
    ga = np.float32(a_step / one)
    gb = np.float32(sign * b_step / one)
    av = (a.astype(np.float32) - np.float32(a_zero)) * ga
    bv = (b.astype(np.float32) - np.float32(b_zero)) * gb
    return np.trunc(av + bv + np.float32(0.5)).astype(np.int32), m


class _AddSub8p8to32(Kernel):
    """Shared body of QuantizedAdd_8p8to32 / QuantizedSub_8p8to32."""

    sign = 1

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a, b, a_range, b_range = read_operands(ctx, inputs)
        acc, m = add_8p8to32(a, a_range, b, b_range, self.sign)
        return (acc, *range_out(-m, m))


@register("QuantizedAdd_8p8to32")
class QuantizedAdd8p8to32(_AddSub8p8to32):
    """``a + b`` of quint8 tensors into qint32, broadcasting (SEMANTICS §3 as BiasAdd_8p8to32).

    Choice where the documents are silent: the output range and arithmetic
    are those of QuantizedBiasAdd_8p8to32 (see :func:`add_8p8to32`): range
    ``(-M, M)``, ``M = max(|a_min|, a_max, |b_min|, b_max) * 2**17``.
    """

    sign = 1


@register("QuantizedSub_8p8to32")
class QuantizedSub8p8to32(_AddSub8p8to32):
    """``a - b`` of quint8 tensors into qint32, broadcasting; as QuantizedAdd_8p8to32 with B's gain negated."""

    sign = -1


@register("QuantizedMul_8x8to32")
class QuantizedMul8x8to32(Kernel):
    """``(a - a_zero) * (b - b_zero)`` exactly in int32, broadcasting (SEMANTICS §3).

    Output range as the other 8x8 -> 32 products of §3: ``one = a_step *
    b_step``, ``(-2**31 * one, 2**31 * one)``.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a, b, a_range, b_range = read_operands(ctx, inputs)
        a_step, a_zero = step_zero(*a_range)
        b_step, b_zero = step_zero(*b_range)
        prod = (a.astype(np.int32) - np.int32(a_zero)) * (b.astype(np.int32) - np.int32(b_zero))
        one = a_step * b_step
        return (prod, *range_out(-2.0 ** 31 * one, 2.0 ** 31 * one))


@register("QuantizedMul_8x8to8")
class QuantizedMul8x8to8(Kernel):
    """``a * b`` of quint8 tensors into quint8, numpy broadcasting ("all broadcast modes").

    Choices where the documents are silent: the output range is the range of
    every possible product, ``[min, max]`` of the four products of the range
    ends (it always holds 0 and nothing saturates), zero-fixed with
    adjust_range; when an operand range is zero-width every product is 0 and
    the output range stays ``[0, 0]`` (all codes 0; quantized over
    hexagon_nn's width floor 1e-18, include/quantize.h). Each
    result is ``sat_u8(round_away((a_real * b_real - out_min) / out_step))``
    computed from exact rationals, as SEMANTICS §6 fixes for Add; the device's
    fixed-point path may differ from it by one code.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a, b, a_range, b_range = read_operands(ctx, inputs)
        ends = [x * y for x in a_range for y in b_range]
        out_range = zero_fixed(min(ends), max(ends))
        table = pair_table(a_range, b_range, "mul", out_range)
        return (sat_u8(table[a, b]), *range_out(*out_range))
