"""hexagon_nn's d32 multiply as the device runs it: op_add_d32.c ``mul_setup_scaling``,
``set_mul_scaling_for_output_range``, the HVX ``first_multiply`` / ``second_multiply`` and
``check_mul_need_rerun`` (issue 36: the engine computes what the DSP computes).

Checked bit for bit against the device code run under qemu-hexagon (tests/data/golden/hvx/add_d32.npz, the Mul
runs; docs/verification.md, "device-code cases").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.ops.nnlib_addsub import flt_getexp
from hexnn_import.ops.nnlib_f32 import F, adjust_minmax_for_zero_with_constraints, level_size_zero, roundf_i32


@dataclass
class MulInfo:
    """The node's ``elementwise_d32_info`` range state (``addsub_d32_check``: out range ``[0, 0.5]``)."""

    out_min: np.float32 = F(0.0)
    out_max: np.float32 = F(0.5)
    has_run_before: bool = False


@dataclass(frozen=True)
class MulScaling:
    """``struct mul_scaling_parms`` and the input zeros."""

    za: int
    zb: int
    range_bias: int
    recip: np.float32        # all_in_scale_recip = a_step * b_step
    post_scale: int
    post_rsh: int
    adj_bias: int


def _fminf(x: np.float32, y: np.float32) -> np.float32:
    """Hexagon ``fminf`` (``sfmin``): -0.0 is below +0.0."""
    return y if y < x or (y == x and np.signbit(y)) else x


def _fmaxf(x: np.float32, y: np.float32) -> np.float32:
    """Hexagon ``fmaxf`` (``sfmax``): +0.0 is above -0.0."""
    return y if y > x or (y == x and not np.signbit(y)) else x


def _sat16(v: int) -> int:
    return max(-32768, min(32767, v))


def mul_scaling(za: int, zb: int, recip: np.float32, out_min: np.float32, out_max: np.float32) -> MulScaling:
    """``set_mul_scaling_for_output_range`` (float32), with ``range_bias`` from ``mul_setup_scaling``."""
    range_bias = (((2 * za - 255) * (2 * zb - 255) + 256) >> 9) * 256
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out_scl = F(F(255.0) / F(out_max - out_min))
        out_z = F(F(-out_min) * out_scl)
        psf = F(out_scl * recip)
        rsh = min(-flt_getexp(psf), 7)
        rsh_fac = F(2.0 ** rsh)
        post_scale = _sat16(int(roundf_i32(F(F(psf * rsh_fac) * F(32768.0)))))
        adj_bias = ((range_bias * post_scale + 16384) >> 15) + int(roundf_i32(F(out_z * rsh_fac)))
    return MulScaling(za, zb, range_bias, recip, post_scale, rsh, adj_bias)


def first_multiply(a: np.ndarray, b: np.ndarray, sc: MulScaling) -> np.ndarray:
    """``first_multiply``: ``(za*zb - range_bias) + a*b - (a*zb + b*za)`` in 16-bit lanes, i.e.
    ``(a - za)(b - zb) - range_bias`` wrapped to int16 (int32 array)."""
    t = (a.astype(np.int32) - sc.za) * (b.astype(np.int32) - sc.zb) - sc.range_bias
    return ((t + 0x8000) & 0xFFFF) - 0x8000


def second_multiply(t: np.ndarray, sc: MulScaling) -> np.ndarray:
    """``second_multiply``: ``vmpy(.h, post_scale):<<1:rnd:sat``, ``+ adj_bias`` (its low 16 bits, saturating),
    ``vasr(.h, post_rsh):rnd:sat`` to uint8 (the shift amount's low 4 bits, no rounding at 0)."""
    adj = ((sc.adj_bias + 0x8000) & 0xFFFF) - 0x8000
    p = np.clip((t * sc.post_scale + 0x4000) >> 15, -32768, 32767)
    p = np.clip(p + adj, -32768, 32767)
    r = sc.post_rsh & 0xF
    if r:
        p = (p + (1 << (r - 1))) >> r
    return np.clip(p, 0, 255).astype(np.uint8)


