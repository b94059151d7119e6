"""Convert_16_8 / Convert_u16_8 as hexagon_nn's device code computes them (op_convert_16.c cvt_x16_8_execute).

The output range is ``quantize_adjust_range`` of the requested range in float32, its zero code
``saturate_u8(roundf_i32(-out_min * out_recip))``; the input step ``(in_max - in_min) * 2**-16``; when the output
step is below twice it, it becomes twice it (``conv_ratio = 0.5``) and the range ``out_step * (-zero, 255 - zero)``,
else ``conv_ratio = in_step / out_step``. A quint16 input's zero is ``saturate_u16((int)(0.5f - in_min /
in_step))``. ``rsh = max(7, -1 - flt_getexp(conv_ratio * 0.99993896f))``, then, until the offset fits int16
(``--rsh``): ``scale = roundf_i32(conv_ratio * 2**(rsh + 15))``, ``offset = (out_zero << rsh) - (((in_zero -
0x8000) * scale + 2**14) >> 15)``. Per element, ``v = (int16)(code ^ 0x8000)`` (quint16; qint16 as is), ``prod =
(v * scale + 2**14) >> 15``, ``out = saturate_u8((prod + offset + (1 << rsh >> 1)) >> rsh)``: int32 arithmetic,
products wrapping as Hexagon ``mpyi`` does (v66 build's scalar loop). Every float step is float32.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.nnlib_f32 import F, quantize_adjust_range, roundf_i32_sat, trunc_i32

#: ``0.99993896f`` of cvt_x16_8_execute's rsh.
_RSH_FUDGE = F(0.99993896)


def _wrap32(v: np.ndarray | int) -> np.ndarray:
    """int32 two's-complement wrap of int64 values (Hexagon ``mpyi`` / ``add``)."""
    return ((np.asarray(v, dtype=np.int64) + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31


def _getexp(x: np.float32) -> int:
    """include/quantize.h ``flt_getexp``: the exponent field less 126."""
    return int((int(np.float32(x).view(np.int32)) >> 23) & 0xFF) - 126


def out_range(in_min: np.float32, in_max: np.float32, req_min: np.float32,
              req_max: np.float32) -> tuple[np.float32, np.float32, int, np.float32, np.float32]:
    """``(out_min, out_max, out_zero, conv_ratio, in_step)`` of cvt_x16_8_execute, in float32."""
    out_min, out_max, out_step, out_recip = quantize_adjust_range(F(req_min), F(req_max))
    out_zero = int(np.clip(roundf_i32_sat(F(-out_min) * out_recip), 0, 255))
    in_step = F(F(F(in_max) - F(in_min)) * F(1.0 / 65536))
    if out_step < F(in_step * F(2.0)):
        out_step = F(in_step * F(2.0))
        return F(out_step * F(-out_zero)), F(out_step * F(255 - out_zero)), out_zero, F(0.5), in_step
    return out_min, out_max, out_zero, F(in_step / out_step), in_step


def scaling(conv_ratio: np.float32, in_zero: int, out_zero: int) -> tuple[int, int, int]:
    """``(scale_fac, offset, rsh)``: cvt_x16_8_execute's loop lowering rsh until the offset fits int16."""
    rsh = max(7, -1 - _getexp(F(conv_ratio * _RSH_FUDGE)))
    while True:
        p2 = np.uint32(min(max(rsh + 15 + 127, 0), 255) << 23).view(np.float32)   # flt_power2
        scale = int(roundf_i32_sat(F(conv_ratio * p2)))
        inzero_scaled = int(_wrap32(int(_wrap32((in_zero - 0x8000) * scale)) + (1 << 14))) >> 15
        offset = int(_wrap32((out_zero << rsh) - inzero_scaled))
        if -32768 <= offset <= 32767:
            return scale, offset, rsh
        rsh -= 1


def convert_x16_8(codes: np.ndarray, in_min: float, in_max: float, req_min: float, req_max: float,
                  unsigned: bool) -> tuple[np.ndarray, np.float32, np.float32]:
    """quint8 codes and the output range of Convert_u16_8 (``unsigned``) or Convert_16_8, as the device makes
    them (module doc)."""
    in_min32, in_max32 = F(in_min), F(in_max)
    out_min, out_max, out_zero, ratio, in_step = out_range(in_min32, in_max32, F(req_min), F(req_max))
    in_zero = 0x8000
    if unsigned:
        in_zero = int(np.clip(trunc_i32(F(F(0.5) - F(in_min32 / in_step))), 0, 65535))
    scale, offset, rsh = scaling(ratio, in_zero, out_zero)
    raw = np.asarray(codes).astype(np.int64)
    v = ((raw ^ 0x8000) if unsigned else raw) & 0xFFFF
    v = np.where(v >= 0x8000, v - 0x10000, v)
    prod = _wrap32(_wrap32(v * scale) + (1 << 14)) >> 15
    out = _wrap32(prod + offset + ((1 << rsh) >> 1)) >> rsh
    return np.clip(out, 0, 255).astype(np.uint8).reshape(np.shape(codes)), out_min, out_max
