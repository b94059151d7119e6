"""The BSO output stage to 8 bits in a few in-place integer passes, with the literal stage's exact results.

The literal stage (:func:`hexnn_import.xs3.vpu.bso_output_stage`, lib_nn's
C, SEMANTICS §8) is

    v  = vlsat(acc, shift1)                        sat16((acc + h1) >> shift1)
    a2 = sat32(sat32(v * scale) + offset_scale * offset)
    y  = clip(vlsat(a2, shift2), lo, hi)           sat16((a2 + h2) >> shift2), 8-bit clamp

(``h = 2**(s - 1)``, 0 for a shift of 0) and :class:`FusedStage` computes
the same integers from these identities:

1. ``v``, ``scale``, ``offset_scale`` and ``offset`` are 16-bit, so
   ``|v * scale| <= 32767 * 32768`` and ``|a2| < 2**31 - 1``: both ``sat32``
   are no-ops.
2. The 16-bit clamp of the last step changes nothing after the 8-bit clip
   (``[lo, hi]`` lies inside ``[-32767, 32767]``).
3. For the first step the 16-bit clamp is skipped when the accumulator
   bound shows it cannot act, or when it is inert: every channel's output
   already saturates at ``v = ±32767`` (the rest is monotone in ``v``).
4. An output offset (128 for the quint8 graph values) folds into the
   constant: ``((a + c) >> s) + k = (a + c + k * 2**s) >> s``.

The passes run in int32 when the per-channel bounds prove that no
intermediate leaves int32, otherwise in int64. ``tests/xs3/test_fused_stage.py``
checks the identities against the literal stage, extreme values included,
and ``tests/xs3/test_libnn_golden.py`` against lib_nn's C outputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hexnn_import.ops.compiled import bso_stage
from hexnn_import.xs3.bso import BSOParams
from hexnn_import.xs3.vpu import VPU_INT16_MAX, VPUOptions

_I32_MAX = 2 ** 31 - 1
#: elements per block of :meth:`FusedStage.apply` (int32: 256 KiB, within a core's L2 cache)
_BLOCK = 1 << 16


def _same_or_vector(v: np.ndarray, dtype: type) -> np.ndarray:
    """``v`` as ``dtype``; a 0-d array when every channel has the same value (cheaper broadcasting)."""
    arr = np.asarray(v).astype(dtype)
    return arr[:1].reshape(()) if arr.size and np.all(arr == arr[0]) else arr


@dataclass
class FusedStage:
    """Per-channel constants of the fused stage; :meth:`apply` maps accumulators to 8-bit outputs."""

    c1: np.ndarray          # bias (and any extra accumulator term) + h1
    s1: np.ndarray
    scale: np.ndarray
    c2: np.ndarray          # offset_scale * offset + h2 + out_offset * 2**shift2
    s2: np.ndarray
    lo: int
    hi: int
    clamp16: bool
    work: type              # np.int32 or np.int64
    out_dtype: type
    _rows: dict[int | str, tuple[np.ndarray, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def apply(self, sums: np.ndarray) -> np.ndarray:
        """8-bit outputs (``out_dtype``) from the product sums (``[..., C]``, any integer-valued dtype).

        ``sums + c1 - h1`` (``h1`` the first shift's rounding term) is the
        accumulator the literal stage receives. The work is done on blocks of rows
        (:data:`_BLOCK` elements, so that every pass runs in cache) with the
        per-channel constants tiled along a row (one long inner loop per row
        instead of one per pixel).
        """
        if sums.ndim:
            vec = self._rows.get("int64")   # the constants per channel, once: int64, and float64 for int32 work
            if vec is None or vec[0].shape[0] != sums.shape[-1]:
                vec = self._rows["int64"] = tuple(
                    np.ascontiguousarray(np.broadcast_to(np.asarray(a, np.int64).reshape(-1), (sums.shape[-1],)))
                    for a in (self.c1, self.s1, self.scale, self.c2, self.s2))
                c1, s1, scale, c2, s2 = (a.astype(np.float64) for a in vec)
                self._rows["float64"] = (c1, 2.0 ** -s1, scale, c2, 2.0 ** -s2)
            fast = bso_stage(sums, vec, self.lo, self.hi, self.clamp16, self.out_dtype,
                             self._rows["float64"] if self.work is np.int32 else None)
            if fast is not None:   # numba's one-pass form of the same integers (hexnn_import.ops.compiled)
                return fast
        shape = sums.shape
        c = shape[-1] if sums.ndim else 1
        width = shape[-2] if sums.ndim >= 3 else 1   # a row of pixels: [..., W, C]
        rows = np.ascontiguousarray(sums).reshape(-1, width * c)
        consts = self._row_constants(width * c)
        out = np.empty(rows.shape, dtype=self.out_dtype)
        step = max(1, _BLOCK // max(rows.shape[1], 1))
        buf = np.empty((min(step, rows.shape[0]), rows.shape[1]), dtype=self.work)
        for r0 in range(0, rows.shape[0], step):
            block = rows[r0:r0 + step]
            self._block(block, buf[:block.shape[0]], out[r0:r0 + step], consts)
        return out.reshape(shape)

    def _block(self, sums: np.ndarray, t: np.ndarray, out: np.ndarray, k: tuple[np.ndarray, ...]) -> None:
        c1, s1, scale, c2, s2 = k
        np.copyto(t, sums, casting="unsafe")
        t += c1
        np.right_shift(t, s1, out=t)
        if self.clamp16:
            np.clip(t, -VPU_INT16_MAX, VPU_INT16_MAX, out=t)
        t *= scale
        t += c2
        np.right_shift(t, s2, out=t)
        np.clip(t, self.lo, self.hi, out=t)
        np.copyto(out, t, casting="unsafe")

    def _row_constants(self, length: int) -> tuple[np.ndarray, ...]:
        """``(c1, s1, scale, c2, s2)`` tiled to a row of ``length`` elements (0-d ones as they are)."""
        got = self._rows.get(length)
        if got is None:
            got = self._rows[length] = tuple(a if a.ndim == 0 else np.tile(a, length // a.size)
                                        for a in (self.c1, self.s1, self.scale, self.c2, self.s2))
        return got


def fused_stage(p: BSOParams, acc_bound: np.ndarray, extra: np.ndarray | int, options: VPUOptions,
                out_offset: int = 0) -> FusedStage | None:
    """The :class:`FusedStage` of BSO parameters ``p``, or None when the literal stage must run.

    ``acc_bound[c]`` bounds ``|acc|`` of channel ``c`` (the accumulator the
    literal stage gets); ``extra`` is added to the bias because the caller's
    sums leave it out (the input zero point's share); ``out_offset`` is added
    to every output (128: quint8 codes, then ``out_dtype`` is uint8). Shifts
    act as in :func:`hexnn_import.xs3.vpu.vlsat` (negative ones as 0); None
    for a ``shift2`` above 40 (no layer has one; the literal stage handles it).
    """
    s2 = np.maximum(np.asarray(p.shift2, dtype=np.int64), 0)
    if np.any(s2 > 40):
        return None
    bound = np.asarray(acc_bound, dtype=np.int64)
    s1 = np.clip(np.asarray(p.shift1, dtype=np.int64), 0, 62)
    h1 = _half(s1)
    c2 = (np.asarray(p.offset_scale, dtype=np.int64) * np.asarray(p.offset, dtype=np.int64) + _half(s2)
          + np.left_shift(np.int64(out_offset), s2))
    c1 = np.asarray(p.bias, dtype=np.int64) + np.asarray(extra, dtype=np.int64) + h1
    scale = np.asarray(p.scale, dtype=np.int64)
    lo, hi = options.output_bounds
    lo, hi = lo + out_offset, hi + out_offset
    # |v| before the 16-bit clamp never exceeds v_raw. The clamp is inert for a channel whose 8-bit
    # output already saturates at v = +-32767 (the rest of the stage is monotone in v).
    v_raw = np.right_shift(bound + h1, s1) + 1
    up = np.right_shift(VPU_INT16_MAX * scale + c2, s2)
    down = np.right_shift(-VPU_INT16_MAX * scale + c2, s2)
    inert = np.where(scale > 0, (up >= hi) & (down <= lo), np.where(scale < 0, (up <= lo) & (down >= hi), True))
    clamp16 = bool(np.any((v_raw > VPU_INT16_MAX) & ~inert))
    base32 = bool(np.all(bound + h1 <= _I32_MAX) and np.all(np.abs(c1) + bound <= _I32_MAX)
                  and np.all(s1 <= 31) and np.all(s2 <= 31))

    def fits32(v_max: np.ndarray) -> bool:
        return base32 and bool(np.all(v_max * np.abs(scale) + np.abs(c2) <= _I32_MAX))

    if not clamp16 and not fits32(v_raw) and fits32(np.minimum(v_raw, VPU_INT16_MAX)):
        clamp16 = True  # one more pass in int32 beats every pass in int64
    work = np.int32 if fits32(np.minimum(v_raw, VPU_INT16_MAX) if clamp16 else v_raw) else np.int64
    return FusedStage(_same_or_vector(c1, work), _same_or_vector(s1, work), _same_or_vector(scale, work),
                      _same_or_vector(c2, work), _same_or_vector(s2, work), lo, hi, clamp16, work,
                      np.uint8 if out_offset == 128 else np.int8)


def _half(shift: np.ndarray) -> np.ndarray:
    """The rounding term ``2**(s - 1)`` of a shift by ``s`` (0 for ``s = 0``)."""
    return np.where(shift > 0, np.left_shift(np.int64(1), np.maximum(shift - 1, 0)), 0)
