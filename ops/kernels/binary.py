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

import numpy as np

from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.kernel_io import range_out, u8_codes
from hexnn_import.ops.nnlib_f32 import F, adjust_minmax_for_zero, level_size_zero, roundf_i32
from hexnn_import.ops.nnlib_f32_nonlin import read_any_range
from hexnn_import.ops.registry import Kernel, KernelContext, register

Range = tuple[float, float]


def addsub_832(a: np.ndarray, a_range: Range, b: np.ndarray, b_range: Range,
               sub: bool) -> tuple[np.ndarray, np.float32] | None:
    """``(acc, out_max)`` of op_addsubmul_8to32.c ``addsub_832_execute``, or None ("bad input scale").

    ``step, zero = get_qu8_level_size_zero(min, max)`` per operand (float32); the operand of the larger
    ``|step|`` gets the int16 gain ``0x7F80``, the other ``roundf_i32(step * 32640f / fmaxf(1e-10f, |big
    step|))``; Sub negates B's gain; ``acc = ka*a + kb*b - (ka*a_zero + kb*b_zero)`` in int32 (exact: at
    most 2 * 32640 * 255 in magnitude) and the output range is ``(-M, M)`` with
    ``M = (float)(2^31 / 32640.0) * largest_step``. None when the larger step is not positive.
    """
    a_step, a_zero = level_size_zero(*a_range)
    b_step, b_zero = level_size_zero(*b_range)
    k = F(0x7F80)
    if abs(a_step) > abs(b_step):
        largest, ka, kb = a_step, 0x7F80, int(roundf_i32(F(b_step * k) / max(F(1e-10), F(abs(a_step)))))
    else:
        largest, ka, kb = b_step, int(roundf_i32(F(a_step * k) / max(F(1e-10), F(abs(b_step))))), 0x7F80
    if not largest > 0.0:
        return None
    if sub:
        kb = -kb
    offs = ka * a_zero + kb * b_zero
    acc = np.int32(ka) * a.astype(np.int32) + np.int32(kb) * b.astype(np.int32) - np.int32(offs)
    return acc, F(F(2.0 ** 31 / 0x7F80) * largest)


class _AddSub8p8to32(Kernel):
    """Shared body of QuantizedAdd_8p8to32 / QuantizedSub_8p8to32 (``addsub_832_execute``)."""

    sub = False

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (a_mn, a_mx), (b_mn, b_mx) = (read_any_range(ctx, inputs[2 + 2 * i], inputs[3 + 2 * i], f"input {n}")
                                      for i, n in enumerate("AB"))
        a, b = broadcast_pair(ctx, u8_codes(ctx, inputs[0], "input A data"), u8_codes(ctx, inputs[1], "input B data"))
        res = addsub_832(a, (a_mn, a_mx), b, (b_mn, b_mx), self.sub)
        if res is None:
            raise ctx.fail(f"bad input scale: input ranges [{a_mn}, {a_mx}] and [{b_mn}, {b_mx}] both have "
                           "zero (or negative) width (addsub_832_execute)")
        acc, out_max = res
        return (acc, *range_out(-out_max, out_max))


@register("QuantizedAdd_8p8to32")
class QuantizedAdd8p8to32(_AddSub8p8to32):
    """``a + b`` of quint8 tensors into qint32, broadcasting: op_addsubmul_8to32.c ``addsub_832_execute``.

    Codes are ``ka*(a - a_zero) + kb*(b - b_zero)`` with int16 gains in the ratio of the steps (the
    larger 0x7F80); output range ``+-(2^31 / 0x7F80) * largest_step`` (see :func:`addsub_832`). As the
    C, any finite input ranges are accepted (ranges that exclude 0 have their zero code saturated).
    """

    sub = False


@register("QuantizedSub_8p8to32")
class QuantizedSub8p8to32(_AddSub8p8to32):
    """``a - b`` of quint8 tensors into qint32, broadcasting: ``addsub_832_execute`` with B's gain negated."""

    sub = True


