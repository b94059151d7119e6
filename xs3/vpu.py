"""XS3 VPU arithmetic as lib_nn's C computes it, vectorized over whole tensors (SEMANTICS §8).

The reference is lib_nn's own portable C (commit 96bd67c, ``-DNN_USE_REF``):
``src/c/vpu_sim.c`` (VLMACCR, VLMACC, VLSAT, VDEPTH8) for conv2d_deep and
conv2d_shallowin, ``api/nn_op_helper.h`` (``vlsat_single_s16``,
``vlsat_single_s8``) for conv2d_1x1, conv2d_depthwise and the
fully-connected kernels. Everything here works on int64 numpy arrays that
hold the VPU's 32-bit (or 16-bit) lane values, so that an intermediate sum
can be checked against the saturation bounds before it is clamped:

- :func:`vlmaccr` adds 8-bit inner products into 32-bit accumulators one
  step at a time, in the kernel's order, and saturates after every step
  (``VLMACCR``: a 32-element step; conv2d_1x1's C: every product);
- :func:`vlsat` is the rounding, saturating right shift to 16 bits:
  ``sat16((x + 2**(s-1)) >> s)``, ties toward +inf, symmetric bounds,
  negative shifts act as 0. lib_nn's notes also describe a "negative never
  shifts to 0" rule; the C has none, and neither has this module;
- :func:`bso_output_stage` / :func:`bso_output_stage16` apply the BSO
  output stage (shift1, scale, offset_scale x offset, one rounding shift by
  shift2 straight to the output width) and :func:`bss_output_stage` the
  older shift / Q1.14 scale stage of ``fc_deepin_shallowout_16``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


#: symmetric saturation bounds of the VPU (lib_nn note 3; SEMANTICS §8)
VPU_INT8_MAX = 127
VPU_INT16_MAX = 2 ** 15 - 1
VPU_INT32_MAX = 2 ** 31 - 1
#: elements one VLMACCR instruction consumes in 8-bit mode (note 6)
VPU_INT8_EPV = 32
#: accumulators (output channels) per group in 8-bit mode (note 6)
VPU_INT8_ACC_PERIOD = 16


@dataclass(frozen=True)
class VPUOptions:
    """Switches of the simulated arithmetic; the defaults are lib_nn's default build.

    ``symmetric_output``: clamp 8-bit outputs to [-127, 127], as lib_nn built
    with ``CONFIG_SYMMETRIC_SATURATION_<kernel>`` does, instead of its default
    [-128, 127].
    """

    symmetric_output: bool = False

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


def vlsat(x: np.ndarray, shift: np.ndarray | int) -> np.ndarray:
    """Rounding arithmetic right shift to 16 bits, per lane (``VLSAT`` in 16-bit mode, ``vlsat_single_s16``).

    ``sat16((x + 2**(s-1)) >> s)`` for ``s > 0`` (ties toward +inf), ``sat16(x)``
    for ``s <= 0`` (negative shifts act as 0). The rounding add is exact:
    lib_nn's C adds in int32 and wraps for ``x > 2**31 - 1 - 2**(s-1)``, an
    overflow the VPU does not have (SEMANTICS §8). ``shift`` broadcasts
    against ``x`` (per channel on the last axis). Returns int64.
    """
    x = np.asarray(x, dtype=np.int64)
    s = np.broadcast_to(np.asarray(shift, dtype=np.int64), x.shape)
    pos = np.clip(s, 0, 62)  # beyond 32 bits every result is already 0 or -1; keep int64 shifts defined
    half = np.where(pos > 0, np.left_shift(np.int64(1), np.maximum(pos - 1, 0)), 0)
    return sat16(np.right_shift(x + half, pos))


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


def can_saturate(bias: np.ndarray, w: np.ndarray, axis: int = 0) -> bool:
    """Whether some partial sum of ``bias + x . w`` can leave the 32-bit range for some int8 ``x``.

    ``|bias| + sum|w| * 128 <= 2**31 - 1`` for every channel means no step
    can saturate, in any order and at any step size: the accumulation is
    then the plain sum (lib_nn note 3). ``w`` holds one channel per index of
    the axes other than ``axis`` (the reduced one).
    """
    b = np.abs(np.asarray(bias, dtype=np.int64))
    wsum = np.abs(np.asarray(w, dtype=np.int64)).sum(axis=axis)
    return bool(np.any(b + wsum * 128 > VPU_INT32_MAX))


def vlmaccr(bias: np.ndarray, x: np.ndarray, w: np.ndarray, steps: Sequence[tuple[int, int]]) -> np.ndarray:
    """Saturating 32-bit accumulation of ``bias + x @ w``, saturating after each step.

    ``x``: ``[P, K]`` int8 (P outputs' input vectors in the kernel's element
    order), ``w``: ``[K, C]`` int8, ``bias``: ``[C]`` 32-bit, ``steps``: the
    ``(start, stop)`` element ranges of consecutive steps covering ``[0, K)``:
    32-element ``VLMACCR`` steps (vpu_sim.c: the step's exact sum, then
    ``vpu_saturate(acc, 32)``), or single products (conv2d_1x1.c's
    ``sat_s32`` after each one). Returns ``[P, C]`` int64 accumulators in the
    symmetric 32-bit range. A step's partial sum (at most 32 x 2**14) is
    computed exactly with a float64 matrix product. When no partial sum can
    leave the 32-bit range (:func:`can_saturate`), one product gives the
    same result.
    """
    xf = np.asarray(x, dtype=np.float64)
    wf = np.asarray(w, dtype=np.float64)
    acc = np.broadcast_to(np.asarray(bias, dtype=np.int64), (xf.shape[0], wf.shape[1])).copy()
    if not can_saturate(bias, w):
        return acc + (xf @ wf).astype(np.int64)
    for a, b in steps:
        acc = sat32(acc + (xf[:, a:b] @ wf[a:b]).astype(np.int64))
    return acc


def vlmacc_taps(bias: np.ndarray, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Elementwise saturating accumulation (``VLMACC``), one tap per step: depthwise convolution.

    ``x``: ``[P, T, C]`` int8 (T taps per output, in the kernel's order),
    ``w``: ``[T, C]`` int8, ``bias``: ``[C]``. Each tap adds one product per
    channel and the accumulator saturates after every tap, as the VPU's
    ``VLMACC`` does (vpu_sim.c). lib_nn's portable C for this kernel
    (nn_conv2d_hstrip_depthwise.c, ``vlmacc8``) adds in plain int32 and
    never saturates (it wraps), so where an accumulator saturates the two
    differ; everywhere else they are the same sum.
    """
    xi = np.asarray(x, dtype=np.int64)
    wi = np.asarray(w, dtype=np.int64)
    acc = np.broadcast_to(np.asarray(bias, dtype=np.int64), (xi.shape[0], xi.shape[2])).copy()
    if not can_saturate(bias, wi):
        return acc + np.einsum("ptc,tc->pc", xi, wi)
    for t in range(xi.shape[1]):
        acc = sat32(acc + xi[:, t, :] * wi[t])
    return acc


