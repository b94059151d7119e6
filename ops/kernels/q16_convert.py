"""8 <-> 16-bit conversions and float -> qint16: Convert_8_16, Convert_8_u16, Convert_16_8,
Convert_u16_8, Quantize_16 (op texts; code conventions in :mod:`q16_common`).

- **Convert_8_16** (lossless, symmetric output): ``out = k * (q - zero)``
  with the integer ``k = 32767 // (255 - zero)`` when ``zero < 128``, else
  ``k = 32768 // zero`` (hexagon_nn's choice: the largest k that cannot
  overflow int16); output range ``+-32768 * in_step / k``, so one output
  step is exactly ``in_step / k`` and every value is kept exactly.
- **Convert_8_u16** (text): codes times 257, same min, max larger by
  ``(max - min) / 65536``. The values are kept (to float rounding) when
  the input range is zero-exact (§1); otherwise the two zero codes round
  differently (``257 * zero8`` vs ``round_away(-min / step16)``).
- **Convert_16_8 / Convert_u16_8** (text): the requested range (inputs 3, 4,
  or the input range when there are 3 inputs; 4 inputs is an error, the
  text says "3 or 5") is zero-fixed with ``adjust_range`` (§1) and, when its
  step is below twice the input step, widened to that step keeping its
  zero code: ``[-zero, 255 - zero] * 2 * in_step`` (logged at INFO; the
  text names no warning). The codes and the output range are the device's
  (op_convert_16.c cvt_x16_8_execute's fixed-point datapath, float32 ranges:
  :mod:`q16_convert_device`), within half an output step and 1/32 more of
  ``sat_u8(round_away((real - out_min) / out_step))`` where its 32-bit
  products do not wrap (a requested range narrower than 1/128 of the input's).
- **Quantize_16** (text: "output min = -output max"): ``M = max(-in_min,
  in_max)``, floored at 1e-5 as hexagon_nn does (so a ``[0, 0]`` range still
  quantizes); output range ``[-M, M]``, ``q = sat16(round_away(x / step))``
  with ``step = 2M / 65536``. The input range must be finite with min <=
  max; NaN data is an error, +-Inf saturates (as Quantize).
"""
from __future__ import annotations

import logging

import numpy as np

from hexnn_import.ops.kernel_io import float_data, range_out, u8_codes
from hexnn_import.ops.kernels.q16_common import (STEPS16, i16_codes, quantize_s16, s16_range, u16_codes,
                                                 u16_range, u8_range)
from hexnn_import.ops.kernels.q16_convert_device import convert_x16_8
from hexnn_import.ops.quant import adjust_range, step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register

logger = logging.getLogger(__name__)

#: Quantize_16's smallest output max (hexagon_nn's floor).
QUANTIZE16_MIN_MAX = 1e-5


def lossless_gain(zero: int) -> int:
    """Convert_8_16's integer gain k for a quint8 zero code (module doc)."""
    return 32767 // (255 - zero) if zero < 128 else 32768 // zero


@register("Convert_8_16")
class Convert8to16(Kernel):
    """quint8 -> qint16 losslessly, symmetric output range (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q16, -M, M)``."""
        data, mn_arr, mx_arr = inputs
        r = u8_range(ctx, mn_arr, mx_arr, "input")
        q = u8_codes(ctx, data, "input data")
        k = lossless_gain(r.zero)
        out = (k * (q.astype(np.int32) - r.zero)).astype(np.int16)
        m = 32768.0 * r.step / k
        return (out, *range_out(-m, m))


@register("Convert_8_u16")
class Convert8toU16(Kernel):
    """quint8 -> quint16: codes x257, ``max += (max - min) / 65536`` (op text)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q16, min, max')``."""
        data, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        q = u8_codes(ctx, data, "input data")
        return ((q.astype(np.uint16) * np.uint16(257)), *range_out(mn, mx + (mx - mn) / STEPS16))


class _Convert16to8(Kernel):
    """Shared body of Convert_16_8 and Convert_u16_8 (module doc)."""

    SIGNED = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q8, out_min, out_max)``."""
        if len(inputs) == 4:
            raise ctx.fail("got 4 inputs: the requested output min and max (inputs 3, 4) come together "
                           "(the op takes 3 or 5)")
        data, mn_arr, mx_arr = inputs[:3]
        if self.SIGNED:
            r, q = s16_range(ctx, mn_arr, mx_arr, "input"), i16_codes(ctx, data, "input data")
        else:
            r, q = u16_range(ctx, mn_arr, mx_arr, "input"), u16_codes(ctx, data, "input data")
        req = ctx.finite_range(inputs[3], inputs[4], "requested output") if len(inputs) == 5 else (r.mn, r.mx)
        lo, hi = adjust_range(*req)
        step, _ = step_zero(lo, hi)
        if step < 2.0 * r.step:
            logger.info("node %s (%s): output range [%g, %g] expanded so the output step is at least twice "
                        "the input step", ctx.node, ctx.op, lo, hi)
        out, lo32, hi32 = convert_x16_8(q, r.mn, r.mx, req[0], req[1], not self.SIGNED)  # the device's datapath
        return (out, *range_out(lo32, hi32))


@register("Convert_16_8")
class Convert16to8(_Convert16to8):
    """qint16 -> quint8 over a requested (or the input) range (module doc)."""

    SIGNED = True


@register("Convert_u16_8")
class ConvertU16to8(_Convert16to8):
    """quint16 -> quint8 over a requested (or the input) range (module doc)."""

    SIGNED = False


@register("Quantize_16")
class Quantize16(Kernel):
    """float -> qint16 over the symmetric range ``[-M, M]``, ``M = max(-in_min, in_max)`` (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q16, -M, M)``."""
        data, mn_arr, mx_arr = inputs
        in_min, in_max = ctx.finite_range(mn_arr, mx_arr, "input")
        x = float_data(ctx, data, "input data", allow_inf=True)
        m = max(-in_min, in_max, QUANTIZE16_MIN_MAX)
        return (quantize_s16(x, 2.0 * m / STEPS16), *range_out(-m, m))
