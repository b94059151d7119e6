"""hexagon_nn's float32 range arithmetic, step for step (issue 19, SEMANTICS §0: the C code wins).

hexagon_nn computes every range, step, gain and reciprocal in float32
(``include/quantize.h``, ``src/quantize.c``); these functions repeat those
expressions in numpy float32 so that the engine's output ranges and codes are
the C code's, bit for bit. Every function names the C routine it follows.
Scalars are ``np.float32``; arrays stay float32 (numpy 2 keeps Python floats
"weak", so ``x * 255.0`` stays float32 when ``x`` is float32).
"""
from __future__ import annotations

import numpy as np

F = np.float32
#: ``fmaxf(1e-18f, ...)`` floor on a width (include/quantize.h).
EPS18 = F(1e-18)
#: The two halves of 1/255 in ``flt_div_255`` (include/quantize.h, non-hexagon branch).
_K1 = F(float.fromhex("0x8.08081p-11"))
_K2 = F(float.fromhex("-0xF.EFEFFp-36"))
#: "within 2^-14 of an integer" thresholds of quantize_adjust_range / adjust_minmax_for_zero.
_ZF_LO = F(6.1035156e-05)
_ZF_HI = F(0.999938965)


def f32(x) -> np.float32:  # type: ignore[no-untyped-def]
    """A scalar as float32 (an input tensor's min/max as the C code reads it)."""
    return F(np.asarray(x, dtype=np.float32).reshape(-1)[0])


def flt_div_255(x):  # type: ignore[no-untyped-def]
    """``flt_div_255`` as the device computes it: ``Q6_R_sfmpyacc_RR(k2*x, x, k1)``, i.e. ``fmaf(x, k1, k2*x)``
    (include/quantize.h, hexagon branch): ``x / 255`` correctly rounded for every float32 ``x``.

    nnlib's non-hexagon branch rounds ``k1*x`` before adding and is one ulp off for ~30% of widths; the
    oracle build (tools/golden_nnlib.py) patches that branch to ``fmaf``, as on the device. Here the fused
    multiply-add is exact in float64: ``k1*x`` has at most 48 significant bits and ``k2*x`` sits 24
    binades lower, so their sum fits in 53 bits and only the final float32 rounding remains.
    """
    x = np.asarray(x, dtype=np.float32) if not isinstance(x, np.float32) else x
    small = _K2 * x
    with np.errstate(over="ignore", invalid="ignore"):
        out = (np.float64(_K1) * np.asarray(x, dtype=np.float64) + np.asarray(small, dtype=np.float64)).astype(np.float32)
    return F(out) if np.ndim(out) == 0 else out


def roundf_i32(x):  # type: ignore[no-untyped-def]
    """``roundf_i32``: ``(int)(val + copysignf(0.5f, val))``, the sum rounded to float32 first."""
    x = np.asarray(x, dtype=np.float32)
    return np.trunc(x + np.copysign(F(0.5), x)).astype(np.int64)


def roundf(x):  # type: ignore[no-untyped-def]
    """C ``roundf``: round half away from zero, exactly (no float32 addition)."""
    x = np.asarray(x, dtype=np.float32)
    r = np.trunc(x)
    return (r + np.where(np.abs(x - r) >= F(0.5), np.sign(x), F(0))).astype(np.float32)


def fast_roundf(x):  # type: ignore[no-untyped-def]
    """Hexagon ``convert_sf2w`` (nnlib's ``fast_roundf`` on device): round half to even, saturating to int32."""
    x = np.asarray(x, dtype=np.float32)
    r = np.rint(x.astype(np.float64))
    return np.clip(np.nan_to_num(r, nan=0.0), -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int64)


def saturate_u8(v):  # type: ignore[no-untyped-def]
    """``saturate_u8``."""
    return np.clip(v, 0, 255)