def bso_scaled(acc: np.ndarray, shift1: np.ndarray, scale: np.ndarray, offset_scale: np.ndarray,
               offset: np.ndarray) -> np.ndarray:
    """The 32-bit value before shift2: ``sat32(sat32(vlsat(acc, shift1) * scale) + offset_scale * offset)``.

    lib_nn: ``VLSAT``, then two ``VLMACC`` in 16-bit mode (nn_conv2d_hstrip_deep.c), or the same in plain
    int32 (conv2d_1x1.c, fully_connected.c). Both ``sat32`` never act: ``|v16 * scale| + |offset_scale *
    offset| < 2**31 - 1`` for 16-bit operands.
    """
    v16 = vlsat(acc, shift1)
    a2 = sat32(v16 * np.asarray(scale, dtype=np.int64))
    return sat32(a2 + np.asarray(offset_scale, dtype=np.int64) * np.asarray(offset, dtype=np.int64))


def vdepth8(x: np.ndarray) -> np.ndarray:
    """The rounding of ``VDEPTH8`` (16 -> 8 bits): ``(x + 2**7) >> 8``, ties toward +inf.

    The instruction also saturates to [-127, 127]; callers clamp themselves. No lib_nn BSO kernel uses
    it for its result (see :func:`bso_output_stage`); the fully_connected_16 layers' 8-bit view does.
    """
    return np.right_shift(np.asarray(x, dtype=np.int64) + (1 << 7), 8)


def bso_output_stage(acc: np.ndarray, shift1: np.ndarray, scale: np.ndarray, offset_scale: np.ndarray,
                     offset: np.ndarray, shift2: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """BSO output stage to int8 (SEMANTICS §8): per-channel parameters on the last axis.

    ``a2`` from :func:`bso_scaled`, then one rounding shift by ``shift2``
    straight to the output, clamped to [-128, 127] (or [-127, 127]):
    ``clip(vlsat(a2, shift2), lo, hi)``. lib_nn's C: ``VLSAT(shift2)`` in
    16-bit mode, then the ``VLADD``/``VDEPTH1`` mask, ``VLASHR(-8)`` and
    ``VDEPTH8`` that clamp to [-128, 127] (nn_conv2d_hstrip_deep.c,
    nn_conv2d_hstrip_shallowin.c), or ``vlsat_single_s8(a2, shift2, -128,
    127)`` (conv2d_1x1.c, nn_conv2d_hstrip_depthwise.c, fully_connected.c).
    Any ``shift2`` works, 0 included.
    """
    a2 = bso_scaled(acc, shift1, scale, offset_scale, offset)
    lo, hi = options.output_bounds
    return np.clip(vlsat(a2, shift2), lo, hi).astype(np.int8)


def bso_output_stage16(acc: np.ndarray, shift1: np.ndarray, scale: np.ndarray, offset_scale: np.ndarray,
                       offset: np.ndarray, shift2: np.ndarray, options: VPUOptions = DEFAULT_OPTIONS) -> np.ndarray:
    """BSO output stage to int16 (``fully_connected_16_ref``): ``vlsat(a2, shift2)``, symmetric 16-bit.

    ``options`` has nothing to switch here (the 8-bit clamp does not apply); it is accepted so that every
    kernel takes the same arguments.
    """
    a2 = bso_scaled(acc, shift1, scale, offset_scale, offset)
    return vlsat(a2, shift2).astype(np.int16)


def bss_output_stage(acc: np.ndarray, shift: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The BSS stage of ``fc_deepin_shallowout_16_ref`` (fully_connected.c; SEMANTICS §8, "Older BSS stage").

    ``v16 = vlsat(acc, shift)`` (``vlsat_single_s16``), then the Q1.14 scale
    ``vlmul_single_s16``: ``sat16((v16 * scale + 2**13) >> 14)``; 16-bit output.
    """
    v16 = vlsat(acc, shift)
    prod = v16 * np.asarray(scale, dtype=np.int64)
    return sat16(np.right_shift(prod + (1 << 13), 14)).astype(np.int16)
