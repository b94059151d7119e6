"""hexagon_nn's device float -> quint8 conversion (Quantize / AutoQuantize as the DSP runs them, issue 36).

nnlib registers ``Quantize`` with op_quantize.c ``quantize_execute_opt`` and ``AutoQuantize`` with
``autoquantize_execute_opt`` (``autoquantize_hvx``): both pick the output range and a fixed-point scaling in
``find_scaling_for_hvx_quant`` and convert with the assembly ``quantize_floats_to_8b_asm``
(hexagon/asm_src/autoquantize_h.S); AutoQuantize's data range comes from ``find_minmax_of_floats_asm``.
These functions repeat that arithmetic in numpy, checked bit for bit against the device code run under
qemu-hexagon (tests/data/golden/hvx/quantize*.npz, autoquantize.npz; docs/verification.md, "device-code cases").
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hexnn_import.ops.nnlib_f32 import F, adjust_minmax_for_zero

#: ``256/255`` as op_quantize.c writes it (``range_f * 1.003921569f``).
_R256 = F(1.003921569)


class HvxQuantParms(NamedTuple):
    """``struct hvx_quant_parms``: the adjusted range and the asm's fixed-point parameters."""

    minval: np.float32
    maxval: np.float32
    min_offset: int
    common_exp: int
    scaling: int


def _fields(v: np.float32) -> tuple[int, int]:
    """(exponent field, mantissa field) of a float32."""
    bits = int(np.asarray(v, np.float32).view(np.uint32))
    return (bits >> 23) & 0xFF, bits & 0x7FFFFF


def find_scaling_for_hvx_quant(neg_min: np.float32, max_in: np.float32) -> HvxQuantParms | None:
    """op_quantize.c ``find_scaling_for_hvx_quant`` on ``{-min, max}``; None for an Inf / NaN input (its -1).

    ``minv = -neg_min``; ``maxv = fmaxf(minv + 1e-18f, max)``; ``adjust_minmax_for_zero`` only when ``minv < 0``
    (it leaves widths under 1e-6 alone); then the range's exponent + 4 is the common exponent, ``min_offset``
    is ``minv``'s mantissa shifted to it (0 from 24 bits down) plus the rounding bias ``rangemant >> 9``, and
    ``scaling = 0xFFFFFFFF // rangemant``. Unsigned 32-bit field arithmetic as in the C (``uint32_t``)."""
    neg_min, max_in = F(neg_min), F(max_in)
    if not (np.isfinite(neg_min) and np.isfinite(max_in)):
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        minv = F(-neg_min)
        maxv = max(F(minv + F(1e-18)), max_in) if not np.isnan(max_in) else F(minv + F(1e-18))
        if minv < 0:
            rc, a, b = adjust_minmax_for_zero(minv, maxv)
            if rc > 0:
                minv, maxv = a, b
        rng = F(F(maxv - minv) * _R256)
    rangeexp, rangefrac = _fields(rng)
    minexp, minfrac = _fields(minv)
    common_exp = rangeexp + 4
    d = (common_exp - minexp) & 0xFFFFFFFF
    min_offset = 0 if d >= 24 else (minfrac | 1 << 23) >> d
    rangemant = (rangefrac | 1 << 23) >> 4
    scaling = 0xFFFFFFFF // rangemant
    min_offset = (min_offset + (rangemant >> 9)) & 0xFFFFFFFF
    return HvxQuantParms(minv, maxv, min_offset, common_exp, scaling)


