"""The arithmetic of nnlib's QuantizedAdd_u16_d32 / QuantizedSub_u16_d32 device code (XiaoMi/nnlib df7ad3c
ops/src/op_addsubmul16_d32.c), in numpy; checked under qemu-hexagon (tests/ops/test_hvx_add_u16_d32.py).

- ``setup_elementwise_strategy``: src/shape_util.c ``check_compatible_elementwise_d32`` with ``compat_ALL |
  compat_AtoB`` - per dimension (b, h, w, d in turn) equal sizes, or B of size 1 broadcast onto A, or A of size 1
  onto B, never both ways; when A broadcasts onto B the two are swapped (their ranges too) and a subtraction
  becomes ``op_subtract_rev``;
- ``addsub_setup_scaling``: the zero codes and steps of ``get_qu16_level_size_zero`` (include/quantize.h: step
  ``(max - min) * 2**-16``, zero ``saturate_u16(roundf_i32(-min / step))``) for A, B and the given output range;
- ``set_addsub_scaling`` (float32): the output step raised to ``max(a_step, b_step) / 8192`` when below it (the
  reported range then ``[-zero, 65536 - zero] * step``), the gains ``ta = a_step / out_step``, ``tb``, the shift
  ``rsh = 15 - max(-1, flt_getexp(1.00004 * max(ta, tb)))``, the 15-bit scales ``min(32767, roundf_u32(t * 2**rsh))``,
  then ``rsh - 1``, and the offset ``delta = (out_zero << rsh) - (uint32(za' * scale_a + zb' * scale_b) >> 1)`` with
  ``zb' = 65535 - zb`` for a subtraction (``za'`` for a reversed one);
- the HVX core (``addsub_first_stage`` / ``addsub_second_stage``): ``b' = b ^ 0xFFFF`` for a subtraction (``a'``
  reversed), ``p = uint32(a' * scale_a + b' * scale_b)``, ``s = sat_i32((p >> 1) + delta)``, the code
  ``sat_u16((s + 2**(rsh-1)) >> rsh)`` (``vasr:rnd:sat``; no rounding term at a shift of 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.ops.nnlib_addsub import flt_getexp
from hexnn_import.ops.nnlib_f32 import F, roundf_i32_sat

#: ``(float)(1.0 / 65536.0)`` of get_qu16_level_size_zero
_P2M16 = F(1.0 / 65536.0)
_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


class BroadcastError(ValueError):
    """check_compatible_elementwise_d32's refusal: the dimension that is neither equal nor broadcast one way."""


def qu16_level_size_zero(mn: float, mx: float) -> tuple[np.float32, int]:
    """``get_qu16_level_size_zero``: ``(step, zero)`` in float32 (zero saturated to 0..65535)."""
    step = F(F(F(mx) - F(mn)) * _P2M16)
    with np.errstate(all="ignore"):  # a zero-width range divides by 0 as the device does
        z = F(F(-F(mn)) / step)
    return step, int(np.clip(roundf_i32_sat(z), 0, 65535))


def roundf_u32(x: np.float32) -> int:
    """``roundf_u32`` on Hexagon: ``convert_sf2uw:chop(x + 0.5f)`` (negative -> 0, saturated to 2**32 - 1)."""
    v = F(F(x) + F(0.5))
    if np.isnan(v):
        return 0xFFFFFFFF
    return int(np.clip(np.trunc(np.float64(v)), 0, 2 ** 32 - 1))