@register("QuantizedMul_8x8to32")
class QuantizedMul8x8to32(Kernel):
    """``(a - a_zero) * (b - b_zero) * 128`` in int32, broadcasting: op_addsubmul_8to32.c ``mul_832_execute``.

    ``a_zero, a_step = get_qu8_level_size_zero(a_min, a_max)`` (float32, include/quantize.h), the same
    for B; output range ``(-M, M)`` with ``M = a_step * b_step * 2**24`` in float32 (so one code is
    ``a_step * b_step / 128``). As the C, any finite input ranges are accepted (also ranges that
    exclude 0: their zero code saturates to 0 or 255).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a_arr, b_arr = inputs[:2]
        (a_mn, a_mx), (b_mn, b_mx) = (read_any_range(ctx, inputs[2 + 2 * i], inputs[3 + 2 * i], f"input {n}")
                                      for i, n in enumerate("AB"))
        a, b = broadcast_pair(ctx, u8_codes(ctx, a_arr, "input A data"), u8_codes(ctx, b_arr, "input B data"))
        a_step, a_zero = level_size_zero(a_mn, a_mx)
        b_step, b_zero = level_size_zero(b_mn, b_mx)
        prod = (a.astype(np.int32) - np.int32(a_zero)) * (b.astype(np.int32) - np.int32(b_zero)) * np.int32(128)
        out_max = np.float32(a_step * b_step) * np.float32(1 << 24)
        return (prod, *range_out(-out_max, out_max))


@register("QuantizedMul_8x8to8")
class QuantizedMul8x8to8(Kernel):
    """``a * b`` of quint8 tensors into quint8, broadcasting: op_mul.c ``mul_8x8to8_execute`` (portable C).

    A ``[1,1,1,1]`` operand (B checked first) takes the scalar path: its value ``s = code - zero``
    decides; ``s > 0`` copies the other tensor's codes and scales its range by ``s * step``; ``s == 0``
    gives all codes 0 on ``[0, 1]``; ``s < 0`` gives ``255 - code`` on the flipped, scaled range.
    Otherwise see :func:`mul_8x8to8_general`. As the C, any finite input ranges are accepted.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (a_mn, a_mx), (b_mn, b_mx) = (read_any_range(ctx, inputs[2 + 2 * i], inputs[3 + 2 * i], f"input {n}")
                                      for i, n in enumerate("AB"))
        a = u8_codes(ctx, inputs[0], "input A data")
        b = u8_codes(ctx, inputs[1], "input B data")
        a_step, a_zero = level_size_zero(a_mn, a_mx)
        b_step, b_zero = level_size_zero(b_mn, b_mx)
        a4, b4 = (np.asarray(x).reshape((1,) * (4 - np.ndim(x)) + np.shape(x)) for x in (a, b))
        if b4.shape == (1, 1, 1, 1) or a4.shape == (1, 1, 1, 1):
            if b4.shape == (1, 1, 1, 1):
                full, lo, hi, sc = a4, a_mn, a_mx, int(b4.reshape(-1)[0]) - b_zero
                sc_flt = F(F(sc) * b_step)
            else:
                full, lo, hi, sc = b4, b_mn, b_mx, int(a4.reshape(-1)[0]) - a_zero
                sc_flt = F(F(sc) * a_step)
            if sc > 0:
                return (full.copy(), *range_out(F(lo * sc_flt), F(hi * sc_flt)))
            if sc == 0:
                return (np.zeros(full.shape, np.uint8), *range_out(F(0.0), F(1.0)))
            return ((255 - full).astype(np.uint8), *range_out(F(hi * sc_flt), F(lo * sc_flt)))
        a, b = broadcast_pair(ctx, a, b)
        codes, out_mn, out_mx = mul_8x8to8_general(a, a_zero, a_step, b, b_zero, b_step)
        return (codes, *range_out(out_mn, out_mx))


def mul_8x8to8_general(a: np.ndarray, a_zero: int, a_step: np.float32, b: np.ndarray, b_zero: int,
                       b_step: np.float32) -> tuple[np.ndarray, np.float32, np.float32]:
    """The general path of ``mul_8x8to8_execute``: ``(codes, out_min, out_max)``.

    Products ``p = (a - a_zero)(b - b_zero)``; ``pmin/pmax`` their extremes with 0 (``pmax = pmin``
    bumps pmax by 4); range ``[pmin, pmax] * a_step*b_step`` through ``adjust_minmax_for_zero``;
    ``scaleby = prod_step / out_step``, or 16 (and the range rebuilt around the zero code) when the
    product step is >= 16 output steps; then fixed point: ``rsh = min(14 - exp(scaleby), 23)``,
    ``scale = roundf_i32(scaleby * 2^rsh)``, code ``= ((p - pmin)*scale + offs) >> rsh`` in int32
    (``offs = (2*zero + 1) << (rsh-1) + pmin*scale``), kept to 16 bits (``uint16_t``) and saturated to
    0..255, so a negative result wraps to 255 as in the C.
    """
    prod = (a.astype(np.int32) - np.int32(a_zero)) * (b.astype(np.int32) - np.int32(b_zero))
    pmin = min(0, int(prod.min())) if prod.size else 0
    pmax = max(0, int(prod.max())) if prod.size else 0
    if pmax == pmin:
        pmax += 4
    prod_step = F(a_step * b_step)
    _, out_mn, out_mx = adjust_minmax_for_zero(F(F(pmin) * prod_step), F(F(pmax) * prod_step))
    out_step, out_zero = level_size_zero(out_mn, out_mx)
    if F(prod_step * F(1.0 / 16.0)) < out_step:
        scaleby = F(prod_step / out_step)
    else:
        scaleby = F(16.0)
        out_step = F(prod_step * F(1.0 / 16.0))
        out_mn, out_mx = F(F(-out_zero) * out_step), F(F(255 - out_zero) * out_step)
    expp = ((int(np.array(scaleby, np.float32).view(np.uint32)) >> 23) & 0xFF) - 126
    rsh = min(14 - expp, 23)
    scale = int(roundf_i32(F(scaleby * F(2.0 ** rsh))))
    offs = ((2 * out_zero + 1) << (rsh - 1)) + pmin * scale
    v = (prod.astype(np.int64) - pmin) * scale + offs
    v = ((v + 2 ** 31) % 2 ** 32 - 2 ** 31) >> rsh          # int32 wrap, arithmetic shift
    codes = np.minimum(v & 0xFFFF, 255).astype(np.uint8)    # uint16_t p, then saturate_u8
    return codes, out_mn, out_mx
