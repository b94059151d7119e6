"""QuantizedAdd_8p8to8's same-shape path as nnlib computes it (hexagon/ops/src/op_add.c), float32 step for step.

nnlib 2.14.1 runs a same-shape QuantizedAdd_8p8to8 through ``addsub_flat_direct_execute``:

- **range state** (``struct qadd_888_info``, kept on the node between runs): ``qadd_888_check`` sets
  it up from inputs 6/7 (an absent or infinite end is *auto*: min starts at 0, max at 0.5; a fully
  given range is zero-fixed once with ``adjust_minmax_for_zero_with_constraints(.., 3)``);
  :func:`plan_range` is the range part of ``addsub_flat_direct_execute`` (first run: 1/8 of the
  theoretical range; later runs: at least 1/32 of it);
- **scaling** (:func:`scaling`, ``set_addsub_scaling_for_output_range``): 14-bit scales ``a_scale``,
  ``b_scale`` over a common exponent ``final_rsh``, an ``offset``, the "underrange" variant for a
  fixed range needing ``rsh <= 0``;
- **per element** (:func:`inter_table`, :func:`codes_from_inter`, :func:`underrange_codes`): the HVX
  core ``add_core_hvx`` / ``add_core_hvx_underrange`` (HVX only in nnlib). Modelled from the
  intrinsics: ``vmpa`` of the 8-bit high parts (16-bit wrap) plus the 7 low bits (u16 >> 7),
  ``vavg`` (``(x + y) >> 1``), saturating add of the 16-bit offset, ``vasr:rnd:sat`` by ``final_rsh``;
  underrange: 32-bit products ``>> (7 + rsh)``, 32-bit saturating offset, sat16, ``(s + 1) >> 1``;
- **re-run** (:func:`rerun_range`, ``check_addsub_need_rerun``): the min/max of the intermediate
  (seeded with the zero's intermediate value) give the actual range; an auto end that was exceeded
  moves to the observed span + 15% (at least 1e-4) anchored at the opposite observed end, the range
  is zero-fixed and the node computed once more. Only when the max is auto: nnlib's test is
  ``need_minmax = !max_precalc || !max_precalc`` (so an auto min with a given max never re-runs).

Every float is float32 (``np.float32``); integer parts are exact.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.errors import OpError
from hexnn_import.ops.nnlib_f32 import adjust_minmax_for_zero_with_constraints, level_size_zero, roundf_i32

F = np.float32
#: ``(float)(16384./16380.)`` in set_addsub_scaling_for_output_range.
_SCEXP_PAD = F(16384.0 / 16380.0)


class ScalingFailed(Exception):
    """``set_addsub_scaling_for_output_range`` returned -1 (the output range is too narrow)."""


class ScalingFailedError(OpError):
    """The node's error for :class:`ScalingFailed` ("scaling failed"), told apart from its other errors: the d32
    add / subtract goes on from it on its next run (``kernels/d32_arith.py``)."""


#: ``ctx.state`` key of :class:`AddInfo` (the output range kept between runs), shared by the same-shape and the
#: broadcast paths of QuantizedAdd_8p8to8.
INFO_KEY = "qadd_888_info"


@dataclass
class AddInfo:
    """``struct qadd_888_info``: the node's output range state, kept between runs."""

    out_min: np.float32
    out_max: np.float32
    min_pre: bool
    max_pre: bool
    has_run_before: bool
    #: op_add_d32.c's node (``elementwise_d32_info``): the range is tracked whenever an end is free
    #: (``need_ranging = min_max_precalc != 3``), not only when the max is (op_add.c's ``need_minmax``)
    d32: bool = False

    def tracks(self) -> bool:
        """Whether the run tracks the intermediate's range (and may widen the free ends and run again)."""
        return not self.max_pre or (self.d32 and not self.min_pre)


def check_info(out_min: np.float32, out_max: np.float32) -> AddInfo:
    """``qadd_888_check``: ``-inf`` min / ``+inf`` max (or absent inputs 6/7) are auto."""
    min_pre = not out_min == -np.inf
    max_pre = not out_max == np.inf
    lo = F(out_min) if min_pre else F(0.0)
    hi = F(out_max) if max_pre else F(0.5)
    ran = False
    if max_pre and min_pre:
        lo, hi = adjust_minmax_for_zero_with_constraints(lo, hi, 3)
        ran = True
    return AddInfo(lo, hi, min_pre, max_pre, ran)


