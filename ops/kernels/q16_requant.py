"""qint32 -> qint16: QuantizeDownAndShrinkRange_32to16 and Requantize_32to16 (op texts; SEMANTICS.md §4).

One qint32 code is ``one = (in_max - in_min) / 2**32`` (§1); qint16 codes
follow :mod:`q16_common` (symmetric range, ``step = max / 32768``).

- **QuantizeDownAndShrinkRange_32to16** (text): the output range is "the
  smallest symmetric range that covers the actual values", but "at least
  1/64k times the input range", which applies when the codes stay within
  +-32k ("it will not scale codes by > 1.0"). With ``m = max(max(x), -min(x),
  2)`` (hexagon_nn's floor of 2 keeps an all-zero tensor's range non-empty):
  ``m <= 32768`` keeps the codes (``q = sat16(x)``, range ``+-32768 * one``);
  otherwise the range is ``+-m * one`` and ``q = sat16(round_away(x * 32768 /
  m))``, computed exactly in integers (the largest magnitude lands on
  +-32768, so a positive maximum saturates to 32767 - the top of a
  symmetric 16-bit range is one step above the last code).
- **Requantize_32to16** (text): the requested range "may be expanded if
  needed to make it symmetrical": ``M = max(out_max, -out_min)``, floored at
  1/2048 as hexagon_nn does; output ``[-M, M]``. ``q = sat16(round_away(x *
  one * 32768 / M))`` in float64 (the device's fixed-point multiply may
  differ by one code). As in hexagon_nn, a gain ``one * 32768 / M`` outside
  ``[2**-29, 2**24)`` is an error (the ranges are unreasonably far apart).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import i32_codes, range_out
from hexnn_import.ops.kernels.q16_common import I16_HI, I16_LO
from hexnn_import.ops.quant import qint32_one, round_away
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Requantize_32to16: smallest output max (hexagon_nn's floor).
REQUANT16_MIN_MAX = 1.0 / 2048.0
#: Requantize_32to16: accepted gains ``[lo, hi)`` (hexagon_nn's "reasonable" scale ratios).
GAIN_LIMITS = (2.0 ** -29, 2.0 ** 24)


def shrink_codes(x: np.ndarray, m: int) -> np.ndarray:
    """``sat16(round_away(x * 32768 / m))`` exactly (int64; ``|x| < 2**31`` so nothing overflows)."""
    num = np.abs(x.astype(np.int64)) * 32768
    mag = (2 * num + m) // (2 * m)
    return np.clip(np.where(x < 0, -mag, mag), I16_LO, I16_HI).astype(np.int16)


@register("QuantizeDownAndShrinkRange_32to16")
class QuantizeDownAndShrinkRange32to16(Kernel):
    """qint32 -> qint16 over the smallest symmetric range covering the data (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q16, -M, M)``."""
        data, mn_arr, mx_arr = inputs
        one = qint32_one(*ctx.sane_range(mn_arr, mx_arr, "input"))
        x = i32_codes(ctx, data, "input data")
        m = max(2, int(x.max()), -int(x.min())) if x.size else 2
        if m <= 32768:
            return (np.clip(x, I16_LO, I16_HI).astype(np.int16), *range_out(-32768.0 * one, 32768.0 * one))
        return (shrink_codes(x, m), *range_out(-m * one, m * one))


@register("Requantize_32to16")
class Requantize32to16(Kernel):
    """qint32 -> qint16 over a requested range made symmetric (module doc)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q16, -M, M)``."""
        data, in_mn, in_mx, out_mn, out_mx = inputs
        one = qint32_one(*ctx.sane_range(in_mn, in_mx, "input"))
        req_min, req_max = ctx.finite_range(out_mn, out_mx, "requested output")
        m = max(req_max, -req_min, REQUANT16_MIN_MAX)
        gain = one * 32768.0 / m
        lo, hi = GAIN_LIMITS
        if not lo <= gain < hi:
            raise ctx.fail(f"gain {gain:g} from the input range (one code = {one:g}) to the output range "
                           f"[{-m}, {m}] is outside [2**-29, 2**24): the ranges are unreasonably far apart")
        x = i32_codes(ctx, data, "input data")
        q = np.clip(round_away(x.astype(np.float64) * gain), I16_LO, I16_HI).astype(np.int16)
        return (q, *range_out(-m, m))
