"""Quantized comparisons (QuantizedEqual_8 ... QuantizedGreaterEqual_8) and Select_8.

The comparisons compare the real values of two quint8 tensors with their own
ranges, broadcasting as their op texts say, and give a uint8 tensor of 0/1 -
as nnlib's device code does (op_compare_8.c ``compare_execute``, checked under
qemu-hexagon: tests/ops/test_hvx_compare.py): equal float32 ranges compare the
codes; different ones compare the float32 values op_quantize.c's HVX
``hvx_do_dequantize`` gives each code, with step
``fmaxf(1e-4f, flt_div_255(max - min))`` and zero
``saturate_u8(roundf_i32(-min / step))``.
Select_8 picks X or Y per element and requantizes both onto one output range, as the device does.
"""
from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.kernels.quantize import hvx_dequant_table
from hexnn_import.ops.nnlib_f32 import (
    F,
    adjust_minmax_for_zero,
    flt_div_255,
    quantize_uint8,
    roundf_i32,
    saturate_u8,
    trunc_i32,
)
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


def joint_table(offset: int, mult: int, qzero: int) -> np.ndarray:
    """hvx_inlines.h ``jointly_quantize`` (shift 12) for the 256 codes: ``usat8(sat16(sat16(((x - offset) * mult
    + 2048) >> 12) + qzero))``, ``mult`` read as an unsigned halfword (``vmpy:VhVuh``, ``vasr:rnd:sat``)."""
    d = np.arange(256, dtype=np.int64) - offset
    s = np.clip((d * (mult & 0xFFFF) + 2048) >> 12, -32768, 32767)
    return np.clip(s + qzero, 0, 255).astype(np.uint8)


def select_tables(a_range: tuple[F, F], b_range: tuple[F, F]) -> tuple[np.ndarray, np.ndarray, F, F]:
    """op_select_8.c ``select_execute``: (A's and B's code tables onto the output range, out min, out max), float32
    as written: levels ``(max - min) / 255``, the range ``adjust_minmax_for_zero(fminf(mins), fmaxf(maxes))``,
    offsets and zero ``quantize_uint8(0, ..)``, multipliers ``(int)(4096 * (level / out_level))``."""
    _, lo, hi = adjust_minmax_for_zero(min(a_range[0], b_range[0]), max(a_range[1], b_range[1]))
    out_level = F(F(hi - lo) / F(255))
    qzero = int(quantize_uint8(0.0, lo, hi))
    tables = []
    for mn, mx in (a_range, b_range):
        mult = int(trunc_i32(F(F(4096) * F(F(F(mx - mn) / F(255)) / out_level))))
        tables.append(joint_table(int(quantize_uint8(0.0, mn, mx)), mult, qzero))
    return tables[0], tables[1], lo, hi


@register("Select_8")
class Select8(Kernel):
    """X where the condition byte is not 0, else Y; all three of the same shape (op text), as nnlib's device code
    computes it (op_select_8.c ``qselect_hvx``, checked under qemu-hexagon: tests/ops/test_hvx_select.py): both
    inputs moved onto the output range by ``jointly_quantize`` (:func:`select_tables`). No broadcasting."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        cond_data, x_data, x_mn, x_mx, y_data, y_mn, y_mx = inputs
        cond = u8_codes(ctx, require_4d(ctx, cond_data, "condition"), "condition")
        x = u8_codes(ctx, require_4d(ctx, x_data, "input X"), "input X")
        y = u8_codes(ctx, require_4d(ctx, y_data, "input Y"), "input Y")
        xr = tuple(F(v) for v in ctx.sane_range(x_mn, x_mx, "input X"))
        yr = tuple(F(v) for v in ctx.sane_range(y_mn, y_mx, "input Y"))
        if not cond.shape == x.shape == y.shape:
            raise ctx.fail(f"shapes differ: condition {list(cond.shape)}, X {list(x.shape)}, "
                           f"Y {list(y.shape)}; Select_8 requires one shape")
        tx, ty, lo, hi = select_tables(xr, yr)
        return (np.where(cond != 0, tx[x], ty[y]), *range_out(lo, hi))
