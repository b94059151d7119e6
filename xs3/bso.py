"""Bias-scale-offset (BSO) and bias-shift-scale (BSS) tensors from TFLite int8 quantization.

Pure functions, each with its own tests (docs/architecture.md, "Models learned from": tflite2xcore):

- :func:`fold_bias`: the int32 bias with the input zero point folded in
  (``bias - zp_in * sum(w)``), so that the kernels multiply raw int8 codes
  and padding taps hold ``zp_in``;
- :func:`quantize_multiplier`: shift1 / Q-scale / shift2 for the real
  multiplier ``M = s_in * s_w / s_out`` (SEMANTICS §8);
- :func:`output_offset`: the output zero point as ``offset_scale * offset``;
- :func:`pack_bso` / :func:`unpack_bso`: the ``(ceil(C/16), 7, 16)`` int16
  layout of lib_nn note 5 (bias split into high / low half-words, tail
  channels zero);
- :func:`bss_params`: the older shift + Q1.14 scale stage of
  ``fc_deepin_shallowout_16`` (lib_nn note 1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.xs3.errors import BSOError
from hexnn_import.xs3.vpu import VPU_INT8_ACC_PERIOD

INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
INT16_MAX = 2 ** 15 - 1
#: BSO rows (lib_nn note 5)
BSO_ROWS = ("bias_hi", "bias_lo", "shift1", "scale", "offset_scale", "offset", "shift2")
#: headroom bits left in the 16-bit intermediate for an 8-bit output: 255 * 2**7 < 2**15
HEADROOM_8 = 7


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round to nearest, ties away from zero, as int64."""
    a = np.asarray(x, dtype=np.float64)
    return (np.sign(a) * np.floor(np.abs(a) + 0.5)).astype(np.int64)


@dataclass
class BSOParams:
    """Per-output-channel parameters of the BSO stage (all int64 arrays of length C)."""

    bias: np.ndarray
    shift1: np.ndarray
    scale: np.ndarray
    offset_scale: np.ndarray
    offset: np.ndarray
    shift2: np.ndarray

    @property
    def channels(self) -> int:
        return int(self.bias.shape[0])


def fold_bias(bias: np.ndarray, weight_sums: np.ndarray, zp_in: int) -> np.ndarray:
    """``clip(bias - zp_in * sum(w), int32)`` per output channel (SEMANTICS §8)."""
    b = np.asarray(bias, dtype=np.int64) - int(zp_in) * np.asarray(weight_sums, dtype=np.int64)
    return np.clip(b, INT32_MIN, INT32_MAX)


def ceil_log2(m: np.ndarray) -> np.ndarray:
    """Exact ``ceil(log2(m))`` for positive floats (from the binary exponent, no log rounding)."""
    mant, exp = np.frexp(np.asarray(m, dtype=np.float64))
    return np.where(mant == 0.5, exp - 1, exp).astype(np.int64)


