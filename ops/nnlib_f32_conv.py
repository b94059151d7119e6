"""float32 range arithmetic of hexagon_nn's 8x8->32 reference ops, step for step (issue 19, SEMANTICS §0).

The convolution, depthwise convolution and matrix multiply reference paths
(``ops/src/op_conv2d.c: conv2d_execute_ref``, ``op_depthwiseconv.c:
depthwiseconv2d_execute_ref``, ``op_matmul.c: matmul_execute``) compute their
output range and zero offsets in float32 from the raw input ranges (no
zero-fixing, no "range contains 0" check). The helpers here repeat those
expressions; :mod:`hexnn_import.ops.nnlib_f32` holds the shared ones
(``quantize_uint8``, ``roundf``).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.nnlib_f32 import EPS18, F, f32, roundf

#: ``(float)INT32_MAX`` and ``(float)INT32_MIN``: both round to +-2**31 in float32.
_F_I32_MAX = F(2.0 ** 31)
_F_I32_MIN = F(-2.0 ** 31)


def level_255(mn: float, mx: float) -> np.float32:
    """``(max - min) / 255`` in float32 (the 8x8->32 ops' level size; a true division, not ``flt_div_255``)."""
    return F(F(f32(mx) - f32(mn)) / F(255.0))


def product_range_f32(a_min: float, a_max: float, b_min: float, b_max: float) -> tuple[np.float32, np.float32]:
    """``((float)INT32_MIN * lvl, (float)INT32_MAX * lvl)`` with ``lvl = level_255(a) * level_255(b)`` in float32.

    ``conv2d_execute_ref`` / ``depthwiseconv2d_execute_ref`` / ``matmul_execute``: ``out_level_size =
    in_level_size * filt_level_size``; a product past float32 overflows to +-inf as in C.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        lvl = F(level_255(a_min, a_max) * level_255(b_min, b_max))
        return F(_F_I32_MIN * lvl), F(_F_I32_MAX * lvl)


def float_to_i32(v: np.float32) -> int:
    """A float32 already rounded to an integer, converted to int32 as Hexagon does (saturating; NaN -> -1,
    ``convert_sf2w``)."""
    if np.isnan(v):
        return -1
    return int(min(max(float(v), -2.0 ** 31), 2.0 ** 31 - 1))


def quantize_int(val: float, mn: float, mx: float) -> int:
    """``quantize_int`` (include/quantize.h): ``roundf((val - min) * (255f / fmaxf(1e-18f, max - min)))``, unsaturated.

    Unlike ``quantize_uint8`` the result is not clamped to 0..255: a range that
    excludes 0 gives an offset below 0 or above 255, which the reference
    convolutions subtract as it is. The float->int conversion saturates
    (Hexagon ``convert_sf2w``; x86 would give INT_MIN out of range).
    """
    mn32, mx32 = f32(mn), f32(mx)
    rng = max(EPS18, F(mx32 - mn32))
    resize = F(F(255.0) / rng)
    with np.errstate(over="ignore", invalid="ignore"):
        v = F(F(F(val) - mn32) * resize)
    return float_to_i32(F(roundf(v)))


def wrap_i32(acc: np.ndarray) -> np.ndarray:
    """Integer(-valued) sums reduced modulo 2**32 to int32, as the C's int32 accumulators wrap.

    ``acc`` is int64, or integer-valued floats exact in float64 (below 2**53);
    int64 arithmetic that wrapped past 2**63 is still right modulo 2**32.
    """
    a = acc if acc.dtype == np.int64 else acc.astype(np.int64)
    return a.astype(np.int32)
