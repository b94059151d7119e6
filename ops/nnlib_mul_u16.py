"""QuantizedMul_u16 as hexagon_nn's device code computes it (ops/src/op_addsubmul_16.c, issue 36), in numpy.

``mul_16_execute`` sets its scaling in float32 (``set_mul_scaling``):

- steps ``(max - min) * (float)(1./65536.)``; zero codes ``saturate_u16((int)(-min / step + 0.5f))`` (a range
  without 0 saturates its zero code to 0 or 65535);
- ``ab_step = a_step * b_step * 8``; when it exceeds ``out_step * (float)(4095./4096.)`` the output step becomes
  ``ab_step / (4095/4096)`` and the range ``[-step * zero_out, step * (65536 - zero_out)]`` about the requested
  zero code, with scale ``4095/4096``; else the scale is ``ab_step / out_step``;
- ``mulscale = min(0x7fffffff, roundf_u32(scale * 2**31))`` (``convert_sf2uw`` of ``x + 0.5f``, truncating);
- ``bias = (32768 - za) - (2 za - 65535)(zb - 32768)``, ``postadd = 8 zo - ((bias * mulscale + 2**30) >> 31)``.

Every element, on the HVX rows (``mul_u16_stride_11_hvx`` and the scalar-operand ``_10`` / ``rev_01``) and the C
ones alike: ``s = (a - za)(b - zb) + bias`` modulo 2**32, ``t = sat32((s * mulscale + 2**30) >> 31)``,
``t = sat32(t + postadd)``, the code ``sat_u16((t + 4) >> 3)`` (a scalar operand at its zero code is the fill of
``zo``, which this gives too).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.nnlib_f32 import F

I64 = np.int64
_INV65536 = F(1.0 / 65536.0)
_MAX_SCALE = F(4095.0 / 4096.0)


def _sat32(v: np.ndarray | int) -> np.ndarray:
    return np.clip(v, -2 ** 31, 2 ** 31 - 1)


def _wrap32(v: np.ndarray | int) -> np.ndarray | int:
    return ((v + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31


def _int_chop(x: np.float32) -> int:
    """``(int)x`` on Hexagon (``convert_sf2w:chop``: towards zero, saturating; NaN gives -1)."""
    if np.isnan(x):
        return -1
    return int(np.clip(np.trunc(np.float64(x)), -2 ** 31, 2 ** 31 - 1))


def zero_code(mn: np.float32, step: np.float32) -> int:
    """``saturate_u16((int)(-min / step + 0.5f))``."""
    with np.errstate(all="ignore"):
        return int(np.clip(_int_chop(F(F(F(-mn) / step) + F(0.5))), 0, 65535))


def roundf_u32(x: np.float32) -> int:
    """``roundf_u32`` (include/quantize.h, Hexagon): ``convert_sf2uw:chop(x + 0.5f)``, negatives to 0."""
    v = F(x + F(0.5))
    if np.isnan(v):
        return 0xFFFFFFFF
    return int(np.clip(np.trunc(np.float64(v)), 0, 2 ** 32 - 1))


def mul_u16_scaling(a_rng: tuple[float, float], b_rng: tuple[float, float], o_rng: tuple[float, float]
                    ) -> tuple[int, int, int, int, int, np.float32, np.float32, bool]:
    """``set_mul_scaling`` for u16: (za, zb, mulscale, bias, postadd, out_min, out_max, whether widened)."""
    amn, amx, bmn, bmx, omn, omx = (F(v) for v in (*a_rng, *b_rng, *o_rng))
    a_step, b_step = F(F(amx - amn) * _INV65536), F(F(bmx - bmn) * _INV65536)
    o_step = F(F(omx - omn) * _INV65536)
    za, zb, zo = zero_code(amn, a_step), zero_code(bmn, b_step), zero_code(omn, o_step)
    ab_step = F(F(a_step * b_step) * F(8.0))
    widened = bool(ab_step > F(o_step * _MAX_SCALE))
    if widened:
        o_step = F(ab_step / _MAX_SCALE)
        t = F(zo)
        omn, omx = F(F(-o_step) * t), F(o_step * F(F(65536.0) - t))
        scale = _MAX_SCALE
    else:
        scale = F(ab_step / o_step)
    mulscale = min(0x7FFFFFFF, roundf_u32(F(scale * F(2.0 ** 31))))
    bias = (32768 - za) - (2 * za - 65535) * (zb - 32768)
    postadd = int(_wrap32(8 * zo - ((bias * mulscale + 2 ** 30) >> 31)))
    return za, zb, mulscale, bias, postadd, omn, omx, widened


def mul_u16_codes(a: np.ndarray, b: np.ndarray, za: int, zb: int, mulscale: int, bias: int,
                  postadd: int) -> np.ndarray:
    """The device's uint16 codes of ``a * b`` (uint16 arrays already broadcast to one shape)."""
    s = _wrap32((a.astype(I64) - za) * (b.astype(I64) - zb) + bias)
    t = _sat32((s * mulscale + 2 ** 30) >> 31)
    t = _sat32(t + postadd)
    return np.clip((t + 4) >> 3, 0, 65535).astype(np.uint16)