def quantize_multiplier(multiplier: np.ndarray,
                        headroom: int = HEADROOM_8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(shift1, scale, shift2)`` with ``y ~= ((acc >> shift1) * scale) >> shift2 = acc * M``.

    SEMANTICS §8 with ``headroom`` = 7 for 8-bit outputs (shift2 then
    counts the output's 8 bits too: lib_nn's one rounding shift goes straight
    to 8 bits): ``r = 1 - ceil(log2 M)``,
    ``scale = round(M * 2**(14 + r))`` in (2**14, 2**15) (halved with ``r - 1``
    when it rounds to 2**15), ``r -= headroom``, ``shift1 = max(r, 0)``,
    ``shift2 = 14 + headroom + min(r, 0)``. ``M == 0`` gives ``r = 16`` and
    scale 2**15 - 1. BSOError when a shift2 would be negative (lib_nn's
    shifts are unsigned; M too large).
    """
    m = np.asarray(multiplier, dtype=np.float64).reshape(-1)
    if np.any(~np.isfinite(m)) or np.any(m < 0):
        raise BSOError(f"output multipliers must be finite and >= 0, got {m[~np.isfinite(m) | (m < 0)][:3]}")
    zero = m == 0
    safe = np.where(zero, 1.0, m)
    r = np.where(zero, 16, 1 - ceil_log2(safe))
    scale = np.where(zero, INT16_MAX, round_half_away(safe * np.exp2((14 + r).astype(np.float64))))
    over = scale == 2 ** 15
    r = np.where(over, r - 1, r)
    scale = np.where(over, scale // 2, scale)
    r = r - headroom
    shift1 = np.maximum(r, 0)
    shift2 = 14 + headroom + np.minimum(r, 0)
    if np.any(shift2 < 0):
        c = int(np.argmax(shift2 < 0))
        raise BSOError(f"output multiplier {m[c]:.6g} (channel {c}) is too large: shift2 = {int(shift2[c])} < 0")
    if np.any(shift1 > INT16_MAX):
        raise BSOError("output multiplier too small for a 16-bit shift1")
    return shift1.astype(np.int64), scale.astype(np.int64), shift2.astype(np.int64)


def output_offset(zp_out: np.ndarray, shift2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(offset_scale, offset)`` with ``offset_scale * offset ~= zp_out * 2**shift2`` (SEMANTICS §8).

    ``offset_scale = round(sqrt(|raw|))``, ``offset = round(raw / offset_scale)``
    (0 when ``offset_scale`` is 0), both 16-bit.
    """
    raw = np.asarray(zp_out, dtype=np.float64) * np.exp2(np.asarray(shift2, dtype=np.float64))
    oscale = round_half_away(np.sqrt(np.abs(raw)))
    offset = np.where(oscale == 0, 0, round_half_away(raw / np.where(oscale == 0, 1, oscale)))
    if np.any(np.abs(offset) > INT16_MAX + 1) or np.any(oscale > INT16_MAX):
        raise BSOError(f"output zero point x 2**shift2 does not fit offset_scale x offset "
                       f"(raw up to {np.abs(raw).max():.6g})")
    return oscale.astype(np.int64), np.clip(offset, -(2 ** 15), INT16_MAX).astype(np.int64)


def bso_params(bias: np.ndarray, weight_sums: np.ndarray, s_in: float, zp_in: int, s_w: np.ndarray,
               s_out: float, zp_out: int, out_bits: int = 8) -> BSOParams:
    """BSO parameters of a layer from its TFLite int8 quantization (SEMANTICS §8).

    ``bias`` int32 codes (scale ``s_in * s_w``), ``weight_sums`` the sum of
    each output channel's int8 weights, ``s_w`` per channel (or one value).
    ``out_bits`` 8: headroom 7, any shift2 >= 0 (lib_nn's single final shift
    works from 0 up); 16 (fully_connected_16): headroom 0 when ``zp_out`` is
    0, else -1 (room for the offset).

    Degenerate channels (SEMANTICS §1: legal, never an error): an all-zero
    weight channel or a zero bias needs nothing special (``acc`` is the folded
    bias, scaled as any other). A zero multiplier ``M = 0`` (a zero weight or
    input scale: every product and the bias are real zeros) keeps §8's shifts
    (``r = 16``) but gets ``scale = 0`` instead of §8's ``2**15 - 1``, so the
    channel outputs exactly the output zero point, as TFLite does with a zero
    multiplier; with ``2**15 - 1`` an accumulator of 2**14 or more (the raw
    bias codes, or weight codes under a zero scale) would move it (issue 18).
    ``s_out`` must be finite and > 0 (BSOError).
    """
    c = np.asarray(bias).reshape(-1).shape[0]
    if not (np.isfinite(s_out) and float(s_out) > 0.0):
        raise BSOError(f"output scale must be finite and > 0, got {s_out}")
    sw = np.broadcast_to(np.asarray(s_w, dtype=np.float64).reshape(-1), (c,))
    m = float(s_in) * sw / float(s_out)
    if out_bits == 8:
        headroom = HEADROOM_8
    elif out_bits == 16:
        headroom = 0 if int(zp_out) == 0 else -1
    else:
        raise BSOError(f"out_bits must be 8 or 16, got {out_bits}")
    shift1, scale, shift2 = quantize_multiplier(m, headroom)
    scale = np.where(m == 0.0, 0, scale)   # M = 0: the zero point alone (docstring)
    oscale, offset = output_offset(np.full(c, int(zp_out)), shift2)
    return BSOParams(fold_bias(np.asarray(bias).reshape(-1), weight_sums, zp_in), shift1, scale, oscale, offset, shift2)


def split_bias(bias32: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int32 bias -> (high half-word, low half-word), both as int16 bit patterns (nn_bso.h).

    ``bias = hi * 2**16 + lo`` with ``hi`` signed and ``lo`` unsigned; the
    low half-word is stored in an int16 slot, so 0x8000..0xFFFF read negative.
    """
    b = np.asarray(bias32, dtype=np.int64)
    hi = np.right_shift(b, 16)
    lo = np.bitwise_and(b, 0xFFFF)
    return hi.astype(np.int16), lo.astype(np.uint16).view(np.int16)


def join_bias(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Inverse of :func:`split_bias`: ``hi * 2**16 + (lo as unsigned)`` as int64."""
    return (np.asarray(hi, dtype=np.int64) << 16) + np.asarray(lo, dtype=np.int16).view(np.uint16).astype(np.int64)


def pack_bso(p: BSOParams) -> np.ndarray:
    """The BSO tensor: int16 ``(ceil(C/16), 7, 16)``, channel ``c`` at ``[c // 16, :, c % 16]`` (note 5)."""
    c = p.channels
    groups = -(-c // VPU_INT8_ACC_PERIOD)
    hi, lo = split_bias(p.bias)
    rows = [hi, lo] + [np.asarray(v, dtype=np.int64) for v in (p.shift1, p.scale, p.offset_scale, p.offset, p.shift2)]
    flat = np.zeros((7, groups * VPU_INT8_ACC_PERIOD), dtype=np.int16)  # tail channels stay zero
    for i, row in enumerate(rows):
        flat[i, :c] = row.astype(np.int16)  # every row was range-checked to 16 bits when computed
    return np.ascontiguousarray(flat.reshape(7, groups, VPU_INT8_ACC_PERIOD).transpose(1, 0, 2))


def unpack_bso(bso: np.ndarray, channels: int) -> BSOParams:
    """Read the first ``channels`` channels' parameters back from a BSO tensor."""
    arr = np.asarray(bso, dtype=np.int16)
    if arr.ndim != 3 or arr.shape[1:] != (7, VPU_INT8_ACC_PERIOD):
        raise BSOError(f"a BSO tensor has shape (groups, 7, 16), got {arr.shape}")
    if arr.shape[0] * VPU_INT8_ACC_PERIOD < channels:
        raise BSOError(f"BSO tensor of {arr.shape[0]} groups holds fewer than {channels} channels")
    flat = arr.transpose(1, 0, 2).reshape(7, -1)[:, :channels]
    rows = [flat[i].astype(np.int64) for i in range(2, 7)]
    return BSOParams(join_bias(flat[0], flat[1]), *rows)


@dataclass
class BSSParams:
    """Bias (int32), shift (uint16) and Q1.14 scale (int16) per output channel: fc_deepin_shallowout_16."""

    bias: np.ndarray
    shift: np.ndarray
    scale: np.ndarray


def bss_params(bias: np.ndarray, weight_sums: np.ndarray, s_in: float, zp_in: int, s_w: np.ndarray,
               s_out: float, zp_out: int = 0) -> BSSParams:
    """BSS parameters: ``y16 = sat16(((acc >> shift) * scale + 2**13) >> 14) ~= acc * M`` (note 1).

    ``shift = -floor(log2 M)`` puts ``M * 2**shift`` in [1, 2), so the Q1.14
    ``scale = round(M * 2**(shift + 14))`` uses the whole int16 range and
    ``acc >> shift`` never exceeds the 16-bit output. The stage has no output
    offset: ``zp_out`` must be 0 (TFLite's int16 convention), and ``M < 2``.
    """
    if int(zp_out) != 0:
        raise BSOError(f"the BSS stage has no output offset; output zero point {zp_out} must be 0")
    c = np.asarray(bias).reshape(-1).shape[0]
    sw = np.broadcast_to(np.asarray(s_w, dtype=np.float64).reshape(-1), (c,))
    m = float(s_in) * sw / float(s_out)
    if np.any(m <= 0) or np.any(~np.isfinite(m)):
        raise BSOError("BSS multipliers must be finite and > 0")
    shift = 1 - ceil_log2(m)  # = -floor(log2 M) unless M is a power of two, where M * 2**shift == 2
    shift = np.where(m * np.exp2(shift.astype(np.float64)) >= 2.0, shift - 1, shift)
    shift = np.maximum(shift, 0)
    scale = round_half_away(m * np.exp2((shift + 14).astype(np.float64)))
    over = (scale >= 2 ** 15) & (shift > 0)
    shift = np.where(over, shift - 1, shift)
    scale = np.where(over, scale // 2, scale)
    if np.any(scale > INT16_MAX):
        raise BSOError(f"multiplier {m.max():.6g} >= 2 cannot be a Q1.14 scale")
    return BSSParams(fold_bias(np.asarray(bias).reshape(-1), weight_sums, zp_in).astype(np.int32),
                     shift.astype(np.uint16), scale.astype(np.int16))
