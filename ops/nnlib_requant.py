"""qint32 -> quint8 requantization as hexagon_nn computes it (src/quantize.c), float32 step for step.

``nn_requantize_i32_to_qu8_hvx`` is what Requantize_32to8 and QuantizeDownAndShrinkRange_32to8 call on the
device (op_requantize.c); ``nn_requantize_i32_to_qu8`` is its portable twin. Both compute, in float32,

    out_scale = 255f / (out_max - out_min);  gain = in_level_size * out_scale;
    offset_f = 0.5f - out_min * out_scale

and then

* ``gain >= 1``: ``fallback_requantize_i32_to_qu8``: ``saturate_u8((int)((float)x * gain + offset_f))``
  (the device's ``(int)`` saturates, NaN gives -1: :func:`nnlib_f32.trunc_i32`);
* else ``gaini = roundf_i32(gain * 2**31)`` and either
  - the rounding-shift path (``scalar_requantize_i32_to_qu8``, and on the device ``hvx_quantize_32_to_8``):
    ``saturate_u8(((x * gaini + 2**30) >> 31) + (int)offset_f)`` (the HVX one through int16 saturations,
    which cannot change a u8 result since ``(int)offset_f`` is 0..255 for a zero-fixed range), or
  - on the device only, when ``n >= 128`` and ``gaini >= 1024`` (buffers are vector aligned there):
    ``quantize_asm`` (asm_src/quantize_h.S): ``offseti = roundf_i32(out_min / in_level_size)``,
    ``u = sat32(x - offseti)``, ``saturate_u8(sat16(sat32((u * gaini + 2**30) >> 31)))`` - the offset
    is subtracted *before* the scaling, so codes can differ by 1 from the portable path.

Modelled: the arithmetic of the scalar C, and of the HVX/asm routines as the oracle harness's hand-written
models state it (``q6op_Vw_vmpy_VwVw_s1_rnd_sat`` = ``(a*b + 2**30) >> 31`` saturated, ``vpack`` saturations).
Not modelled: unaligned device buffers (hexagon_nn allocates tensors vector aligned).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.compiled import requant_q31
from hexnn_import.ops.nnlib_f32 import F, i32_to_f32, roundf_i32_sat, trunc_i32
from hexnn_import.ops.quant import fast_clip

_I64 = np.int64


def _sat_u8(v: np.ndarray) -> np.ndarray:
    q = np.empty(v.shape, dtype=np.uint8)
    fast_clip(v, 0, 255, out=q, casting="unsafe")
    return q


def requant_params(level: np.float32, out_min: np.float32, out_max: np.float32) -> tuple[np.float32, np.float32]:
    """``(gain, offset_f)`` of ``nn_requantize_i32_to_qu8[_hvx]``, float32 (inf/NaN as the C gets them)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out_scale = F(F(255.0) / F(F(out_max) - F(out_min)))
        gain = F(F(level) * out_scale)
        offset_f = F(F(0.5) - F(F(out_min) * out_scale))
    return gain, offset_f


def requantize_i32_to_qu8(x: np.ndarray, level: np.float32, out_min: np.float32, out_max: np.float32,
                          device: bool = True) -> np.ndarray:
    """quint8 codes of int32 ``x`` (``in_level_size = level``) over ``[out_min, out_max]``: the device's
    ``nn_requantize_i32_to_qu8_hvx`` (vector-aligned buffers), or ``nn_requantize_i32_to_qu8`` when
    ``device`` is False. See the module docstring."""
    gain, offset_f = requant_params(level, out_min, out_max)
    n = x.size
    if gain >= F(1.0):
        with np.errstate(invalid="ignore", over="ignore"):
            v = i32_to_f32(x)
            v *= gain
            v += offset_f
        if np.isfinite(gain) and np.isfinite(offset_f):
            return _sat_u8(v)  # clip then cast == saturate_u8(trunc(v)) (integer bounds; inf clips)
        return _sat_u8(trunc_i32(v))
    gaini = _I64(roundf_i32_sat(F(gain * F(2.0 ** 31))))
    xi = x.astype(np.int32, copy=False)
    if device and n >= 128 and gaini >= 1024:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            offseti = _I64(roundf_i32_sat(F(F(out_min) / F(level))))
        fast = requant_q31(xi, int(offseti), int(gaini))   # the same int64 steps in one compiled pass
        if fast is not None:
            return fast
        u = xi.astype(np.int64) - offseti
        np.clip(u, -2 ** 31, 2 ** 31 - 1, out=u)
        u *= gaini
        u += _I64(2 ** 30)
        u >>= _I64(31)
        return _sat_u8(u)  # sat32 and sat16 before saturate_u8 cannot change a 0..255 clip
    offseto = _I64(trunc_i32(offset_f))
    v = np.multiply(xi, gaini, dtype=np.int64)
    v += _I64(2 ** 30)
    v >>= _I64(31)
    if device:
        # hvx_quantize_32_to_8: vpack_VwVw_sat (i16), vadd_VhVh_sat with saturate_i16(offset), vpack_VhVh_sat (u8)
        off16 = _I64(np.clip(offseto, -32768, 32767))
        if not 0 <= off16 <= 255:
            np.clip(v, -32768, 32767, out=v)
            v += off16
            np.clip(v, -32768, 32767, out=v)
            return _sat_u8(v)
        v += off16
        return _sat_u8(v)
    # scalar_requantize_i32_to_qu8: Q6_R_add_RR_sat (int32), saturate_u8
    v += offseto
    return _sat_u8(v)

