"""XS3 VPU arithmetic, vectorized over whole tensors (lib_nn notes 1, 3, 4; SEMANTICS §8).

Everything here works on int64 numpy arrays that hold the VPU's 32-bit (or
16-bit) lane values, so that an intermediate sum can be checked against the
saturation bounds before it is clamped:

- :func:`vlmaccr` adds 8-bit inner products into 32-bit accumulators one
  VLMACCR step (at most 32 elements) at a time, in the kernel's order, and
  saturates after every step (the VPU does not roll over, note 3);
- :func:`vlsat` is the rounding, saturating right shift to 16 bits (note 4):
  ties toward +inf, symmetric 16-bit bounds, negative shifts act as 0, and the
  documented "a negative value never shifts to 0" rule behind a flag;
- :func:`bso_output_stage` / :func:`bso_output_stage16` apply the BSO
  output stage (shift1, scale, offset_scale x offset, shift2) and
  :func:`bss_output_stage` the older shift / Q1.14 scale stage of
  ``fc_deepin_shallowout_16``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hexnn_import.xs3.errors import XS3Error

#: symmetric saturation bounds of the VPU (lib_nn note 3; SEMANTICS §8)
VPU_INT8_MAX = 127
VPU_INT16_MAX = 2 ** 15 - 1
VPU_INT32_MAX = 2 ** 31 - 1
#: elements one VLMACCR instruction consumes in 8-bit mode (note 6)
VPU_INT8_EPV = 32
#: accumulators (output channels) per group in 8-bit mode (note 6)
VPU_INT8_ACC_PERIOD = 16
#: the two models of the final 8-bit shift (see VPUOptions)
FINAL_SHIFTS = ("vdepth8", "merged")


@dataclass(frozen=True)
class VPUOptions:
    """Switches of the simulated arithmetic.

    ``negative_never_zero``: lib_nn note 4's rule that shifting a negative
    value never yields 0 but -1 (default on, as documented).
    ``symmetric_output``: clamp 8-bit outputs to [-127, 127]
    (``CONFIG_SYMMETRIC_SATURATION_*``) instead of lib_nn's default [-128, 127].
    ``final_shift``: how an 8-bit output leaves the 32-bit value after the
    scale and offset. "vdepth8" (default) follows lib_nn note 4 for 8-bit
    outputs, ``((.. >> shr2) >> 8)``: a VLSAT by ``shift2 - 8`` (the BSO's
    shift2 counts the final 8 bits too, SEMANTICS §8) and then the final
    rounding shift by 8 (VDEPTH8: ties toward +inf, no saturation, no
    never-zero rule). "merged" is SEMANTICS §8's one-step form,
    ``vlsat(a2, shift2)``, where the never-zero rule acts on the 8-bit result.
    """

    negative_never_zero: bool = True
    symmetric_output: bool = False
    final_shift: str = "vdepth8"

    def __post_init__(self) -> None:
        if self.final_shift not in FINAL_SHIFTS:
            raise ValueError(f"final_shift must be one of {FINAL_SHIFTS}, got {self.final_shift!r}")

    @property
    def output_bounds(self) -> tuple[int, int]:
        """The clamp applied to 8-bit outputs."""
        return (-127, 127) if self.symmetric_output else (-128, 127)


DEFAULT_OPTIONS = VPUOptions()


def sat32(x: np.ndarray) -> np.ndarray:
    """Clamp to the VPU's symmetric 32-bit range [-(2**31 - 1), 2**31 - 1]."""
    return np.clip(np.asarray(x, dtype=np.int64), -VPU_INT32_MAX, VPU_INT32_MAX)


def sat16(x: np.ndarray) -> np.ndarray:
    """Clamp to the VPU's symmetric 16-bit range [-32767, 32767]."""
    return np.clip(np.asarray(x, dtype=np.int64), -VPU_INT16_MAX, VPU_INT16_MAX)


def vlsat(x: np.ndarray, shift: np.ndarray | int, negative_never_zero: bool = True) -> np.ndarray:
    """Rounding arithmetic right shift to 16 bits, per lane (lib_nn note 4, "Shift 1").

    ``(x + 2**(s-1)) >> s`` for ``s > 0`` (ties toward +inf), ``x`` for
    ``s <= 0`` (negative shifts act as 0), then symmetric 16-bit saturation.
    With ``negative_never_zero`` a negative ``x`` whose result would be 0
    comes out as -1. ``shift`` broadcasts against ``x`` (per channel on the
    last axis). Returns int64.
    """
    x = np.asarray(x, dtype=np.int64)
    s = np.broadcast_to(np.asarray(shift, dtype=np.int64), x.shape)
    pos = np.clip(s, 0, 62)  # beyond 32 bits every result is already 0 or -1; keep int64 shifts defined
    half = np.where(pos > 0, np.left_shift(np.int64(1), np.maximum(pos - 1, 0)), 0)
    y = sat16(np.right_shift(x + half, pos))
    if negative_never_zero:
        y = np.where((x < 0) & (y == 0), -1, y)
    return y