def plan_range(info: AddInfo, a_rng: tuple[np.float32, np.float32], b_rng: tuple[np.float32, np.float32],
               spec: tuple[np.float32, np.float32]) -> None:
    """The range set-up of ``addsub_flat_direct_execute`` (op_add), updating ``info`` in place.

    ``spec`` holds inputs 6/7 as read on this run (used only for their fixed ends).
    """
    if info.min_pre and info.max_pre:
        return
    cons = int(info.min_pre) + 2 * int(info.max_pre)
    out_max_all = F(a_rng[1] + b_rng[1])
    out_min_all = F(a_rng[0] + b_rng[0])
    out_max_all = max(out_max_all, F(out_min_all + F(0.001)))
    if not info.has_run_before:
        ored_min = F(F(0.125) * out_min_all)
        ored_max = F(F(0.125) * out_max_all)
        if info.min_pre:
            info.out_min = spec[0]
            info.out_max = max(F(0.0), F(info.out_min + F(ored_max - ored_min)))
        elif info.max_pre:
            info.out_max = spec[1]
            info.out_min = min(F(0.0), F(info.out_max - F(ored_max - ored_min)))
        else:
            info.out_min, info.out_max = ored_min, ored_max
        info.out_min, info.out_max = adjust_minmax_for_zero_with_constraints(info.out_min, info.out_max, cons)
        info.has_run_before = True
        return
    out_range_all = F(out_max_all - out_min_all)
    current = F(info.out_max - info.out_min)
    d = F(out_range_all - F(F(32.0) * current))
    if not d > 0:
        return
    r = F(d / F(F(32.0) * F(out_range_all - current)))
    if not info.min_pre:
        adj_min = F(F(out_min_all - info.out_min) * r)
        if adj_min < 0:
            info.out_min = F(info.out_min + adj_min)
    else:
        info.out_min = spec[0]
    if not info.max_pre:
        adj_max = F(F(out_max_all - info.out_max) * r)
        if adj_max > 0:
            info.out_max = F(info.out_max + adj_max)
    else:
        info.out_max = spec[1]
    info.out_min, info.out_max = adjust_minmax_for_zero_with_constraints(info.out_min, info.out_max, cons)


def flt_getexp(x: np.float32) -> int:
    """``flt_getexp`` (include/quantize.h): the biased exponent field minus 126."""
    return int((np.array(x, np.float32).view(np.int32) >> 23) & 0xFF) - 126


@dataclass(frozen=True)
class Scaling:
    """``struct addsub_scaling_parms`` (the fields the add uses)."""

    a_scale: int
    b_scale: int
    offset: int
    final_rsh: int
    intermed_zero: int
    netscale: np.float32
    underrange: bool


