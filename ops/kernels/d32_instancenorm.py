"""QuantizedInstanceNorm_8_d32: the _d32 form prepare.c makes of every QuantizedInstanceNorm_8 (hexagon_nn 2.14.1
prepare.c depth32_replacement_op; the op is in nnlib's op table, not in the op documents: see its catalog note).

It follows the device code nnlib registers, op_instancenorm_hvx.c (XiaoMi/nnlib df7ad3c), checked under
qemu-hexagon (tests/ops/test_hvx_instancenorm_d32.py), which is not the flat op's arithmetic (op_instancenorm.c):

- per batch, the input's right padding (and, for an odd height, the row below) is zapped to 0x80, and the asm
  ``getstats_asm`` takes each channel's sum, sum of squares, max and min over the data *with* those padding
  bytes (max / min therefore include 128; a min equal to the max is taken as 0), converted to qf16;
- ``instancenorm_analyze`` removes the padding's sums, and works mean and 1/sd in qf16 (:mod:`..nnlib_qf16`):
  ``1/sd = wh / sqrt(wh * sum2 - sum**2)``, 0 where that difference is below ``(wh * 1e-5)**2`` or the channel is
  depth padding; the output range is the least / largest ``(max - mean) / sd`` and ``(min - mean) / sd`` over the
  channels (0 for those with 1/sd = 0), as float32 from qf16, unadjusted;
- the scale onto codes is ``255 / (max - min)`` *truncated to an integer* (``instancenorm_info.recip_val`` is an
  int32); an output max <= 0 squashes the range to [0, 0] and the scale to 0;
- ``instancenorm_requantize`` and the asm ``renorm_asm`` write each code in 16-bit fixed point with one bit of
  fraction, rounded and saturated.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from hexnn_import.ops import nnlib_qf16 as qf
from hexnn_import.ops.d32 import LANES, D32Tensor
from hexnn_import.ops.d32_io import d32_input, d32_output
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.registry import Kernel, KernelContext, register

F = np.float32
I64 = np.int64
PAD_VAL = 0x80
#: op_instancenorm_hvx.c instancenorm_hvx_execute: ``info->epsilon = 1e-5`` (input 3 is not read)
EPSILON = F(1e-5)


def _word_to_qf(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """getstats_asm's 32-bit conversion: ``vnormamt`` shift, the high halfword; 0 gives (0, -31)."""
    n = qf.normamt(v, 32)
    return qf.s16((v << n) >> 16), n - 31