def quantize_floats_to_8b(x: np.ndarray, p: HvxQuantParms,
                          extremes: tuple[float, float] | None = None) -> np.ndarray:
    """autoquantize_h.S ``quantize_floats_to_8b_asm``, per 32-bit lane: ``mant = frac | 2**23`` (also for 0),
    ``shift = min(common_exp - exp, 31)`` taken as a signed 6-bit amount by ``vlsr`` (negative: a left shift,
    so inputs far above the range wrap), negated for a set sign bit, ``+ min_offset`` (wrapping),
    ``vmpye`` by the low 16 bits of ``scaling`` (``>> 16``), ``vpack :sat`` to uint16 and the high byte.

    ``extremes``: the data's (min, max) where the caller has them. Where every exponent is at most
    ``common_exp`` and ``common_exp >= 24`` (always so for AutoQuantize, whose range covers the data, and for
    Quantize's data inside its range) :func:`_quantize_fast` gives the same codes in float64 (speed)."""
    if np.size(x) == 0:
        return np.zeros(np.shape(x), np.uint8)
    lo, hi = extremes if extremes is not None else (float(np.min(x)), float(np.max(x)))
    top = max(abs(lo), abs(hi))
    if p.common_exp >= 24 and np.isfinite(top) and _fields(F(top))[0] <= p.common_exp:
        return _quantize_fast(x, p)
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.int32)
    exp = (bits >> 23) & 0xFF
    mant = (bits & 0x7FFFFF) | 0x800000
    shift = np.minimum(p.common_exp - exp, 31)
    shift = ((shift + 32) & 63) - 32                      # vlsr: sign-extended 6-bit amount
    mants = np.where(shift >= 0, mant >> np.maximum(shift, 0), _lshift32(mant, -shift))
    smant = np.where(bits < 0, -mants, mants).astype(np.int64) + p.min_offset
    smant = (smant + 2 ** 31) % 2 ** 32 - 2 ** 31               # 32-bit wrap
    word = (smant * (p.scaling & 0xFFFF)) >> 16
    return (np.clip(word, 0, 0xFFFF) >> 8).astype(np.uint8).reshape(np.shape(x))


def _quantize_fast(x: np.ndarray, p: HvxQuantParms) -> np.ndarray:
    """:func:`quantize_floats_to_8b` where no shift is negative and zeros / denormals shift out (``common_exp >=
    24``): ``mant >> shift`` is ``trunc(|x| * 2**(150 - common_exp))`` (a power-of-two scaling, exact in float64;
    a zero or denormal gives 0 as its 24-bit stand-in mantissa does), so ``w = trunc(x * K) + min_offset``
    (below 2**25, no wrap) and the code is ``floor(clip(w * scale16, 0, 2**32 - 1) / 2**24)``: the ``>> 16``,
    the saturation to uint16 and the high byte at once, every step an exact float64 integer."""
    y = np.multiply(x, np.float64(2.0 ** (150 - p.common_exp)), dtype=np.float64)
    np.trunc(y, out=y)
    y += p.min_offset
    y *= p.scaling & 0xFFFF
    np.clip(y, 0.0, 2.0 ** 32 - 1, out=y)
    y *= 2.0 ** -24
    return y.astype(np.uint8)


def _lshift32(mant: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """``mant << amount`` kept to 32 bits where ``amount`` > 0 (int32 view); unused lanes give anything."""
    a = np.clip(amount, 0, 32).astype(np.uint64)
    return ((mant.astype(np.uint64) << a) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def find_minmax_of_floats(x: np.ndarray) -> tuple[np.float32, np.float32]:
    """autoquantize_h.S ``find_minmax_of_floats_asm``: ``{-min, max}`` as signed 32-bit maxima of the bit
    patterns from 0 (``vmax.w`` of the data and of the data with its sign bit flipped): ``-min`` is +0.0 when no
    value is below 0 (-0.0 included), ``max`` +0.0 when none is above; NaN shows as NaN, +-Inf as Inf. The
    float extremes give the same values (speed: no bit-pattern copies)."""
    lo, hi = (np.min(x), np.max(x)) if np.size(x) else (F(0.0), F(0.0))
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return F(-lo) if not np.isnan(lo) else F(np.nan), F(hi)
    return (F(-lo) if lo < 0 else F(0.0)), (F(hi) if hi > 0 else F(0.0))
