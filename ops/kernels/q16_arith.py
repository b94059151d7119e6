"""QuantizedAdd/Sub/Mul_16 (qint16) and QuantizedAdd/Sub/Mul_u16 (quint16): elementwise 16-bit arithmetic.

Op texts (hexagon_nn_ops.txt, "QuantizedAdd_16" and "QuantizedAdd_u16"):
the output range must be given (inputs 6, 7); "if the specified output range
is very small for the inputs, the actual output range will be larger ...
and a warning will be logged". Code conventions: :mod:`q16_common`.
Broadcasting: numpy's rule on 4-D shapes (hexagon_nn broadcasts these ops;
the texts say nothing more), as the 8-bit binary ops do.

Range rules (the output min/max report the range actually used):

- **Add / Sub** (both types): the output step must be at least 1/8192 of
  the larger input step, i.e. the output range at least 1/8192 of the
  largest input range (the text's rule for the signed ops; the u16 text only
  says "very small", and hexagon_nn uses the same bound there). Below it the
  step is raised to that bound and a warning is logged.
- **Mul_16**: the text says the range grows when it is below "1/32768 times
  the product of the input ranges", but in the same paragraph promises
  integer behaviour when the output range is *exactly 1/65536* times that
  product - which the 1/32768 rule would widen. The bound that keeps the
  promise (and is hexagon_nn's: a gain ``a_step * b_step / out_step`` of at
  most 1) is used: the output range grows to 1/65536 of the product, with a
  warning, when it is smaller.
- **Mul_u16**: hexagon_nn's bound for its unsigned path (the gain may not
  exceed 4095/32768): ``out_step >= a_step * b_step * 8 * 4096/4095``.

A widened range keeps the requested zero code: qint16 ``[-32768, 32768] *
step``; quint16 ``[-zero, 65536 - zero] * step``. The requested quint16
range is used as given otherwise (its zero code ``round_away(-min/step)``),
as hexagon_nn does; it is not zero-fixed.

Arithmetic (choice where the documents are silent: float64 instead of the
device's 16x16-bit fixed-point path, which can differ by one code):
``q = round_away((a - za) * ga  +/-  (b - zb) * gb) + z_out`` with
gains ``ga = a_step / out_step``, ``gb = b_step / out_step`` (Add/Sub), or
``round_away((a - za) * (b - zb) * a_step * b_step / out_step) + z_out``
(Mul), saturated to the output type. Identical ranges (Add/Sub) or an output
range of exactly 1/65536 of the product (Mul_16) make the gains exactly 1,
so these ops are then plain integer ops, as the text says.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.nnlib_mul_u16 import mul_u16_codes, mul_u16_scaling
from hexnn_import.ops.kernels.q16_common import (STEPS16, Q16Range, i16_codes, quantize_s16, quantize_u16,
                                                 s16_range, u16_codes, u16_range)
from hexnn_import.ops.registry import Kernel, KernelContext, register

logger = logging.getLogger(__name__)

#: Add/Sub: the output step is at least this fraction of the larger input step.
ADD_MIN_FRACTION = 1.0 / 8192.0
#: Mul_u16: the output step is at least ``a_step * b_step`` times this (hexagon_nn's unsigned limit).
U16_MUL_HEADROOM = 8.0 * 4096.0 / 4095.0


def read_operands16(ctx: KernelContext, inputs: Sequence[np.ndarray], kind: str
                    ) -> tuple[np.ndarray, np.ndarray, Q16Range, Q16Range, Q16Range]:
    """``(a, b, a_range, b_range, requested_out_range)``; codes broadcast to one 4-D shape."""
    reader = s16_range if kind == "qint16" else u16_range
    codes = i16_codes if kind == "qint16" else u16_codes
    a_r = reader(ctx, inputs[2], inputs[3], "input A")
    b_r = reader(ctx, inputs[4], inputs[5], "input B")
    out = reader(ctx, inputs[6], inputs[7], "output")
    a, b = broadcast_pair(ctx, codes(ctx, inputs[0], "input A data"), codes(ctx, inputs[1], "input B data"))
    return a, b, a_r, b_r, out


def widened(out: Q16Range, step: float) -> Q16Range:
    """The output range with a larger ``step``, keeping its zero code (module doc)."""
    below = 32768 if out.kind == "qint16" else out.zero
    return Q16Range(out.kind, -below * step, (STEPS16 - below) * step, step, out.zero)


def ensure_step(ctx: KernelContext, out: Q16Range, min_step: float, rule: str) -> Q16Range:
    """``out`` if its step reaches ``min_step``; else the widened range, with a logged warning."""
    if out.step >= min_step:
        return out
    new = widened(out, min_step)
    logger.warning("node %s (%s): output range [%g, %g] is too small: %s; using [%g, %g] instead",
                   ctx.node, ctx.op, out.mn, out.mx, rule, new.mn, new.mx)
    return new


def encode(real_in_out_steps: np.ndarray, out: Q16Range) -> np.ndarray:
    """Output codes from values already in output steps: round, add the zero code, saturate."""
    if out.kind == "qint16":
        return quantize_s16(real_in_out_steps, 1.0)
    return quantize_u16(real_in_out_steps, 1.0, out.zero)


class _AddSub16(Kernel):
    """Shared body of the 16-bit add and subtract (module doc)."""

    KIND = "qint16"
    SIGN = 1

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``."""
        a, b, a_r, b_r, out = read_operands16(ctx, inputs, self.KIND)
        largest = max(a_r.mx - a_r.mn, b_r.mx - b_r.mn)
        out = ensure_step(ctx, out, max(a_r.step, b_r.step) * ADD_MIN_FRACTION,
                          f"below 1/8192 of the largest input range {largest:g}")
        ga, gb = a_r.step / out.step, b_r.step / out.step
        v = (a.astype(np.float64) - a_r.zero) * ga + self.SIGN * (b.astype(np.float64) - b_r.zero) * gb
        return (encode(v, out), *range_out(out.mn, out.mx))


