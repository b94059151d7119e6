"""Float32 helpers of the nonlinear quint8 ops, step for step as hexagon_nn's C computes them (issue 19).

* :func:`tanhf` - the ``tanhf`` the nnlib oracle links (x86-64 glibc's scalar ``tanhf``: fdlibm's
  ``s_tanhf.c`` over fdlibm's ``s_expm1f.c``, every operation in float32). It is not correctly
  rounded: ``np.float32(np.tanh(np.float64(x)))`` differs from it on about 3% of all float32
  inputs, numpy's own float32 ``tanh`` too, so op_tanh.c's results need this port. Checked
  against glibc 2.36 ``tanhf`` on every finite float32 (0 differences).
* :func:`expf_approx`, :func:`flt_power2` - op_softmax.c ``expf_approx`` and include/quantize.h
  ``flt_power2``.
* :func:`roundf_i32` - include/quantize.h ``roundf_i32`` including what its ``(int)`` cast gives
  outside int32 on x86 (``INT_MIN``; Hexagon saturates - the two agree for negative overflow).

Scalars and arrays are float32 throughout (numpy keeps float32 arithmetic float32, no FMA).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.registry import KernelContext

F = np.float32
I32_MIN = -2 ** 31

# fdlibm s_expm1f.c constants (float32 bit patterns as fdlibm lists them)
_LN2_HI = np.uint32(0x3F317180).view(F)
_LN2_LO = np.uint32(0x3717F7D1).view(F)
_INVLN2 = np.uint32(0x3FB8AA3B).view(F)
_Q = [np.uint32(b).view(F) for b in (0xBD088889, 0x3AD00D01, 0xB8A670CD, 0x36867E54, 0xB457EDBB)]


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=F).view(np.int32)


def _from_bits(i: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(i, dtype=np.int32).view(F)


def _add_exponent(y: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``SET_FLOAT_WORD(y, GET_FLOAT_WORD(y) + (k << 23))``: multiply by 2**k through the bits."""
    return _from_bits((_bits(y).astype(np.int64) + (k.astype(np.int64) << 23)).astype(np.int32))


def expm1f(x: np.ndarray) -> np.ndarray:
    """fdlibm ``expm1f`` (glibc's scalar x86-64 one) for finite float32 ``x`` with ``|x| < 88.72``."""
    x = np.asarray(x, dtype=F).reshape(-1)
    neg = x < 0
    ax = np.abs(x)
    hx = _bits(ax)
    one = F(1.0)
    # argument reduction: k = round(x / ln2), x = hi - lo, c the rounding error of that subtraction
    near = (hx > 0x3EB17218) & (hx < 0x3F851592)       # 0.5 ln2 < |x| < 1.5 ln2: k = +-1
    k_big = (_INVLN2 * x + np.where(neg, F(-0.5), F(0.5))).astype(np.int32)   # C int conversion truncates
    k = np.where(hx > 0x3EB17218, np.where(near, np.where(neg, -1, 1), k_big), 0).astype(np.int32)
    t = k.astype(F)
    hi = np.where(near, np.where(neg, x + _LN2_HI, x - _LN2_HI), x - t * _LN2_HI)
    lo = np.where(near, np.where(neg, -_LN2_LO, _LN2_LO), t * _LN2_LO)
    red = k != 0
    xr = np.where(red, hi - lo, x)
    c = np.where(red, (hi - xr) - lo, F(0.0))
    # x in the primary range
    hfx = F(0.5) * xr
    hxs = xr * hfx
    r1 = one + hxs * (_Q[0] + hxs * (_Q[1] + hxs * (_Q[2] + hxs * (_Q[3] + hxs * _Q[4]))))
    t = F(3.0) - r1 * hfx
    e = hxs * ((r1 - t) / (F(6.0) - xr * t))
    res_k0 = xr - (xr * e - hxs)
    e = xr * (e - c) - c
    e = e - hxs
    res_km1 = F(0.5) * (xr - e) - F(0.5)
    res_k1 = np.where(xr < F(-0.25), F(-2.0) * (e - (xr + F(0.5))), one + F(2.0) * (xr - e))
    kc = np.clip(k, 0, 56)
    y_far = _add_exponent(one - (e - xr), k) - one                       # k <= -2 or k > 56
    t_lo = _from_bits(0x3F800000 - (0x1000000 >> np.clip(kc, 0, 22)))     # 1 - 2**-k, k < 23
    y_lo = _add_exponent(t_lo - (e - xr), k)
    t_hi = _from_bits((0x7F - kc) << 23)                                  # 2**-k, 23 <= k <= 56
    y_hi = _add_exponent((xr - (e + t_hi)) + one, k)
    res = np.where(k == 0, res_k0,
          np.where(k == -1, res_km1,
          np.where(k == 1, res_k1,
          np.where((k <= -2) | (k > 56), y_far,
          np.where(k < 23, y_lo, y_hi)))))
    res = np.where(hx < 0x33000000, x, res)                               # |x| < 2**-25: x itself
    res = np.where(neg & (hx >= 0x4195B844), F(-1.0), res)                # x < -27 ln2: -1
    return res.astype(F)


