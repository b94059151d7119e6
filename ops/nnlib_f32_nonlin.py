"""Float32 helpers of the nonlinear quint8 ops, step for step as hexagon_nn's C computes them (issue 19).

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


def _from_bits(i: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(i, dtype=np.int32).view(F)


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