def quantize_uint8(val, minval, maxval):  # type: ignore[no-untyped-def]
    """``quantize_uint8`` (include/quantize.h): ``saturate_u8(roundf((val - min) * (255f / fmaxf(1e-18f, max - min))))``."""
    minval, maxval = F(minval), F(maxval)
    rng = max(EPS18, F(maxval - minval))
    resize = F(F(255.0) / rng)
    v = (np.asarray(val, dtype=np.float32) - minval) * resize
    return saturate_u8(roundf(v)).astype(np.uint8)


def level_size_zero(minval, maxval) -> tuple[np.float32, int]:  # type: ignore[no-untyped-def]
    """``get_qu8_level_size_zero``: ``(flt_div_255(max - min), saturate_u8(roundf_i32(-min / level)))``."""
    minval, maxval = F(minval), F(maxval)
    level = flt_div_255(F(maxval - minval))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = F(-minval) / level
    if not np.isfinite(z):
        return level, 0
    return level, int(saturate_u8(int(roundf_i32(z))))


def quantize_adjust_range(in_min, in_max) -> tuple[np.float32, np.float32, np.float32, np.float32]:  # type: ignore[no-untyped-def]
    """``quantize_adjust_range`` (include/quantize.h): ``(min, max, stepsize, recip_stepsize)``, all float32.

    Widens ``[in_min, in_max]`` to contain 0 and moves one end as little as
    possible so that the zero point is an integer; the step is ``flt_div_255``
    of the range and the reciprocal ``255f / range``.
    """
    minval = min(F(0.0), F(in_min))
    maxval = max(F(0.0), F(in_max))
    rng = max(EPS18, F(maxval - minval))
    recip = F(F(255.0) / rng)
    if minval < 0:
        z = F(-minval * recip)
        zi = F(np.floor(z))
        zf = F(z - zi)
        if _ZF_LO < zf < _ZF_HI:
            if zi > 0 and (zi > F(253.0) or F(F(zf - F(1.0)) * minval) >= F(zf * maxval)):
                rng = F(F(F(-255.0) * minval) / zi)
                maxval = F(minval + rng)
            else:
                minval = F(F(maxval * F(zi + F(1.0))) / F(zi - F(254.0)))
                rng = F(maxval - minval)
            recip = F(F(255.0) / rng)
    return minval, maxval, flt_div_255(rng), recip


def adjust_minmax_for_zero(mn, mx) -> tuple[int, np.float32, np.float32]:  # type: ignore[no-untyped-def]
    """``adjust_minmax_for_zero`` (src/quantize.c): ``(rc, min, max)``; rc -1 when ``max - min < 1e-6``, 0 unchanged,
    1 min moved, 2 max moved."""
    mn, mx = F(mn), F(mx)
    dif = F(mx - mn)
    if not dif >= F(1e-6):
        return -1, mn, mx
    if mn == 0:
        return 0, mn, mx
    z = F(F(F(-255.0) * mn) / dif)
    zi = F(np.floor(z))
    zf = F(z - zi)
    if zf <= _ZF_LO or zf >= _ZF_HI:
        return 0, mn, mx
    if zi > 0 and (zi > F(253.0) or F(F(zf - F(1.0)) * mn) >= F(zf * mx)):
        return 2, mn, F(mn - F(F(F(255.0) * mn) / zi))
    return 1, F(F(mx * F(zi + F(1.0))) / F(zi - F(254.0))), mx


# ---- Hexagon float -> int conversions and the qint32 level (added for issue 19, requantize area) ----

#: ``0x1.0p-32f``: one qint32 code of a range is ``(max - min) * 2**-32`` (op_requantize.c).
_P2M32 = F(2.0 ** -32)


def trunc_i32(x):  # type: ignore[no-untyped-def]
    """C ``(int)x`` on Hexagon (``convert_sf2w:chop``): truncate toward 0, saturate to int32, NaN -> -1.

    (x86 gives INT_MIN for every out-of-range or NaN value; the device saturates.) int64 result.
    """
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.clip(x.astype(np.float64), -2.0 ** 31, 2.0 ** 31 - 1))
    return np.where(np.isnan(t), -1.0, t).astype(np.int64)


