"""op_add_d32.c's own check and its ``mode_broadcast_1111`` (a d32 add / subtract of a single value), as the device
runs them (issue 36).

``addsub_d32_check`` reads inputs 6 / 7 (:func:`check_ends`): a max below ``+inf`` is given and kept as
``fmaxf(0, max)``, a min above ``-inf`` as ``fminf(0, min)`` (both given: the max at least ``min + 1e-6``); NaN is
"not given". The add then tracks its range whenever an end is free (``AddInfo.d32``).

``setup_elementwise_strategy`` takes this mode when every dimension broadcasts (the single operand, after the
A-to-B swap of ``check_compatible_elementwise_d32``, is 1x1x1x1) and ``min_max_precalc == 0``: neither output end
given, which ``addsub_d32_check`` decides from inputs 6 / 7 (an absent input, ``-inf`` / ``+inf``, or a NaN, are
all "not given"). ``addsub_setup_scaling`` then re-codes the other operand onto its own range moved by the single
value, and ``tensor_copy_scaled_d32`` (asm ``scalemem_d32_hvx``) maps each code; see :func:`bc1111_scaling`.

A fixed output range too narrow for the input ranges fails its set-up ("scaling failed"), but the node goes on
from there: ``setup_elementwise_strategy`` has left ``strategy_valid = -1`` and ``addsub_setup_scaling`` has
stored the input ranges before ``set_addsub_scaling_for_output_range`` returned -1, so the next run with the same
shapes and ranges passes ``elementwise_strategy_valid_check`` (it tests ``== 0``) and runs on
``info->addsub_scaling`` as it is: zero (``nn_calloc`` in ``addsub_d32_check``; every code 0) when no set-up of the
node has succeeded, else the last one that did (:func:`scaling_left`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hexnn_import.ops.nnlib_addsub import AddInfo, Scaling, input_params, scaling
from hexnn_import.ops.nnlib_f32 import F, level_size_zero, roundf_i32

F32Range = tuple[np.float32, np.float32]


def min_max_precalc(spec_min: np.float32 | None, spec_max: np.float32 | None) -> int:
    """``addsub_d32_check``: bit 1 when input 7 is below ``+inf``, bit 0 when input 6 is above ``-inf`` (an
    absent input is None)."""
    bits = 0
    if spec_max is not None and F(spec_max) < F(np.inf):
        bits |= 2
    if spec_min is not None and F(spec_min) > F(-np.inf):
        bits |= 1
    return bits


def check_ends(spec_min: np.float32 | None, spec_max: np.float32 | None) -> tuple[np.float32, np.float32]:
    """The output ends as ``addsub_d32_check`` keeps them (``-inf`` / ``+inf`` for a free end)."""
    bits = min_max_precalc(spec_min, spec_max)
    hi = F(max(F(0.0), F(spec_max))) if bits & 2 else F(np.inf)
    lo = F(min(F(0.0), F(spec_min))) if bits & 1 else F(-np.inf)
    if bits == 3:
        hi = F(max(F(lo + F(1e-6)), hi))
    return lo, hi


def single_operand(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> str | None:
    """Which operand is the single value in ``mode_broadcast_1111``: ``"B"`` (B is 1x1x1x1, also when A is), ``"A"``
    (A is 1x1x1x1 and B is not: ``compat_AtoB``, the operands swapped), or None."""
    if int(np.prod(b_shape)) == 1:
        return "B"
    if int(np.prod(a_shape)) == 1:
        return "A"
    return None


@dataclass(frozen=True)
class Bc1111:
    """``info->bc1111_scaling`` (``scale`` saturated to int16, ``offs`` as stored in the int16 argument of
    ``tensor_copy_scaled_d32``) and the output range."""

    scale: int
    offs: int
    out_min: np.float32
    out_max: np.float32


def _sat16(v: int) -> int:
    return max(-32768, min(32767, v))


def bc1111_scaling(a_rng: F32Range, b_code: int, b_rng: F32Range, op: str) -> Bc1111:
    """``addsub_setup_scaling``'s 1111 branch; ``a_rng`` is the range of the tensor operand (after the swap), ``op``
    one of ``"add"``, ``"sub"``, ``"rsub"`` (``op_subtract_rev``: the single value minus the tensor).

    ``b = (b_code - b_zero) * b_step`` (negated but for add), ``z = a_zero - b / a_step``; for ``z`` in
    ``[-0.25, 255.25]`` the codes stay, the range is ``[-round(z) * a_step, that + a_range]``; otherwise the range is
    pinned to 0 at one end and extended by ``b``, ``scale = round(32768 * a_range / new_range)`` (saturated and
    ``offs = 128 * 255 - ((255 * scale) >> 8)`` when ``b > 0``). ``rsub`` negates the mapping and the range; a
    ``|scale| <= 128`` whose 0 and 255 map to one code becomes a fill (``scale = 0``)."""
    astep, za = level_size_zero(*a_rng)
    bstep, zb = level_size_zero(*b_rng)
    amn, amx = a_rng
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        b_val = F(F(b_code - zb) * bstep)
        if op != "add":
            b_val = F(-b_val)
        new_zero = F(F(za) - F(b_val / astep))
        arange = F(amx - amn)
        scale, offs = 32768, 0
        if F(-0.25) <= new_zero <= F(255.25):
            out_min = F(F(-int(roundf_i32(new_zero))) * astep)
            out_max = F(out_min + arange)
        else:
            out_min, out_max = (F(0.0), F(amx + b_val)) if b_val > 0 else (F(amn + b_val), F(0.0))
            scale = int(roundf_i32(F(F(F(32768.0) * arange) / F(out_max - out_min))))
            if b_val > 0:
                scale = _sat16(scale)
                offs = 128 * 255 - ((255 * scale) >> 8)
    if op == "rsub":
        scale, offs = -scale, 255 * 128 - offs
        out_min, out_max = F(-out_max), F(-out_min)
    if -128 <= scale <= 128 and (offs + 64) >> 7 == (scale * 255 + offs * 256 + 16384) >> 15:
        scale = 0
    return Bc1111(_sat16(scale), ((offs + 0x8000) & 0xFFFF) - 0x8000, out_min, out_max)


def copy_scaled(a: np.ndarray, sc: Bc1111) -> np.ndarray:
    """``tensor_copy_scaled_d32`` on the logical codes: a fill of ``usat8((offs + 64) >> 7)`` when ``scale == 0``;
    else ``scalemem_d32_hvx``: ``usat8((sat16(wrap16(((x * lo) >> 8) + x * hi) + offs) + 64) >> 7)`` with ``lo`` /
    ``hi`` the scale's unsigned low / signed high byte (a plain copy for ``scale >= 0x7FC0`` with ``offs == 0``)."""
    if sc.scale == 0:
        return np.full(a.shape, max(0, min(255, (sc.offs + 64) >> 7)), np.uint8)
    if (sc.scale & 0xFFFF) >> 6 == 511 and sc.offs == 0:
        return a.astype(np.uint8, copy=True)
    lo, hi = sc.scale & 0xFF, (((sc.scale >> 8) + 0x80) & 0xFF) - 0x80
    x = a.astype(np.int32)
    v = ((((x * lo) >> 8) + x * hi + 0x8000) & 0xFFFF) - 0x8000
    v = np.clip(v + sc.offs, -32768, 32767)
    return np.clip((v + 64) >> 7, 0, 255).astype(np.uint8)


