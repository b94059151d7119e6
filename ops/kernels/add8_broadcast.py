"""QuantizedAdd_8p8to8 on operands of different shapes: nnlib's ``qadd_888_hvx`` path (hexagon/ops/src/op_add.c).

nnlib runs only same-shape adds through ``addsub_flat_direct_execute``; other shapes go to
``qadd_888_hvx``: both operands are expanded to the output shape (``expand``), the one with the larger
step is "big" (A on a tie), and ``do_quantized_add_888`` adds them with the asm kernel
``quant_add_spec_asm`` (hexagon/asm_src/quant_add_spec_h.S), modelled here per element from its
instructions:

- ``ialpha = (short)(128f * alpha)``, ``alpha = big_width / small_width`` (``>= 256``: the big operand's
  codes are copied and its range is the "discovered" range);
  ``ikappa = (short)(int)(128f * alpha + (255f * big_min + 255f * small_min) / small_width)``;
- ``z = wrap16(sat16((((a ^ 0x80) as int8) * 256 * ialpha * 2 + 0x8000) >> 16) + b + ikappa)``
  (``vshuffoe``, ``vmpy:<<1:rnd:sat``, two wrapping ``vadd``): the sum in units of the small step;
- with ``lmin, lmax = 255 * out_min / small_width, 255 * out_max / small_width``,
  ``recip = (short)min(32767, 255 * 32768 / (lmax - lmin))`` and
  ``offset = (short)(int)(255 * lmin / (lmax - lmin) - 0.5)``:
  ``q = usat8(wrap16(sat16((z * recip * 2 + 0x8000) >> 16) - offset))``;
- the kernel's min/max of ``z`` give the discovered range ``z * small_width / 255``.

Range (``struct qadd_888_info``, shared with the same-shape path): auto ends start at 0 (min) and 0.5
(max); an exceeded auto max becomes ``1.2 * discovered max`` and the add is redone, likewise an auto min;
with an auto max the range is then widened to at least the big operand's width (max moved). Nothing is
zero-fixed on this path; the range used is the output min/max.

Not modelled (memory-dependent in nnlib): the asm works on whole 128-byte vectors, so its min/max (and
its stores) also cover up to 127 bytes past the end of the data when the element count is not a
multiple of 128; and ``expand`` indexes the source with the output's batch/height/width, correct only
when the broadcast is along depth (or the source's other dims equal the output's). Here the min/max
are over the real elements and the broadcast is numpy's.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.nnlib_addsub import INFO_KEY, AddInfo, check_info
from hexnn_import.ops.nnlib_f32 import F
from hexnn_import.ops.registry import KernelContext

F32Range = tuple[np.float32, np.float32]
#: Re-runs allowed before giving up (nnlib recurses without a bound; each re-run widens the range).
MAX_RERUNS = 64


def to_int(x: np.float32) -> int:
    """A float -> int conversion on Hexagon (truncating, saturating to int32; NaN -> -1)."""
    if np.isnan(x):
        return -1
    return int(max(-2.0 ** 31, min(2.0 ** 31 - 1, float(np.trunc(x)))))


def s16(v: int) -> int:
    """The low 16 bits as a signed number (a ``short`` assignment)."""
    return ((v + 0x8000) & 0xFFFF) - 0x8000


def spec_add(big: np.ndarray, big_rng: F32Range, small: np.ndarray, small_rng: F32Range,
             gmin: np.float32, gmax: np.float32) -> tuple[np.ndarray, np.float32, np.float32]:
    """``do_quantized_add_888`` with the ``quant_add_spec_asm`` model: ``(codes, discovered min, max)``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        stepa = F(big_rng[1] - big_rng[0])
        stepb = F(small_rng[1] - small_rng[0])
        alpha = F(stepa / stepb)
        if alpha >= 256:
            return big.copy(), big_rng[0], big_rng[1]
        ialpha = s16(to_int(F(F(128.0) * alpha)))
        kappa = F(F(F(128.0) * alpha) + F(F(F(F(255.0) * big_rng[0]) + F(F(255.0) * small_rng[0])) / stepb))
        ikappa = s16(to_int(kappa))
        lmin = F(F(gmin * F(255.0)) / stepb)
        lmax = F(F(gmax * F(255.0)) / stepb)
        step = F(lmax - lmin)
        frecip = F(F(255.0 * 32768.0) / step)
        foffset = F(F(F(255.0) * lmin) / step)
    frecip = F(32767.0) if frecip >= 32767 else frecip
    recip, offset = s16(to_int(frecip)), s16(to_int(F(foffset - F(0.5))))
    x = (big.astype(np.int64) - 128) * 256
    xs = np.clip((x * ialpha * 2 + 0x8000) >> 16, -32768, 32767)
    z = ((xs + small.astype(np.int64) + ikappa + 0x8000) & 0xFFFF) - 0x8000
    u = np.clip((z * recip * 2 + 0x8000) >> 16, -32768, 32767)
    q = np.clip(((u - offset + 0x8000) & 0xFFFF) - 0x8000, 0, 255).astype(np.uint8)
    zmin, zmax = (int(z.min()), int(z.max())) if z.size else (32767, -32768)
    with np.errstate(over="ignore"):
        return q, F(F(F(zmin) * stepb) / F(255.0)), F(F(F(zmax) * stepb) / F(255.0))


def broadcast_add(ctx: KernelContext, a: np.ndarray, b: np.ndarray, a_rng: F32Range, b_rng: F32Range,
                  spec: F32Range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``qadd_888_hvx`` on 4-D operands of different shapes: ``(codes, out_min, out_max)``."""
    info: AddInfo | None = ctx.state.get(INFO_KEY)
    if info is None:
        info = ctx.state[INFO_KEY] = check_info(*spec)
    qa, qb = broadcast_pair(ctx, a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        a_big = F(F(a_rng[1] - a_rng[0]) / F(255.0)) >= F(F(b_rng[1] - b_rng[0]) / F(255.0))
    big, big_rng, small, small_rng = (qa, a_rng, qb, b_rng) if a_big else (qb, b_rng, qa, a_rng)
    big_w = F(big_rng[1] - big_rng[0])
    for _ in range(MAX_RERUNS):
        lo, hi = info.out_min, info.out_max
        q, dmin, dmax = spec_add(big, big_rng, small, small_rng, lo, hi)
        if not info.max_pre and dmax > hi:
            info.out_max = F(dmax * F(1.2))
        elif not info.min_pre and dmin < lo:
            info.out_min = F(dmin * F(1.2))
        elif not info.max_pre and F(info.out_max - info.out_min) < big_w:
            info.out_max = F(big_w + info.out_min)
        else:
            return (q, *range_out(float(lo), float(hi)))
    raise ctx.fail(f"output range did not settle after {MAX_RERUNS} re-runs (nnlib recurses without end)")
