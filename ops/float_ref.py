"""Float64 reference arithmetic for the nonlinear and normalizing quint8 ops.

SEMANTICS.md §6 fixes the recipe for softmax, sigmoid and tanh - compute in
float64 from the dequantized input (§1: ``real = (q - zero) * step``) and
quantize the result onto the output range with round-half-away
(``q = sat_u8(round_away((y - out_min) / out_step))``, §2) - and the kernels
of ``unary.py``, ``nonlinear.py`` and ``normalize.py`` apply the same recipe
to every op whose arithmetic the documents leave open. This module holds the
three steps they share: read a quantized input as real values, pick an output
range from the result, and quantize onto a range.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.quant import adjust_range, dequantize_u8, quantize_u8
from hexnn_import.ops.registry import KernelContext

#: AutoQuantize's floor on a range's width: "forced to in_max >= in_min + 1e-4"
#: (SEMANTICS §2). Kept here rather than imported from ``ops/kernels/quantize.py``
#: because the kernel package imports this module while it loads.
AUTO_MIN_WIDTH = 1e-4


def real_input(ctx: KernelContext, data: np.ndarray, mn_arr: np.ndarray, mx_arr: np.ndarray,
               what: str) -> tuple[np.ndarray, float, float]:
    """A 4-D quint8 input with its (sane) range, dequantized to float64 (SEMANTICS §1).

    Returns ``(real, min, max)`` where ``real = (q - zero) * step``.
    """
    mn, mx = ctx.sane_range(mn_arr, mx_arr, what)
    q = u8_codes(ctx, require_4d(ctx, data, f"{what} data"), f"{what} data")
    return dequantize_u8(q, mn, mx), mn, mx


def finite_extent(y: np.ndarray) -> tuple[float, float]:
    """``(min, max)`` over the finite values of ``y``; ``(0, 0)`` when there are none."""
    finite = y[np.isfinite(y)]
    if finite.size == 0:
        return 0.0, 0.0
    return float(finite.min()), float(finite.max())


def quantize_auto(y: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantize float64 ``y`` over a range derived from ``[lo, hi]`` by AutoQuantize's rule.

    SEMANTICS §2 (AutoQuantize): ``min = min(0, lo)``, ``max = max(0, hi)``,
    ``max >= min + 1e-4``, zero-fixed with adjust_range; then
    ``q = sat_u8(round_away((y - min) / step))`` (+-Inf saturates to code 255 / 0).
    Returns ``(codes, min, max)`` with min/max as float32 scalars.
    """
    lo, hi = min(0.0, lo), max(0.0, hi)
    mn, mx = adjust_range(lo, max(hi, lo + AUTO_MIN_WIDTH))
    return quantize_fixed(y, mn, mx)


def quantize_fixed(y: np.ndarray, mn: float, mx: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantize float64 ``y`` onto a fixed range that already has an exact zero (SEMANTICS §2).

    ``q = sat_u8(round_away((y - mn) / step))``; returns ``(codes, min, max)``.
    """
    return (quantize_u8(y, mn, mx), *range_out(mn, mx))