def step_bounds(sizes: Sequence[int]) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` of consecutive steps with the given element counts."""
    out, start = [], 0
    for n in sizes:
        out.append((start, start + int(n)))
        start += int(n)
    return out


def chunked_steps(groups: Sequence[int], width: int = VPU_INT8_EPV) -> list[tuple[int, int]]:
    """Steps of at most ``width`` elements inside each group of ``groups`` element counts.

    A kernel whose inner loop walks taps of ``C`` channels issues
    ``ceil(C / 32)`` VLMACCR steps per tap; the tail step of a tap is shorter.
    """
    sizes: list[int] = []
    for g in groups:
        full, tail = divmod(int(g), width)
        sizes += [width] * full + ([tail] if tail else [])
    return step_bounds(sizes)


def vlmaccr(bias: np.ndarray, x: np.ndarray, w: np.ndarray, steps: Sequence[tuple[int, int]]) -> np.ndarray:
    """Saturating 32-bit accumulation of ``bias + x @ w``, saturating after each step.

    ``x``: ``[P, K]`` int8 (P outputs' input vectors in the kernel's element
    order), ``w``: ``[K, C]`` int8, ``bias``: ``[C]`` 32-bit, ``steps``: the
    ``(start, stop)`` element ranges of consecutive VLMACCR steps covering
    ``[0, K)``. Returns ``[P, C]`` int64 accumulators in the symmetric 32-bit
    range. A step's partial sum (at most 32 x 2**14) is computed exactly with
    a float64 matrix product. When no partial sum can leave the 32-bit range
    (|bias| + sum|w| * 128 fits), the steps cannot saturate and one product
    gives the same result.
    """
    xf = np.asarray(x, dtype=np.float64)
    wf = np.asarray(w, dtype=np.float64)
    acc = np.broadcast_to(np.asarray(bias, dtype=np.int64), (xf.shape[0], wf.shape[1])).copy()
    bound = np.abs(np.asarray(bias, dtype=np.int64)) + np.abs(wf).sum(axis=0).astype(np.int64) * 128
    if np.all(bound <= VPU_INT32_MAX):
        return acc + (xf @ wf).astype(np.int64)
    for a, b in steps:
        acc = sat32(acc + (xf[:, a:b] @ wf[a:b]).astype(np.int64))
    return acc


def vlmacc_taps(bias: np.ndarray, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Elementwise saturating accumulation (VLMACC), one tap per step: depthwise convolution.

    ``x``: ``[P, T, C]`` int8 (T taps per output, in the kernel's order),
    ``w``: ``[T, C]`` int8, ``bias``: ``[C]``. Each tap adds one product per
    channel and the accumulator saturates after every tap.
    """
    xi = np.asarray(x, dtype=np.int64)
    wi = np.asarray(w, dtype=np.int64)
    acc = np.broadcast_to(np.asarray(bias, dtype=np.int64), (xi.shape[0], xi.shape[2])).copy()
    bound = np.abs(np.asarray(bias, dtype=np.int64)) + np.abs(wi).sum(axis=0) * 128
    if np.all(bound <= VPU_INT32_MAX):
        return acc + np.einsum("ptc,tc->pc", xi, wi)
    for t in range(xi.shape[1]):
        acc = sat32(acc + xi[:, t, :] * wi[t])
    return acc


def bso_scaled(acc: np.ndarray, shift1: np.ndarray, scale: np.ndarray, offset_scale: np.ndarray,
               offset: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """The 32-bit value before shift2: ``sat32(sat32(vlsat(acc, shift1) * scale) + offset_scale * offset)``."""
    v16 = vlsat(acc, shift1, options.negative_never_zero)
    a2 = sat32(v16 * np.asarray(scale, dtype=np.int64))
    return sat32(a2 + np.asarray(offset_scale, dtype=np.int64) * np.asarray(offset, dtype=np.int64))


def vdepth8(x: np.ndarray) -> np.ndarray:
    """The final 8-bit shift of lib_nn note 4 (VDEPTH8): ``(x + 2**7) >> 8``, ties toward +inf."""
    return np.right_shift(np.asarray(x, dtype=np.int64) + (1 << 7), 8)


def bso_output_stage(acc: np.ndarray, shift1: np.ndarray, scale: np.ndarray, offset_scale: np.ndarray,
                     offset: np.ndarray, shift2: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """BSO output stage to int8 (SEMANTICS §8; lib_nn note 4): per-channel parameters on the last axis.

    ``a2`` from :func:`bso_scaled`; then ``vdepth8(vlsat(a2, shift2 - 8))``
    (default) or ``vlsat(a2, shift2)`` (``final_shift="merged"``), clamped to
    [-128, 127] (lib_nn default) or [-127, 127]. ``shift2`` must be >= 8 in
    the default form (the BSO computation guarantees it).
    """
    a2 = bso_scaled(acc, shift1, scale, offset_scale, offset, options)
    s2 = np.asarray(shift2, dtype=np.int64)
    if options.final_shift == "merged":
        y = vlsat(a2, s2, options.negative_never_zero)
    else:
        if np.any(s2 < 8):
            raise XS3Error("shift2 < 8 leaves no room for the final 8-bit shift (lib_nn note 4)")
        y = vdepth8(vlsat(a2, s2 - 8, options.negative_never_zero))
    lo, hi = options.output_bounds
    return np.clip(y, lo, hi).astype(np.int8)


def bso_output_stage16(acc: np.ndarray, shift1: np.ndarray, scale: np.ndarray, offset_scale: np.ndarray,
                       offset: np.ndarray, shift2: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """BSO output stage to int16 (``fully_connected_16``): ``vlsat(a2, shift2)``, symmetric 16-bit."""
    a2 = bso_scaled(acc, shift1, scale, offset_scale, offset, options)
    return vlsat(a2, shift2, options.negative_never_zero).astype(np.int16)


def bss_output_stage(acc: np.ndarray, shift: np.ndarray, scale: np.ndarray,
                     options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """The BSS stage of ``fc_deepin_shallowout_16`` (lib_nn note 1; SEMANTICS §8, "Older BSS stage").

    ``v16 = vlsat(acc, shift)``, then the Q1.14 scale
    ``sat16((v16 * scale + 2**13) >> 14)``; 16-bit output.
    """
    v16 = vlsat(acc, shift, options.negative_never_zero)
    prod = v16 * np.asarray(scale, dtype=np.int64)
    return sat16(np.right_shift(prod + (1 << 13), 14)).astype(np.int16)
