"""L2Normalize_8 as hexagon_nn's device code computes it (ops/src/op_l2normalize_8.c, issue 36), in numpy.

nnlib registers ``l2normalize_execute_8_fast`` (the portable ``_ref`` is another op, ``L2Normalize_8_ref``). The
input's zero code is ``quantize_uint8(0.0f, min, max)``; every output code is ``128 + sat8(sat16(d * r >> s))``
with ``d`` the code's distance from the zero code and ``r`` / ``s`` a 16-bit reciprocal of the slice's norm and
its shift; the range is [-1, 1] as given (not zero-fixed: 0.0 has no code, the codes 127 / 128 sit half a step
either side):

- along depth (``hvx_l2norm_in_rows``): ``S`` the int32 sum of squared distances of the row, ``l2 = sqrtf(S)``,
  ``rsh = floor_log2((unsigned)l2)`` (include/quantize.h), ``r = (32768u / (unsigned)l2) << rsh`` taken as a signed
  halfword (``Q6_R_combine_RlRl``: a norm whose integer part is a power of two gives 32768, i.e. -32768, and the
  row comes out negated), ``s = rsh + 8``; a row with ``S = 0`` is the code ``(int)(1.0f / (float)(2 / 255.0))``
  = 127, stored by one ``q6op_vstu_variable_ARV`` (at most the rest of its vector and the next one: longer rows
  keep bytes nothing wrote, which the engine gives 127 too);
- along another axis (``hvx_l2norm_in_cols``), per depth lane: ``S`` shifted left by its leading zeros less one,
  the Newton iteration ``rsqrt_newton_hvx`` (include/hvx_mathops.h: four steps of ``1.5 x - (S / 2) x**3`` in
  31-bit fixed point from ``x = 8375186``, times ``2 / sqrt(2)`` when the shift less 15 is odd), ``r`` its top
  halfword (``>> 16``, ``vpack:sat``), ``s = 8 - ((lz - 16 + 1) >> 1)``.

``q6op_Vw_vmpy_VwVw_s1_rnd_sat`` is ``(a * b + 2**30) >> 31`` saturated; the word shifts and subtractions wrap.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.nnlib_f32 import F

I64 = np.int64
#: ``(int)(1.0f / (float)(2.0f / 255.0))``: the code op_l2normalize_8.c stores for a row of zero distances.
ZERO_ROW_CODE = int(F(1.0) / F(2.0 / 255.0))
#: The longest slice whose int32 sum of squared distances cannot saturate (255**2 * 33025 < 2**31).
MAX_SLICE = 33025
_HALF_THREE = 1610612736        # 1.5 * 2**30
_X0 = 8375186                   # 0.0039 * 2**31
_TWO_DIV_SQRT2 = 759250124      # 2 / sqrt(2) * 2**29


def _wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values wrapped to int32 (plain word arithmetic)."""
    return ((v + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31


def _mul31(a: np.ndarray | int, b: np.ndarray) -> np.ndarray:
    """``q6op_Vw_vmpy_VwVw_s1_rnd_sat`` (include/hvx_inlines.h): ``(a * b + 2**30) >> 31``, saturated."""
    return np.clip((np.asarray(a, I64) * b + 2 ** 30) >> 31, -2 ** 31, 2 ** 31 - 1)


def _bit_length(v: np.ndarray) -> np.ndarray:
    """Bits of each non-negative int64 below 2**53 (0 for 0)."""
    return np.frexp(v.astype(np.float64))[1].astype(I64)


def rsqrt_newton(vin: np.ndarray, select: np.ndarray) -> np.ndarray:
    """``rsqrt_newton_hvx`` (include/hvx_mathops.h) on int64 words: four Newton steps, then the odd-shift lanes
    (``select`` odd) times ``2 / sqrt(2)``."""
    half_input = vin >> 1
    x = np.full(vin.shape, _X0, I64)
    for _ in range(4):
        x3 = _mul31(x, _mul31(x, x))
        t1 = _wrap32(_mul31(_HALF_THREE, x) << 1)
        t2 = _wrap32(_mul31(half_input, x3) << 16)
        x = _wrap32(t1 - t2)
    odd = _wrap32(_mul31(_TWO_DIV_SQRT2, x) << 1)
    return np.where(select & 1, odd, x)


def _pack(prod: np.ndarray, shift: np.ndarray | int) -> np.ndarray:
    """``>> shift``, ``vpack:sat`` to halfwords then to signed bytes, ``+ 128``: the output codes."""
    return (np.clip(np.clip(prod >> shift, -32768, 32767), -128, 127) + 128).astype(np.uint8)


def along_depth(diff: np.ndarray) -> np.ndarray:
    """``hvx_l2norm_in_rows`` on the int64 distances ``diff`` (4-D, rows along axis 3)."""
    s = (diff * diff).sum(axis=3, keepdims=True)
    whole = np.sqrt(s.astype(np.float32)).astype(np.uint32).astype(I64)   # (unsigned) sqrtf((float)S)
    safe = np.maximum(whole, 1)
    rsh = _bit_length(safe) - 1                                          # floor_log2
    frac = ((32768 // safe) << rsh) & 0xFFFF
    frac = (frac ^ 0x8000) - 0x8000                                      # the low halfword, signed
    out = _pack(diff * frac, rsh + 8)
    return np.where(s == 0, np.uint8(ZERO_ROW_CODE), out)


def along_axis(diff: np.ndarray, axis: int) -> np.ndarray:
    """``hvx_l2norm_in_cols`` on the int64 distances ``diff`` (4-D), slices along ``axis`` (0..2), per lane."""
    s = (diff * diff).sum(axis=axis, keepdims=True)
    lz = 32 - _bit_length(s)
    shift = lz - 1
    shift2 = shift - 15
    r = rsqrt_newton(s << shift, shift2)
    r16 = np.clip(r >> 16, -32768, 32767)
    return _pack(diff * r16, 8 - ((shift2 + 1) >> 1))


def l2normalize_codes(x: np.ndarray, zero: int, axis: int) -> np.ndarray:
    """The device's output codes for uint8 ``x`` (4-D) with input zero code ``zero``, normalised along ``axis``
    (0..3)."""
    diff = x.astype(I64) - zero
    return along_depth(diff) if axis == 3 else along_axis(diff, axis)


def negated_rows(x: np.ndarray, zero: int) -> int:
    """How many depth rows of uint8 ``x`` ``hvx_l2norm_in_rows`` negates: a non-zero norm whose integer part is a
    power of two makes the reciprocal 32768, read as the halfword -32768."""
    d = x.astype(I64) - zero
    whole = np.sqrt((d * d).sum(axis=3).astype(np.float32)).astype(np.uint32).astype(I64)
    return int(((whole > 0) & ((whole & (whole - 1)) == 0)).sum())


def unwritten_zero_rows(shape: tuple[int, ...], diff_sq_sums: np.ndarray) -> np.ndarray:
    """Bool mask (``shape``) of the bytes ``hvx_l2norm_in_rows`` leaves unwritten on a 128-aligned output: in a row
    of zero distances the store covers the rest of the row's first vector and the next vector up to
    ``(left + depth - 1) % 128``; ``diff_sq_sums`` is the per-row sum of squares (axis 3 kept)."""
    depth = shape[3]
    rows = int(np.prod(shape[:3]))
    left = (np.arange(rows, dtype=I64) * depth) % 128
    first = 128 - left
    second = (left + depth - 1) % 128 + 1
    pos = np.arange(depth, dtype=I64)
    written = (pos[None, :] < first[:, None]) | (
        (pos[None, :] >= first[:, None]) & (pos[None, :] < (first + second)[:, None]))
    zero_row = (diff_sq_sums.reshape(rows) == 0)[:, None]
    return (zero_row & ~written).reshape(shape)