def scaling(out_min: np.float32, out_max: np.float32, zeros: tuple[int, int],
            steps: tuple[np.float32, np.float32], fixed_range: bool, subtract: bool = False) -> Scaling:
    """``set_addsub_scaling_for_output_range`` (op_add.c / op_add_d32.c); raises :class:`ScalingFailed`.
    ``subtract`` (op_add_d32.c's ``op_subtract``): the exponent from ``fmaxf(a_scale, b_scale)`` instead of their
    sum, and B's scale negative."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out_scl = F(F(255.0) / F(out_max - out_min))
        out_z = F(F(-out_min) * out_scl)
        a_scale_f = F(out_scl * steps[0])
        b_scale_f = F(out_scl * steps[1])
        scaleval = F(a_scale_f + b_scale_f)
        if subtract:
            scaleval = max(a_scale_f, b_scale_f) if not np.isnan(b_scale_f) else a_scale_f
            b_scale_f = F(-b_scale_f)
        scexp = flt_getexp(F(scaleval * _SCEXP_PAD))
    if scexp > 6 and (not fixed_range or scexp > 12):
        raise ScalingFailed(f"output range [{out_min}, {out_max}] gives no usable 14-bit scales for the input ranges "
                            f"(scale {scaleval}, exponent {scexp} > {12 if fixed_range else 6})")
    rsh = min(6 - scexp, 7)
    preshift = 1 - rsh if fixed_range and rsh <= 0 else 0
    under = preshift != 0
    rsh_scl = F(2.0 ** rsh)  # flt_ldexp(1.0f, rsh); rsh is in -6..7 here
    with np.errstate(over="ignore", invalid="ignore"):
        a_scale = int(roundf_i32(F(a_scale_f * F(rsh_scl * F(256.0)))))
        b_scale = int(roundf_i32(F(b_scale_f * F(rsh_scl * F(256.0)))))
        rsh_scl2 = F(2.0) if under else rsh_scl
        intzero = (zeros[0] * a_scale + zeros[1] * b_scale) >> (8 - preshift)
        offset = int(roundf_i32(F(out_z * rsh_scl2))) - intzero
        netscale = F(F(1.0) / F(out_scl * rsh_scl))
    if not under:
        offset = max(-32768, min(32767, offset))
    izero16 = ((intzero + 0x8000) & 0xFFFF) - 0x8000  # stored in an int16_t field
    return Scaling(a_scale, b_scale, offset, rsh, izero16, netscale, under)


def _s8(x: int) -> int:
    return ((x + 0x80) & 0xFF) - 0x80


_A = np.arange(256, dtype=np.int32)[:, None]
_B = np.arange(256, dtype=np.int32)[None, :]


def inter_table(sc: Scaling) -> np.ndarray:
    """The 16-bit intermediate of ``first_stage`` for every ``(a, b)`` (256x256, int32 values of int16).

    ``scales_hi`` holds bits [14:7] of each scale as signed bytes and ``scales_lo`` bits [6:0];
    ``hi = a*ahi + b*bhi`` wraps to 16 bits, ``lo = (a*alo + b*blo)`` as u16 ``>> 7``,
    and ``vavg`` gives ``(hi + lo) >> 1``.
    """
    ahi, bhi = _s8(sc.a_scale >> 7), _s8(sc.b_scale >> 7)
    alo, blo = sc.a_scale & 0x7F, sc.b_scale & 0x7F
    hi = _A * ahi + _B * bhi
    hi = ((hi + 0x8000) & 0xFFFF) - 0x8000
    lo = ((_A * alo + _B * blo) & 0xFFFF) >> 7
    return (hi + lo) >> 1


def codes_from_inter(inter: np.ndarray, sc: Scaling) -> np.ndarray:
    """``second_stage``: ``usat8((sat16(inter + offset) + rnd) >> final_rsh)`` (``vasr:rnd:sat``)."""
    off16 = ((sc.offset + 0x8000) & 0xFFFF) - 0x8000
    p = np.clip(inter + off16, -32768, 32767)
    return np.clip((p + ((1 << sc.final_rsh) >> 1)) >> sc.final_rsh, 0, 255).astype(np.uint8)


def underrange_codes(sc: Scaling) -> np.ndarray:
    """``add_core_hvx_underrange`` for every ``(a, b)``: 32-bit products ``>> (7 + final_rsh)``,
    offset added with 32-bit saturation, sat16, then ``vasr:rnd:sat`` by 1."""
    s16 = lambda v: ((v + 0x8000) & 0xFFFF) - 0x8000  # noqa: E731 - the int16 scale registers
    p = _A.astype(np.int64) * s16(sc.a_scale) + _B.astype(np.int64) * s16(sc.b_scale)
    p = np.clip(p, -2 ** 31, 2 ** 31 - 1) >> (7 + sc.final_rsh)
    p = np.clip(p + sc.offset, -2 ** 31, 2 ** 31 - 1)
    p = np.clip(p, -32768, 32767)
    return np.clip((p + 1) >> 1, 0, 255).astype(np.uint8)


def rerun_range(info: AddInfo, sc: Scaling, inter_min: int, inter_max: int,
                spec: tuple[np.float32, np.float32]) -> bool:
    """``check_addsub_need_rerun``: True (and ``info`` updated) when an auto end was exceeded."""
    actual_min = F(F(inter_min - sc.intermed_zero) * sc.netscale)
    actual_max = F(F(inter_max - sc.intermed_zero) * sc.netscale)
    out_range = F(actual_max - actual_min)
    out_range = F(out_range + max(F(F(0.15) * out_range), F(1e-4)))
    padded_min = min(F(0.0), F(actual_max - out_range))
    padded_max = max(F(0.0), F(actual_min + out_range))
    out_min, out_max = info.out_min, info.out_max
    adj = False
    if not info.min_pre and actual_min < out_min:
        out_min, adj = padded_min, True
    if not info.max_pre and actual_max > out_max:
        out_max, adj = padded_max, True
    if not adj:
        return False
    if info.min_pre:
        out_min = spec[0]
    if info.max_pre:
        out_max = spec[1]
    info.out_min, info.out_max = out_min, out_max
    if out_min < 0:
        cons = int(info.min_pre) + 2 * int(info.max_pre)
        info.out_min, info.out_max = adjust_minmax_for_zero_with_constraints(out_min, out_max, cons)
    return True


def input_params(a_rng: tuple[np.float32, np.float32],
                 b_rng: tuple[np.float32, np.float32]) -> tuple[tuple[int, int], tuple[np.float32, np.float32]]:
    """``(zeros, steps)`` of the two inputs (``get_qu8_level_size_zero``)."""
    sa, za = level_size_zero(*a_rng)
    sb, zb = level_size_zero(*b_rng)
    return (za, zb), (sa, sb)
