"""Exact rational arithmetic on quint8 code values (SEMANTICS.md §1, §6).

SEMANTICS §6 asks elementwise results to be "computed from exact rationals":
``q = sat_u8(round_away((result_real - out_min) / out_step))`` where the real
values are the exact rationals ``(q - zero) * (max - min) / 255`` of the
float range ends (every float is a dyadic rational). A quint8 operand has
only 256 codes, so these helpers build exact *tables*: a vector of the 256
code values, or a 256x256 table of a binary result, as integer numerators
over one common positive denominator (Python ints in numpy object arrays, so
nothing overflows or rounds), then quantize each table entry onto an output
range with an exact round-half-away. A kernel then indexes the table with the
data codes; the per-element work is a numpy gather.

``zero`` is the code of 0.0 as §1 defines it (``sat_u8(round_away(-min /
step))``, evaluated in float64 as everywhere else in the project).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np

from hexnn_import.ops.quant import RANGE_EPS, step_zero

#: Pre-saturation codes are clipped to +-CODE_CLIP so they fit int64 and keep their sign.
CODE_CLIP = 2 ** 40

#: A vector or table of rationals: integer numerators (object array) over one positive denominator.
Rationals = tuple[np.ndarray, int]


def code_values(mn: float, mx: float) -> Rationals:
    """The exact real value of each code 0..255 of the quint8 range ``[mn, mx]``."""
    _, zero = step_zero(mn, mx)
    width = Fraction(float(mx)) - Fraction(float(mn))
    codes = np.arange(256, dtype=np.int64) - zero
    nums = np.array([int(c) * width.numerator for c in codes], dtype=object)
    return nums, 255 * width.denominator


def combine(a: Rationals, b: Rationals, op: str) -> Rationals:
    """Outer table ``a[i] (op) b[j]`` for op in ``add``, ``sub``, ``mul``; shape (len(a), len(b))."""
    (an, ad), (bn, bd) = a, b
    if op == "mul":
        return np.multiply.outer(an, bn), ad * bd
    left = np.multiply.outer(an * bd, np.ones(len(bn), dtype=object))
    right = np.multiply.outer(np.ones(len(an), dtype=object), bn * ad)
    if op == "add":
        return left + right, ad * bd
    if op == "sub":
        return left - right, ad * bd
    raise ValueError(f"unknown table op {op!r}")


def round_away_div(num: np.ndarray, den: int) -> np.ndarray:
    """``round_away(num / den)`` exactly for an object array ``num`` and an int ``den > 0``."""
    mag = (2 * np.abs(num) + den) // (2 * den)
    return np.where(num < 0, -mag, mag)


def quantize_values(vals: Rationals, out_min: float, out_max: float) -> np.ndarray:
    """Pre-saturation codes ``round_away((v - out_min) * 255 / max(1e-18, out_max - out_min))``, int64.

    Exact for every entry; codes beyond +-2**40 are clipped there (they
    saturate anyway). Apply ``sat_u8`` to get quint8 codes.
    """
    nums, den = vals
    lo = Fraction(float(out_min))
    # a zero-width range quantizes over hexagon_nn's floor 1e-18 (include/quantize.h quantize_uint8:
    # ``range = fmaxf(1e-18f, maxval-minval)``): values <= min give code 0, values above saturate
    width = max(Fraction(RANGE_EPS), Fraction(float(out_max)) - lo)
    # (n/den - lo) * 255 / width = (n * lo_d - lo_n * den) * 255 * w_d / (den * lo_d * w_n)
    num = (nums * lo.denominator - lo.numerator * den) * (255 * width.denominator)
    codes = round_away_div(num, den * lo.denominator * width.numerator)
    return np.clip(codes, -CODE_CLIP, CODE_CLIP).astype(np.int64)


def requant_table(in_min: float, in_max: float, out_min: float, out_max: float) -> np.ndarray:
    """Pre-saturation output code of each input code 0..255 moved exactly to another range."""
    return quantize_values(code_values(in_min, in_max), out_min, out_max)


def code_values_f64(mn: float, mx: float) -> np.ndarray:
    """float64 approximations (relative error below 2**-51) of :func:`code_values`' exact values."""
    _, zero = step_zero(mn, mx)
    width = float(Fraction(float(mx)) - Fraction(float(mn)))
    return (np.arange(256, dtype=np.float64) - zero) * width / 255.0


def quantize_approx(v: np.ndarray, out_min: float, out_max: float,
                    exact_at: Callable[[tuple[np.ndarray, ...]], np.ndarray]) -> np.ndarray:
    """:func:`quantize_values` of values known as float64 approximations ``v`` (relative error below
    2**-48), exact: where float64 cannot decide the rounding (the scaled value within a generous error
    bound of a half) ``exact_at(index)`` recomputes those entries with :func:`quantize_values`.

    Everywhere else ``round_away`` of the float64 value is the exact result: the bound below is
    2**4 times the worst error of ``v`` and of the three float64 operations that scale it, and a
    value beyond +-2**20 codes saturates the same way whichever side of it the exact value lies.
    """
    lo = float(out_min)
    width = float(max(Fraction(RANGE_EPS), Fraction(float(out_max)) - Fraction(lo)))
    scale = 255.0 / width
    q = (v - lo) * scale
    tol = (np.abs(v) + abs(lo)) * scale * 2.0 ** -44 + 2.0 ** -40
    codes = np.where(q < 0, -np.floor(-q + 0.5), np.floor(q + 0.5))
    near = (np.abs(np.abs(q - np.trunc(q)) - 0.5) <= tol) & (np.abs(q) < 2.0 ** 20)
    codes = np.clip(codes, -CODE_CLIP, CODE_CLIP).astype(np.int64)
    idx = np.nonzero(near)
    if idx[0].size:
        codes[idx] = exact_at(idx)
    return codes