class _Mul16(Kernel):
    """Shared body of the 16-bit multiplies (module doc)."""

    KIND = "qint16"

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``."""
        a, b, a_r, b_r, out = read_operands16(ctx, inputs, self.KIND)
        ab_step = a_r.step * b_r.step
        product = (a_r.mx - a_r.mn) * (b_r.mx - b_r.mn)
        if self.KIND == "qint16":
            out = ensure_step(ctx, out, ab_step, f"below 1/65536 of the product of the input ranges {product:g}")
        else:
            out = ensure_step(ctx, out, ab_step * U16_MUL_HEADROOM,
                              f"below {U16_MUL_HEADROOM / STEPS16:.6g} times the product of the input "
                              f"ranges {product:g}")
        prod = (a.astype(np.int64) - a_r.zero) * (b.astype(np.int64) - b_r.zero)  # exact, |prod| < 2**32
        v = prod.astype(np.float64) * (ab_step / out.step)
        return (encode(v, out), *range_out(out.mn, out.mx))


@register("QuantizedAdd_16")
class QuantizedAdd16(_AddSub16):
    """qint16 ``a + b`` on a given symmetric output range (module doc)."""

    KIND, SIGN = "qint16", 1


@register("QuantizedSub_16")
class QuantizedSub16(_AddSub16):
    """qint16 ``a - b`` on a given symmetric output range (module doc)."""

    KIND, SIGN = "qint16", -1


@register("QuantizedMul_16")
class QuantizedMul16(_Mul16):
    """qint16 ``a * b`` on a given symmetric output range (module doc)."""

    KIND = "qint16"


@register("QuantizedAdd_u16")
class QuantizedAddU16(_AddSub16):
    """quint16 ``a + b`` on a given output range (module doc)."""

    KIND, SIGN = "quint16", 1


@register("QuantizedSub_u16")
class QuantizedSubU16(_AddSub16):
    """quint16 ``a - b`` on a given output range (module doc)."""

    KIND, SIGN = "quint16", -1


@register("QuantizedMul_u16")
class QuantizedMulU16(_Mul16):
    """quint16 ``a * b`` as the device computes it (op_addsubmul_16.c ``mul_16_execute``, issue 36;
    tools/hvx/op_mul_u16.py): :func:`~hexnn_import.ops.nnlib_mul_u16.mul_u16_scaling` in float32 (any finite
    ranges with min <= max: zero codes of ranges without 0 saturate; an output step below ``8 * 4096/4095`` times
    the product of the input steps is widened about the requested zero code, with a warning) and
    :func:`~hexnn_import.ops.nnlib_mul_u16.mul_u16_codes`' fixed point (numpy broadcast)."""

    KIND = "quint16"

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, out_min, out_max)``."""
        a_rng = ctx.finite_range(inputs[2], inputs[3], "input A")
        b_rng = ctx.finite_range(inputs[4], inputs[5], "input B")
        o_rng = ctx.finite_range(inputs[6], inputs[7], "output")
        a, b = broadcast_pair(ctx, u16_codes(ctx, inputs[0], "input A data"), u16_codes(ctx, inputs[1], "input B data"))
        za, zb, mulscale, bias, postadd, omn, omx, widened = mul_u16_scaling(a_rng, b_rng, o_rng)
        if widened:
            logger.warning("node %s (%s): output range [%g, %g] is too small for the input steps' product times "
                           "8 * 4096/4095; using [%g, %g] instead", ctx.node, ctx.op, o_rng[0], o_rng[1], omn, omx)
        return (mul_u16_codes(a, b, za, zb, mulscale, bias, postadd), *range_out(omn, omx))