#: ``ctx.state`` keys of a d32 add / subtract with a fixed output range: the input-range arrays (inputs 2-5) of its
#: last run whose set-up succeeded, and after a failed set-up (:func:`setup_key`, the scaling left)
SCALED_KEY = "add_d32_scaled"
LEFT_KEY = "add_d32_left"
#: ``info->addsub_scaling`` as ``addsub_d32_check``'s ``nn_calloc`` leaves it
ZERO_SCALING = Scaling(0, 0, 0, 0, 0, F(0.0), False)


def setup_key(shapes: Sequence[tuple[int, ...]], ranges: Sequence[float]) -> tuple:
    """What ``elementwise_strategy_valid_check`` compares with the last set-up: the operands' shapes and the four
    input range ends (float ``==``: -0.0 equals 0.0, NaN nothing)."""
    return tuple(tuple(sh) for sh in shapes), tuple(float(r) for r in ranges)


def scaling_left(info: AddInfo, ranges: Sequence[float] | None, subtract: bool) -> Scaling:
    """``info->addsub_scaling`` after a failed set-up: ``set_addsub_scaling_for_output_range`` (``fixed_range``)
    of the last input ranges whose set-up succeeded (``ranges``: A min, max, B min, max), or :data:`ZERO_SCALING`
    when none has."""
    if ranges is None:
        return ZERO_SCALING
    zeros, steps = input_params((F(ranges[0]), F(ranges[1])), (F(ranges[2]), F(ranges[3])))
    return scaling(info.out_min, info.out_max, zeros, steps, True, subtract)