def roundf_i32_sat(x):  # type: ignore[no-untyped-def]
    """``roundf_i32`` as the device computes it: ``(int)(x + copysignf(0.5f, x))`` (float32 sum) with
    Hexagon's saturating cast (:func:`trunc_i32`). int64 result."""
    x = np.asarray(x, dtype=np.float32)
    return trunc_i32(x + np.copysign(F(0.5), x))


def i32_to_f32(x):  # type: ignore[no-untyped-def]
    """C ``(float)`` of int32 codes: round to nearest even to float32 (exact below 2**24)."""
    return np.asarray(x).astype(np.float32)


def qint32_level(in_min, in_max) -> np.float32:  # type: ignore[no-untyped-def]
    """``in_level_size = (in_max - in_min) * 0x1.0p-32f`` (op_requantize.c), float32."""
    return F(F(F(in_max) - F(in_min)) * _P2M32)


def adjust_minmax_for_zero_with_constraints(mn: np.float32, mx: np.float32,
                                            constraint: int) -> tuple[np.float32, np.float32]:
    """``adjust_minmax_for_zero_with_constraints`` (src/quantize.c): zero-fix ``[mn, mx]``.

    ``constraint`` bit 0: min is fixed, bit 1: max is fixed (3: move one end when the zero
    point is skewed 3:1, else shift both ends).
    """
    mn, mx = F(mn), F(mx)
    dif = F(mx - mn)
    if not dif > 0 or mn == 0:
        return mn, mx
    z = F(F(F(-255.0) * mn) / dif)
    zi = F(np.floor(z))
    zf = F(z - zi)
    if zf <= _ZF_LO or zf >= _ZF_HI:
        return mn, mx
    mnk = F(F(zf - F(1.0)) * mn)
    mxk = F(zf * mx)
    zirnd = F(zi + F(1.0)) if zf >= 0.5 else zi
    c = constraint & 3
    if c == 0:
        how = "max_out" if zi >= 1 and (zi >= 254 or mnk >= mxk) else "min_out"
    elif c == 1:
        how = "max_out" if zi >= 1 and (z >= F(192.25) or F(mnk * F(8.0)) > mxk) else "min_nearest"
    elif c == 2:
        how = "max_nearest" if z >= F(63.75) and (zi >= 254 or mnk > F(mxk * F(8.0))) else "min_out"
    else:
        if z <= F(63.75):
            how = "min_nearest"
        elif z >= F(192.25):
            how = "max_nearest"
        else:
            adj = F(F(F(z - zirnd) * dif) * F(1.0 / 255.0))
            return F(mn + adj), F(mx + adj)
    if how == "max_nearest":
        zi, how = zirnd, "max_out"
    if how == "max_out":
        return mn, F(mn - F(F(F(255.0) * mn) / zi))
    if how == "min_out":
        zirnd = F(zi + F(1.0))
    return F(F(mx * zirnd) / F(zirnd - F(255.0))), mx


def fmaf(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 ``fmaf(a, b, c)`` (Hexagon ``sfmpyacc``; clang contracts ``a * b + c`` into it), exactly: ``a * b`` is exact in float64, the sum's
    rounding error is kept (two-sum) and decides where the float64 sum sits on a float32 tie."""
    p = a.astype(np.float64) * b.astype(np.float64)
    cd = c.astype(np.float64)
    s = p + cd
    bv = s - p
    err = (p - (s - bv)) + (cd - bv)  # s + err is the exact sum
    f = s.astype(F)
    fd = f.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        lo = np.where(fd <= s, f, np.nextafter(f, F(-np.inf)))
        hi = np.where(fd >= s, f, np.nextafter(f, F(np.inf)))
        tie = (lo != hi) & (s == (lo.astype(np.float64) + hi.astype(np.float64)) / 2)
    return np.where(tie & (err > 0), hi, np.where(tie & (err < 0), lo, f))
