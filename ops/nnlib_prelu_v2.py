"""QuantizedPRelu_8_V2's codes as hexagon_nn's device computes them (op_prelu_v2_d32.c, ``prelu_opt_execute``:
``set_scaling`` and ``hvx_process_prelu``; the flat QuantizedPRelu_8_V2 has no execute function, so the d32 op is
the one the device runs; issue 36).

``set_scaling`` (float32): the levels and zero codes of the input, alpha and output ranges
(``get_qu8_level_size_zero``), ``pos_scale = in_level / out_level``, ``neg_scale = pos_scale * alpha_level``; each
scale ``s`` becomes a left shift ``lsh = s <= 1 ? 0 : flt_getexp(s)`` and a 31-bit gain ``roundf_i32(ldexp(s, 31 -
lsh))`` (the float to int conversion saturating as Hexagon's ``convert_sf2w`` does: a scale of exactly 1 gives
``0x7fffffff``). Per element, ``x0 = x - in_zero``:

- ``x >= in_zero``: ``(wrap32(x0 << pos_lsh) * pos_gain + 2**30) >> 31`` (``q6op_Vw_vmpy_VwVw_s1_rnd_sat``) plus
  the output zero code, saturated to 32, 16, then 8 bits;
- else the same with ``x0 * (alpha - alpha_zero)`` (``Q6_Ww_vmpy_VhVh``), ``neg_lsh``, ``neg_gain``.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.nnlib_f32 import F, level_size_zero

I32 = (-2 ** 31, 2 ** 31 - 1)


def _sat32(v: np.ndarray) -> np.ndarray:
    return np.clip(v, *I32)


def _wrap32(v: np.ndarray) -> np.ndarray:
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def shift_gain(scale: np.float32) -> tuple[int, int]:
    """``(lsh, gain)`` of one scale as ``set_scaling`` makes them (module doc)."""
    scale = F(scale)
    lsh = 0 if scale <= 1.0 else int(((int(scale.view(np.int32)) >> 23) & 0xFF) - 126)   # flt_getexp
    v = F(np.ldexp(scale, 31 - lsh))
    r = math.trunc(float(F(v + F(math.copysign(0.5, float(v))))))   # roundf_i32: (int)(x + copysignf(0.5f, x))
    return lsh, int(np.clip(r, *I32))


def _stage(t: np.ndarray, lsh: int, gain: int, out_zero: int) -> np.ndarray:
    t = _wrap32(t << lsh) if lsh > 0 else t
    r = _sat32((t * gain + 2 ** 30) >> 31)
    return np.clip(_sat32(r + out_zero), -32768, 32767)


def prelu_v2_table(in_range: tuple[float, float], al_range: tuple[float, float],
                   out: tuple[float, float]) -> np.ndarray:
    """The device's code for every (x code, alpha code), ``[256, 256]`` int64 before the last saturation to
    uint8 (module doc)."""
    in_level, in_zero = level_size_zero(*in_range)
    al_level, al_zero = level_size_zero(*al_range)
    out_level, out_zero = level_size_zero(*out)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pos = F(in_level / out_level)
        neg = F(pos * al_level)
    pos_lsh, pos_gain = shift_gain(pos)
    neg_lsh, neg_gain = shift_gain(neg)
    x0 = np.arange(256, dtype=np.int64) - in_zero
    a0 = np.arange(256, dtype=np.int64) - al_zero
    up = _stage(x0, pos_lsh, pos_gain, out_zero)
    down = _stage(np.multiply.outer(x0, a0), neg_lsh, neg_gain, out_zero)
    return np.where((np.arange(256) >= in_zero)[:, None], up[:, None], down)