def tanhf(x: np.ndarray) -> np.ndarray:
    """fdlibm ``tanhf`` (glibc's scalar x86-64 one) on float32 ``x``, elementwise; same shape as ``x``."""
    x = np.asarray(x, dtype=F)
    shape = x.shape
    x = x.reshape(-1)
    ax = np.abs(x)
    ix = _bits(ax)
    one, two = F(1.0), F(2.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mid = (ix < 0x41B00000)
        big = mid & (ix >= 0x3F800000)                                   # 1 <= |x| < 22
        t_big = expm1f(np.where(big, two * ax, F(0.0)))
        t_small = expm1f(np.where(mid & ~big, -two * ax, F(0.0)))
        z = np.where(big, one - two / (t_big + two), -t_small / (t_small + two))
        z = np.where(mid, z, one - F(1e-30))                             # |x| >= 22 (and Inf): 1
        z = np.where(np.signbit(x), -z, z)
        z = np.where(ix < 0x24000000, x * (one + x), z)                  # |x| < 2**-55 (and 0)
        z = np.where(np.isnan(x), x, z)
    return z.astype(F).reshape(shape)


def roundf_i32(x: np.ndarray) -> np.ndarray:
    """include/quantize.h ``roundf_i32``: ``(int)(x + copysignf(0.5f, x))`` with the float32 sum; outside
    int32 (and NaN) the x86 conversion gives ``INT_MIN``. int64 result."""
    x = np.asarray(x, dtype=F)
    with np.errstate(invalid="ignore", over="ignore"):
        s = np.trunc(x + np.copysign(F(0.5), x)).astype(np.float64)
    ok = (s >= -2.0 ** 31) & (s < 2.0 ** 31)
    return np.where(ok, np.where(ok, s, 0.0), float(I32_MIN)).astype(np.int64)


def flt_power2(n: np.ndarray) -> np.ndarray:
    """include/quantize.h ``flt_power2``: the float32 with exponent field ``saturate_u8(n + 127)`` and a
    zero mantissa (0.0 for ``n <= -127``, Inf for ``n >= 128``)."""
    e = np.clip(np.asarray(n, dtype=np.int64) + 127, 0, 255).astype(np.int32)
    return _from_bits(e << 23)


#: op_softmax.c ``expf_approx`` constants: ``(float)(16384.0/0.69314718056)``, ``(float)(1./16384.)``.
_EXP_SCALE = F(16384.0 / 0.69314718056)
_EXP_FRAC = F(1.0 / 16384.0)
_EXP_C = (F(0.69051585), F(0.23793659), F(0.07154756))


def expf_approx(x: np.ndarray) -> np.ndarray:
    """op_softmax.c ``expf_approx``: ``2**(x/ln2)`` from a 14-bit fixed-point exponent and a cubic for the
    fraction (about 11 bits), all float32."""
    xfrac = roundf_i32(np.asarray(x, dtype=F) * _EXP_SCALE)
    xf = (xfrac & 0x3FFF).astype(F) * _EXP_FRAC
    exp0 = F(1.0) + xf * (_EXP_C[0] + xf * (_EXP_C[1] + xf * _EXP_C[2]))
    return (flt_power2(xfrac >> 14) * exp0).astype(F)


def read_any_range(ctx: KernelContext, mn_arr: np.ndarray, mx_arr: np.ndarray, what: str) -> tuple[np.float32, np.float32]:
    """An input's ``(min, max)`` as the C reads them (float32), any finite values; hexagon_nn does not
    check them (ranges excluding 0 or with min > max are computed with as given)."""
    mn, mx = ctx.scalar(mn_arr, f"{what} min"), ctx.scalar(mx_arr, f"{what} max")
    if not (math.isfinite(mn) and math.isfinite(mx)):
        raise ctx.fail(f"{what} range [{mn}, {mx}] is not finite")
    return F(mn), F(mx)
