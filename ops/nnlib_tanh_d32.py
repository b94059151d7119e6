"""The 256-code table of op_tanh_d32.c (QuantizedTanh_8_d32 / QuantizedSigmoid_8_d32), integer step for step.

hexagon_nn's d32 tanh/sigmoid (and, on the device, the non-_ref flat QuantizedTanh_8 / Sigmoid_8)
build one u8 -> u8 table with HVX (``make_tanh_lookup_table``) whose arithmetic is the scalar
``operate_ref_function`` (the _d32_ref ops): per code ``d = q - in_zero``,
``p = sat_i16((k * |d| + rbias) >> rsh)`` (``set_scaling_parms``: ``k``, ``rsh`` from
``step * 1.25 * 8192``, halved for sigmoid), a 16-segment quadratic in fixed point on ``p`` (the
coefficients below), ``~`` for ``d < 0``, averaged with the midrange (254*128 tanh, 255*128 sigmoid)
and ``(v + 64) >> 7`` saturated to u8. Output ranges ``[-1, 128/127]`` and ``[0, 1]``.
The HVX form saturates a few intermediates the scalar form does not; with these coefficients
they stay far inside int16, so both give the same table.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.nnlib_f32 import flt_div_255
from hexnn_import.ops.nnlib_f32_nonlin import roundf_i32

F = np.float32
#: op_tanh_d32.c ``tanh_lut`` / ``sigmoid_lut`` as (2nd order, 1st order, 0th order) per segment 0..15.
_TANH_C2 = (-7994, -21652, -29653, -31481, -28797, -23876, -18511, -13703,
            -9826, -6894, -4766, -3262, -2217, -1500, -1011, -677)
_TANH_C1 = (26172, 25098, 22283, 18480, 14485, 10862, 7879, 5579, 3883, 2671, 1822, 1236, 835, 563, 378, 254)
_TANH_C0 = (0, 6418, 12354, 17462, 21590, 24761, 27104, 28784, 29965, 30782, 31342, 31723, 31981, 32155, 32272, 32351)
_SIG_C2 = (-8026, -21738, -29770, -31605, -28910, -23970, -18584, -13757,
           -9865, -6921, -4785, -3275, -2226, -1506, -1015, -680)
_SIG_C1 = (26275, 25197, 22371, 18553, 14542, 10905, 7910, 5601, 3899, 2681, 1829, 1240, 838, 565, 380, 255)
_SIG_C0 = (0, 6443, 12403, 17531, 21675, 24859, 27210, 28898, 30083, 30904, 31466, 31848, 32107, 32282, 32399, 32479)


def scaling_parms(in_min: F, in_max: F, sigmoid: bool) -> tuple[int, int, int]:
    """``set_scaling_parms``: ``(in_zero, k, rsh)`` in float32 as the C computes them."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        step = flt_div_255(F(in_max - in_min))
        zero = int(np.clip(roundf_i32(F(F(-255.0) * in_min) / F(in_max - in_min)), 0, 255))
        gain = step * F(1.25 * 8192.0)
        if sigmoid:
            gain = gain * F(0.5)
        gexp = int((np.array(gain, F).view(np.int32) >> 23) & 0xFF) - 126      # flt_getexp
        rsh = 15 - max(gexp, 0)
        if rsh < 0:
            return zero, 32767, 0
        k = int(np.clip(roundf_i32(gain * F(1 << rsh)), -32768, 32767))
    return zero, k, rsh


def tanh_d32_table(in_min: F, in_max: F, sigmoid: bool) -> np.ndarray:
    """The 256 output codes (uint8) of op_tanh_d32.c for the input range ``[in_min, in_max]``."""
    zero, k, rsh = scaling_parms(in_min, in_max, sigmoid)
    c2, c1, c0 = (_SIG_C2, _SIG_C1, _SIG_C0) if sigmoid else (_TANH_C2, _TANH_C1, _TANH_C0)
    d = np.arange(256, dtype=np.int64) - zero
    p = np.clip((k * np.abs(d) + ((1 << rsh) >> 1)) >> rsh, -32768, 32767)
    idx, frac = (p >> 11) & 15, p & 0x7FF
    val = ((np.array(c2)[idx] * frac + 16384) >> 15) + np.array(c1)[idx]
    val = ((val * frac * 4 + 16384) >> 15) + np.array(c0)[idx]
    val = np.where(d < 0, ~val, val)
    mid = 255 * 128 if sigmoid else 254 * 128
    val = (val + mid + 1) >> 1
    return np.clip((val + 64) >> 7, 0, 255).astype(np.uint8)
