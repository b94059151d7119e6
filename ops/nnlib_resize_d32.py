"""hexagon_nn's device arithmetic of QuantizedResizeBilinear_8_d32, step for step in numpy (issue 36).

``resize_bilinear_d32_execute`` (ops/src/op_resizebilinear_d32.c) takes one of three paths:

- the same size: a copy;
- an exact 2x without align corners, the input's left padding even: asm ``do_bilin_interp_x2_single_slice_HVX``
  (asm_src/resizebilinear_d32_h.S): the odd columns of each input row are ``(x[j] + x[j+1]) >> 1`` (``vavg``;
  the last repeats ``x[w-1]``), the odd rows the mean of the two interpolated rows around them (the last row
  repeats itself), truncated in the row loop and rounded (``vavg:rnd``) in its tail vector;
- otherwise ``do_bilin_interp_general_all_HVX`` on ``obtain_scaling_plan``'s plan: row ``r`` sits at
  ``r * vscale + 2**24`` (32 fraction bits, ``vscale = ((h_in << 32) + h_out / 2) / h_out``), its input row
  the integer part and a 7-bit weight (``hvx_bilin_v_scaling``: ``a * (128 - beta) + b * beta``); column ``c``
  at ``c * add_per + 2**16`` with a 15-bit fraction (``hvx_bilin_h_scaling``: ``L + vmpy:<<1:rnd:sat(R - L,
  frac)``), both clamped to the last row / column with weight 0; the result ``vasr:rnd:sat`` by 7 to uint8.
  With align corners the sizes less one make the steps (when the output side is above 1).
"""
from __future__ import annotations

import numpy as np

I64 = np.int64


def x2_codes(x: np.ndarray, left: int = 4) -> np.ndarray:
    """The asm 2x path on ``[b, h, w, d]`` codes with ``left`` columns of d32 left padding: ``[b, 2h, 2w, d]``.

    Columns: ``x[j]`` and ``(x[j] + x[j+1]) >> 1`` (``vavg``), the last repeating itself. Rows: each
    interpolated input row, then the mean with the next (the last row repeats itself): truncated (``vavg``) in
    the row loop, rounded (``vavg:rnd``) in its tail, the last vector of each row - the last 1-4 input columns
    counted from the 4-aligned start (two gutter columns in front where ``left & 2``)."""
    v = x.astype(I64)
    w = v.shape[2]
    right = np.concatenate([v[:, :, 1:], v[:, :, -1:]], axis=2)
    rows = np.stack([v, (v + right) >> 1], axis=3).reshape(v.shape[0], v.shape[1], -1, v.shape[3])
    below = np.concatenate([rows[:, 1:], rows[:, -1:]], axis=1)
    gutter = left & 2
    tail = np.arange(2 * w) // 2 >= 4 * ((w + gutter - 1) >> 2) - gutter
    mean = (rows + below + tail[None, None, :, None]) >> 1
    out = np.stack([rows, mean], axis=2).reshape(v.shape[0], -1, rows.shape[2], v.shape[3])
    return out.astype(np.uint8)


def _steps(n_in: int, n_out: int, align: bool) -> int:
    """``obtain_scaling_plan``'s step with 32 fraction bits, rounded: ``((n_in << 32) + n_out / 2) / n_out``."""
    if align and n_out > 1:
        n_in, n_out = n_in - 1, n_out - 1
    return ((n_in << 32) + (n_out >> 1)) // n_out


def _positions(n_in: int, n_out: int, align: bool, bias: int, frac_shift: int) -> tuple[np.ndarray, np.ndarray]:
    """(input index, fraction) per output position: ``acc = i * step + bias``, the integer part and
    ``(uint32)acc >> frac_shift``, both 0-weighted at the last input index and beyond."""
    acc = np.arange(n_out, dtype=I64) * I64(_steps(n_in, n_out, align)) + I64(bias)
    idx = acc >> 32
    frac = (acc & 0xFFFFFFFF) >> frac_shift
    last = idx >= n_in - 1
    return np.where(last, n_in - 1, idx), np.where(last, 0, frac)


def general_codes(x: np.ndarray, h_out: int, w_out: int, align: bool) -> np.ndarray:
    """The general path on ``[b, h, w, d]`` codes: ``[b, h_out, w_out, d]``."""
    v = x.astype(I64)
    h, w = v.shape[1], v.shape[2]
    ry, beta = _positions(h, h_out, align, 1 << 24, 25)
    below = np.minimum(ry + 1, h - 1)      # weight 0 there when clamped (the C reads the padding row)
    rows = v[:, ry] * (128 - beta)[None, :, None, None] + v[:, below] * beta[None, :, None, None]
    cx, frac = _positions(w, w_out, align, 1 << 16, 17)
    right = np.minimum(cx + 1, w - 1)
    left = rows[:, :, cx]
    delta = rows[:, :, right] - left
    hv = left + np.clip((2 * delta * frac[None, None, :, None] + 0x8000) >> 16, -2 ** 15, 2 ** 15 - 1)
    return np.clip(((hv >> 6) + 1) >> 1, 0, 255).astype(np.uint8)