def _u64_to_qf(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """getstats_asm's 64-bit sum of squares: the high word (or the low one when the high is 0) shifted up by its
    leading zeros with the low word's top bits below it, then >> 17; the exponent less 32 (64 with a high word)."""
    hi, lo = v >> 32, v & 0xFFFFFFFF
    u = np.where(hi != 0, hi, lo)
    c = 32 - qf.bitlen(u)
    top = (u << c) & 0xFFFFFFFF
    top = np.where(hi != 0, top | (lo >> np.maximum(32 - c, 0)), top)
    return top >> 17, c - 32 - np.where(hi != 0, 32, 0)


def channel_stats(x: np.ndarray, npad: int, nd32: int, extra: np.ndarray) -> tuple[np.ndarray, ...]:
    """getstats_asm per batch and channel slot (``[b, nd32, 32]``, depth padding as 0): sum, sum of squares, max,
    min over the data, ``npad`` padding bytes of 0x80 and the ``extra`` bytes ``[b, rows, cols, nd32 * 32]`` it also
    reads (:func:`overread_rows`)."""
    b, _, _, d = x.shape
    full = np.zeros((b, nd32 * LANES), I64)
    xs, ex = x.astype(I64), extra.astype(I64)
    s = full.copy(); s[:, :d] = xs.sum(axis=(1, 2)) + PAD_VAL * npad
    s2 = full.copy(); s2[:, :d] = (xs * xs).sum(axis=(1, 2)) + PAD_VAL * PAD_VAL * npad
    mx = full.copy(); mx[:, :d] = xs.max(axis=(1, 2))
    mn = full.copy(); mn[:, :d] = xs.min(axis=(1, 2))
    if npad:
        mx, mn = np.maximum(mx, PAD_VAL), np.minimum(mn, PAD_VAL)
    if ex.size:
        s, s2 = s + ex.sum(axis=(1, 2)), s2 + (ex * ex).sum(axis=(1, 2))
        mx, mn = np.maximum(mx, ex.max(axis=(1, 2))), np.minimum(mn, ex.min(axis=(1, 2)))
    mn = np.where(mn == mx, 0, mn)
    shape = (b, nd32, LANES)
    return tuple(a.reshape(shape) for a in (s, s2, mx, mn))


def overread_rows(t: D32Tensor, cols: int, first_col: int) -> np.ndarray:
    """The bytes getstats_asm reads below the data when the height, rounded up to even, is 2: its row-pair loop
    (``loop1`` with a count of 0) runs once all the same, over rows 2 and 3 of the layout (bottom padding): what
    the input's layout holds there (``[b, 2, cols, nd32 * 32]``); none for other heights."""
    b, h, _, _ = t.shape
    if h + h % 2 != 2:
        return np.zeros((b, 0, cols, t.nd32 * LANES), np.uint8)
    rows = t.data[:, t.top + 2:t.top + 4, :, first_col:first_col + cols, :]      # [b, r, nd32, cols, 32]
    rows = np.moveaxis(rows, 2, 3).reshape(b, rows.shape[1], cols, t.nd32 * LANES)
    if rows.shape[1] < 2:       # a layout with less bottom padding: nothing more to read here
        rows = np.concatenate([rows, np.zeros((b, 2 - rows.shape[1], cols, rows.shape[3]), rows.dtype)], axis=1)
    return rows


def analyze(x: np.ndarray, npad: int, nd32: int, extra: np.ndarray) -> tuple[tuple, tuple, np.ndarray, np.ndarray]:
    """instancenorm_analyze for every batch and depth slice: ((1/sd m, e), (mean/sd m, e), per-slice min, max)."""
    _, h, w, d = x.shape
    wh = h * w
    s, s2, mx, mn = channel_stats(x, npad, nd32, extra)
    f1, f2 = qf.i2q(PAD_VAL * npad), qf.i2q(PAD_VAL * PAD_VAL * npad)
    qsum2 = qf.subqf(*_u64_to_qf(s2), *f2)
    qsum = qf.subqf(*_word_to_qf(s), *f1)
    qwh, qwh_inv = qf.f2q(F(wh)), qf.f2q(F(1.0) / F(wh))
    qmean = qf.mpyqf(*qsum, *qwh_inv)
    isum = qf.subqf(*qf.mpyqf(*qsum2, *qwh), *qf.mpyqf(*qsum, *qsum))
    epsi = F(wh) * EPSILON
    zero = qf.gtqf(*qf.f2q(epsi * epsi), *isum) | (np.arange(nd32 * LANES).reshape(nd32, LANES) >= d)
    rsd = qf.mpyqf(*qf.isqrt_qf(*isum), *qwh)
    rsd = (np.where(zero, 0, rsd[0]), np.where(zero, 0, rsd[1]))
    qmean = qf.mpyqf(*qmean, *rsd)
    hi = qf.subqf(*qf.mpyqf(*_word_to_qf(mx), *rsd), *qmean)
    lo = qf.subqf(*qf.mpyqf(*_word_to_qf(mn), *rsd), *qmean)
    return rsd, qmean, qf.q2f(*qf.reduce_qf(*lo, want_max=False)), qf.q2f(*qf.reduce_qf(*hi, want_max=True))


def renorm(x: np.ndarray, rsd: tuple, mean: tuple) -> np.ndarray:
    """asm renorm_asm on the logical codes, per channel (rsd, mean) already scaled onto codes."""
    d = x.shape[3]
    rm, re = (a.reshape(a.shape[0], 1, 1, -1)[..., :d] for a in rsd)
    mm, me = (a.reshape(a.shape[0], 1, 1, -1)[..., :d] for a in mean)
    mexp = qf.s16(me + 15 - 1)
    mean_int = np.where(mexp > 15, 0, qf.s16(-qf.asr16(mm, mexp)))
    plo = qf.asr16(qf.mpy_rnd_sat(rm, -128 * x.astype(I64)), np.minimum(qf.s16(re + 6), 15))
    return np.clip((qf.s16(mean_int - plo) + 1) >> 1, 0, 255).astype(np.uint8)


def instancenorm_d32(t: D32Tensor) -> tuple[np.ndarray, F, F]:
    """op_instancenorm_hvx.c instancenorm_hvx_execute on a d32 input: (codes, out_min, out_max)."""
    x = t.logical_view()
    _, h, w, _ = x.shape
    nd32 = t.nd32
    skip = t.left == 4          # a left padding of 4 is skipped, any other is zapped and read
    cols = w + t.right + (0 if skip else t.left)
    npad = cols * (h + h % 2) - w * h
    extra = overread_rows(t, cols, t.left if skip else 0)
    rsd, mean, lo, hi = analyze(x, npad, nd32, extra)
    out_min, out_max = F(min(F(9999.0), lo.min())), F(max(F(-9999.0), hi.max()))
    if out_max > 0:
        with np.errstate(divide="ignore", over="ignore"):
            r = np.float64(F(255.0) / F(out_max - out_min))
        recip = int(np.clip(np.trunc(r), -2**31, 2**31 - 1))
    else:
        out_min = out_max = F(0.0)
        recip = 0
    scale = qf.f2q(F(recip))
    rsd = qf.mpyqf(*rsd, *scale)
    mean = qf.addqf(*qf.mpyqf(*mean, *scale), *qf.f2q(F(out_min * F(recip))))
    return renorm(x, rsd, mean), out_min, out_max


@register("QuantizedInstanceNorm_8_d32")
class QuantizedInstanceNorm8D32(Kernel):
    """Instance normalization of d32 quint8 data as the device computes it (module docstring); the input range
    is not read (the codes are normalized as they are), the output range is the normalized data's."""

    def compute(self, ctx: KernelContext, *inputs: Any) -> tuple[Any, ...]:
        codes, lo, hi = instancenorm_d32(d32_input(ctx, inputs[0], "input data"))
        return (d32_output(codes), *range_out(lo, hi))