def need_rerun(info: MulInfo, sc: MulScaling, tmin: int, tmax: int) -> bool:
    """``check_mul_need_rerun`` (both ends free): True (and ``info`` widened, zero-fixed) when the extremes of
    the intermediate would clip below 0 or above 255."""
    lo8 = ((tmin * sc.post_scale + 16384) >> 15) + sc.adj_bias
    hi8 = ((tmax * sc.post_scale + 16384) >> 15) + sc.adj_bias
    r = sc.post_rsh
    if r > 0:
        lo8, hi8 = ((lo8 >> (r - 1)) + 1) >> 1, ((hi8 >> (r - 1)) + 1) >> 1
    with np.errstate(over="ignore", invalid="ignore"):
        actual_min = F(F(tmin + sc.range_bias) * sc.recip)
        actual_max = F(F(tmax + sc.range_bias) * sc.recip)
        out_range = F(actual_max - actual_min)
        out_range = F(out_range + max(F(F(0.15) * out_range), F(1e-4)))
        padded_min = min(F(0.0), F(actual_max - out_range))
        padded_max = max(F(0.0), F(actual_min + out_range))
    out_min, out_max, adj = info.out_min, info.out_max, False
    if lo8 < 0:
        out_min, adj = padded_min, True
    if hi8 > 255:
        out_max, adj = padded_max, True
    if not adj:
        return False
    if out_min < 0:
        out_min, out_max = adjust_minmax_for_zero_with_constraints(out_min, out_max, 0)
    info.out_min, info.out_max = out_min, out_max
    return True


def mul_d32(info: MulInfo, a: np.ndarray, b: np.ndarray, a_rng: tuple[np.float32, np.float32],
            b_rng: tuple[np.float32, np.float32]) -> tuple[np.ndarray, np.float32, np.float32]:
    """One execution of the d32 multiply on same-shape codes (B expanded): ``(codes, out_min, out_max)``; the
    first run sets the range to 1/8 of the worst case (``mul_setup_scaling``), a run whose extremes clip widens it
    and runs again once."""
    sa, za = level_size_zero(*a_rng)
    sb, zb = level_size_zero(*b_rng)
    recip = F(sa * sb)
    if not info.has_run_before:
        (amn, amx), (bmn, bmx) = a_rng, b_rng
        with np.errstate(over="ignore", invalid="ignore"):
            hi_all = _fmaxf(F(amx * bmx), F(amn * bmn))
            lo_all = _fminf(F(amx * bmn), F(amn * bmx))
            hi_all = _fmaxf(hi_all, F(lo_all + F(0.001)))
            lo, hi = F(F(0.125) * lo_all), F(F(0.125) * hi_all)
        info.out_min, info.out_max = adjust_minmax_for_zero_with_constraints(lo, hi, 0)
        info.has_run_before = True
    sc = mul_scaling(za, zb, recip, info.out_min, info.out_max)
    t = first_multiply(a, b, sc)
    centre = ((-sc.range_bias + 0x8000) & 0xFFFF) - 0x8000
    tmin = min(int(t.min()), centre) if t.size else centre
    tmax = max(int(t.max()), centre) if t.size else centre
    if need_rerun(info, sc, tmin, tmax):
        sc = mul_scaling(za, zb, recip, info.out_min, info.out_max)
    return second_multiply(t, sc), info.out_min, info.out_max


def mul_scalar_b(a_rng: tuple[np.float32, np.float32], b_code: int, b_rng: tuple[np.float32, np.float32],
                 a: np.ndarray) -> tuple[np.ndarray, np.float32, np.float32]:
    """``mode_broadcast_1111`` of the multiply (B a single value): the codes copied (``b > 0``), inverted
    (``255 - x``, ``b < 0``, the range's ends swapped) or all 0 (``b = 0``, range ``[0 * a_min, 0.5]``) onto
    ``[a_min * b, a_max * b]``."""
    sb, zb = level_size_zero(*b_rng)
    b_val = F(F(b_code - zb) * sb)
    out_min, out_max = F(a_rng[0] * b_val), F(a_rng[1] * b_val)
    if b_val > 0:
        return a.copy(), out_min, out_max
    if b_val == 0:
        return np.zeros(a.shape, np.uint8), out_min, F(0.5)
    return (255 - a).astype(np.uint8), out_max, out_min