def broadcast_swap(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> bool:
    """check_compatible_elementwise_d32's verdict: True when A broadcasts onto B (swap), False for B onto A or
    equal shapes; :class:`BroadcastError` otherwise."""
    b_to_a, a_to_b = True, True
    for i, (da, db) in enumerate(zip(a_shape, b_shape)):
        if da == db:
            continue
        if db == 1 and b_to_a:
            a_to_b = False
        elif da == 1 and a_to_b:
            b_to_a = False
        else:
            raise BroadcastError(f"incompatible {'BHWD'[i]}: dims {da} vs {db}")
    return not b_to_a


@dataclass(frozen=True)
class AddSub16Scaling:
    """``struct addsub16_scaling_parms`` (the fields the HVX core reads) and the reported output range."""

    scale_a: int
    scale_b: int
    rsh: int
    not_a: int
    not_b: int
    delta: int
    out_min: np.float32
    out_max: np.float32


def addsub16_scaling(ra: tuple[float, float], rb: tuple[float, float], ro: tuple[float, float],
                     subtract: bool, reverse: bool) -> AddSub16Scaling:
    """addsub_setup_scaling + set_addsub_scaling for (post-swap) A, B ranges and the output range (module doc)."""
    a_step, a_zero = qu16_level_size_zero(*ra)
    b_step, b_zero = qu16_level_size_zero(*rb)
    out_step, out_zero = qu16_level_size_zero(*ro)
    out_min, out_max = F(ro[0]), F(ro[1])
    min_outstep = F(max(a_step, b_step) * F(1.0 / 8192.0))
    if out_step < min_outstep:
        out_step = min_outstep
        out_min, out_max = F(F(-out_zero) * out_step), F(F(65536 - out_zero) * out_step)
    with np.errstate(all="ignore"):
        ta, tb = F(a_step / out_step), F(b_step / out_step)
    rsh = 15 - max(-1, flt_getexp(F(F(1.00004) * max(ta, tb))))
    pow2 = F(2.0 ** rsh)  # flt_ldexp: rsh is 1..16 here
    scale_a = min(32767, roundf_u32(F(ta * pow2)))
    scale_b = min(32767, roundf_u32(F(tb * pow2)))
    rsh -= 1
    za = 65535 - a_zero if reverse else a_zero
    zb = 65535 - b_zero if subtract else b_zero
    offs = ((za * scale_a + zb * scale_b) & 0xFFFFFFFF) >> 1
    delta = ((out_zero << rsh) - offs + 2 ** 31) % 2 ** 32 - 2 ** 31  # int32 arithmetic
    return AddSub16Scaling(scale_a, scale_b, rsh, 0xFFFF if reverse else 0, 0xFFFF if subtract else 0, delta,
                           out_min, out_max)


def addsub16_codes(a: np.ndarray, b: np.ndarray, s: AddSub16Scaling) -> np.ndarray:
    """The HVX core on uint16 codes (B broadcast onto A by numpy's rule): uint16 output codes (module doc)."""
    xa = (a.astype(np.int64) ^ s.not_a) * s.scale_a
    xb = (b.astype(np.int64) ^ s.not_b) * s.scale_b
    p = (xa + xb) & 0xFFFFFFFF
    acc = np.clip((p >> 1) + s.delta, _INT32_MIN, _INT32_MAX)
    if s.rsh > 0:
        acc = acc + (1 << (s.rsh - 1))
    return np.clip(acc >> s.rsh, 0, 65535).astype(np.uint16)


def addsub_u16_d32(a: np.ndarray, b: np.ndarray, ranges: tuple[float, ...], subtract: bool
                   ) -> tuple[np.ndarray, np.float32, np.float32]:
    """``(codes, out_min, out_max)`` of QuantizedAdd_u16_d32 (``subtract`` False) or QuantizedSub_u16_d32 on the
    logical uint16 data of A and B; ``ranges`` are the six float inputs a_min, a_max, b_min, b_max, out_min,
    out_max. :class:`BroadcastError` where the device refuses the shapes."""
    ra, rb, ro = (ranges[0], ranges[1]), (ranges[2], ranges[3]), (ranges[4], ranges[5])
    swap = broadcast_swap(a.shape, b.shape)
    if swap:
        a, b, ra, rb = b, a, rb, ra
    s = addsub16_scaling(ra, rb, ro, subtract and not swap, subtract and swap)
    return addsub16_codes(a, b, s), s.out_min, s.out_max
