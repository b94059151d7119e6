"""The BSO output stage to 8 bits in a few in-place integer passes, with the literal stage's exact results.

The literal stage (:func:`hexnn_import.xs3.vpu.bso_output_stage`, lib_nn
note 4, SEMANTICS §8) is

    v  = vlsat(acc, shift1)                        16-bit, never-zero rule
    a2 = sat32(sat32(v * scale) + offset_scale * offset)
    u  = vlsat(a2, shift2 - 8)                     16-bit, never-zero rule
    y  = clip(vdepth8(u), lo, hi)                  vdepth8(u) = (u + 2**7) >> 8

and :class:`FusedStage` computes the same integers from these identities:

1. ``v``, ``scale``, ``offset_scale`` and ``offset`` are 16-bit, so
   ``|v * scale| <= 32767 * 32768`` and ``|a2| < 2**31 - 1``: both ``sat32``
   are no-ops.
2. ``floor((floor(q) + n) / m) = floor((q + n) / m)`` for integers ``n``,
   ``m > 0``, so the two rounding shifts of the last step are one:
   ``vdepth8(vlsat(a2, s)) = (a2 + h + 2**(s + 7)) >> (s + 8)`` with
   ``h = 2**(s - 1)`` (0 when ``s = 0``), ``s = shift2 - 8``.
3. The 16-bit clamp and the never-zero rule of that step change nothing
   after ``vdepth8`` and the 8-bit clip: the map is monotone,
   ``vdepth8(32767) = 128 >= hi``, ``vdepth8(-32767) = -128 <= lo`` and
   ``vdepth8(-1) = vdepth8(0) = 0``.
4. For the first step, with ``t = acc + h1``, the never-zero case
   (``acc < 0`` and ``t >> shift1 == 0``) is exactly ``0 <= t < h1``, one
   unsigned comparison; the 16-bit clamp is skipped when the accumulator
   bound shows it cannot act.
5. An output offset (128 for the quint8 graph values) folds into the
   constant: ``((a + c) >> s) + k = (a + c + k * 2**s) >> s``.

The passes run in int32 when the per-channel bounds prove that no
intermediate leaves int32, otherwise in int64. ``tests/xs3/test_fused_stage.py``
checks the identities against the literal stage, extreme values included.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.xs3.bso import BSOParams
from hexnn_import.xs3.vpu import VPU_INT16_MAX, VPUOptions

_I32_MAX = 2 ** 31 - 1


def _same_or_vector(v: np.ndarray, dtype: type) -> np.ndarray:
    """``v`` as ``dtype``; a 0-d array when every channel has the same value (cheaper broadcasting)."""
    arr = np.asarray(v).astype(dtype)
    return arr[:1].reshape(()) if arr.size and np.all(arr == arr[0]) else arr


@dataclass(frozen=True)
class FusedStage:
    """Per-channel constants of the fused stage; :meth:`apply` maps accumulators to 8-bit outputs."""

    c1: np.ndarray          # bias (and any extra accumulator term) + h1
    h1: np.ndarray          # unsigned: the never-zero window [0, h1) of t = acc + h1
    s1: np.ndarray
    scale: np.ndarray
    c2: np.ndarray          # offset_scale * offset + h2 + 2**(shift2 - 1) + out_offset * 2**shift2
    s2: np.ndarray
    lo: int
    hi: int
    never_zero: bool
    clamp16: bool
    work: type              # np.int32 or np.int64
    out_dtype: type

    def apply(self, sums: np.ndarray) -> np.ndarray:
        """8-bit outputs (``out_dtype``) from the product sums (``[..., C]``, any integer-valued dtype).

        ``sums`` plus the constant ``c1`` minus ``h1`` is the accumulator
        the literal stage receives.
        """
        t = sums.astype(self.work)
        t += self.c1
        if self.never_zero:
            low = t.view(np.uint32 if self.work is np.int32 else np.uint64) < self.h1
        np.right_shift(t, self.s1, out=t)
        if self.never_zero:
            np.subtract(t, low, out=t, casting="unsafe")
        if self.clamp16:
            np.clip(t, -VPU_INT16_MAX, VPU_INT16_MAX, out=t)
        t *= self.scale
        t += self.c2
        np.right_shift(t, self.s2, out=t)
        np.clip(t, self.lo, self.hi, out=t)
        return t.astype(self.out_dtype)


def fused_stage(p: BSOParams, acc_bound: np.ndarray, extra: np.ndarray | int, options: VPUOptions,
                out_offset: int = 0) -> FusedStage | None:
    """The :class:`FusedStage` of BSO parameters ``p``, or None when the literal stage must run.

    ``acc_bound[c]`` bounds ``|acc|`` of channel ``c`` (the accumulator the
    literal stage gets); ``extra`` is added to the bias because the caller's
    sums leave it out (the input zero point's share); ``out_offset`` is added
    to every output (128: quint8 codes, then ``out_dtype`` is uint8). None
    for ``final_shift="merged"`` and for a ``shift2 < 8`` (the literal stage
    reports that error).
    """
    s2 = np.asarray(p.shift2, dtype=np.int64)
    if options.final_shift != "vdepth8" or np.any(s2 < 8) or np.any(s2 > 62):
        return None
    bound = np.asarray(acc_bound, dtype=np.int64)
    s1 = np.clip(np.asarray(p.shift1, dtype=np.int64), 0, 62)
    h1 = np.where(s1 > 0, np.left_shift(np.int64(1), np.maximum(s1 - 1, 0)), 0)
    v_max = np.minimum(np.right_shift(bound + h1, s1) + 1, VPU_INT16_MAX)
    clamp16 = bool(np.any(np.right_shift(bound + h1, s1) + 1 > VPU_INT16_MAX))
    s = s2 - 8
    h2 = np.where(s > 0, np.left_shift(np.int64(1), np.maximum(s - 1, 0)), 0)
    c2 = (np.asarray(p.offset_scale, dtype=np.int64) * np.asarray(p.offset, dtype=np.int64) + h2
          + np.left_shift(np.int64(1), s2 - 1) + np.left_shift(np.int64(out_offset), s2))
    c1 = np.asarray(p.bias, dtype=np.int64) + np.asarray(extra, dtype=np.int64) + h1
    scale = np.asarray(p.scale, dtype=np.int64)
    fits32 = (np.all(bound + h1 <= _I32_MAX) and np.all(np.abs(c1) + bound <= _I32_MAX)
              and np.all(v_max * np.abs(scale) + np.abs(c2) <= _I32_MAX) and np.all(s1 <= 31) and np.all(s2 <= 31))
    work = np.int32 if fits32 else np.int64
    lo, hi = options.output_bounds
    return FusedStage(_same_or_vector(c1, work), _same_or_vector(h1, np.uint32 if fits32 else np.uint64),
                      _same_or_vector(s1, work), _same_or_vector(scale, work), _same_or_vector(c2, work),
                      _same_or_vector(s2, work), lo + out_offset, hi + out_offset,
                      options.negative_never_zero, clamp16, work, np.uint8 if out_offset == 128 else np.int8)
