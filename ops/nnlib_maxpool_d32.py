"""QuantizedMaxPool_8_d32's asm slices on an input whose d32 left padding is not 4 (op_maxpool_d32.c, issue 36).

``maxpool_execute`` (nnlib df7ad3c, op_maxpool_d32.c) hands the 2x2 / 2, 3x3 / 1 and 3x3 / 2 windows (square window
and stride, enough top / bottom padding, output not 1x1) to ``maxpool_slice_hvx_*`` (asm_src/maxpool_d32.S,
maxpool_3x3s2_d32.S), which load whole 128-byte vectors (four width positions) and place the window by
``out_lalign`` as if the input's left padding were 4:

- no padding needed on the left (VALID, or SAME whose padding falls on the right): ``in_w_offset = 0`` and the
  slice starts at the vector holding column 0, so every window reads ``left % 4`` columns to the left;
- padding needed on the left (SAME 3x3 on an odd width): ``in_w_offset = -left`` (the row's start) and
  ``out_lalign`` counts from there as if four padding columns came first, so every window reads ``4 - left``
  columns to the right (to the left when ``left`` > 4).

The columns read that way are the input's own buffer: the padding bytes its producer left there (VALID), the
zeros of ``maxpool_zap_worker`` (SAME), past the right edge the next d32 slice's or row's zapped left padding or
data. :func:`device_codes` takes them from the engine's padded buffer by flat address, after the same zap. The
rolling-buffer path (other windows) and the 1x1 reduction align by ``left`` and are right for any left padding.
"""
from __future__ import annotations

import numpy as np
from hexnn_import.ops.d32 import LANES, D32Tensor
from hexnn_import.ops.windows import Axis

FAST = {(2, 2), (3, 1), (3, 2)}


def collapse(axis: Axis) -> Axis:
    """The axis as ``maxpool_execute`` trims it when its output is one position (window = the taps needed)."""
    if axis.out != 1:
        return axis
    n = min(axis.window - axis.before, axis.size)
    return Axis(n, n, 1, 1, 0, 0)


def path_shift(rows: Axis, cols: Axis, t: D32Tensor) -> tuple[bool, int] | None:
    """(whether an asm slice runs, the columns the device reads right of the intended ones - negative: left -
    which is 0 on the rolling-buffer path); None for the 1x1 reduction (no zap, aligned by the left padding: the
    flat twin's bytes)."""
    if rows.out == 1 and cols.out == 1:
        return None
    r, c = collapse(rows), collapse(cols)
    extra = int(t.right < c.after)
    if (r.window, r.stride) != (c.window, c.stride) or (c.window, c.stride) not in FAST:
        return False, 0
    if t.top < r.before or t.bottom < r.after + extra:
        return False, 0
    return True, -(t.left % 4) if c.before == 0 else 4 - t.left


def zapped(t: D32Tensor, rows: Axis, cols: Axis, asm: bool) -> np.ndarray:
    """The input buffer (flat) after ``maxpool_zap_worker`` (SAME): in every d32 slice of rows 0 .. h+1 the
    vector at the row's start masked by ``padzap_part`` (asm_src/padzap_d32.S: ``valign`` by ``-32 * left``
    bytes, taken modulo 128, so ``left % 4`` columns, or the whole vector - four columns - when that is 0: left 0
    zeroes data columns 0-3, left 5-7 leaves columns -4 .. -1 as the producer wrote them), and of rows 0 .. h
    the right padding up to a multiple of four columns; one row below the input zeroed whole when the right
    padding is short of the window, and with ``asm`` the rows the window needs above and below too (the rolling
    buffer makes its own 0 rows)."""
    r, c = collapse(rows), collapse(cols)
    buf = t.data.copy()
    h = r.size
    buf[:, t.top - (r.before if asm else 0):t.top] = 0
    buf[:, t.top + h:t.top + h + (r.after if asm else 0) + int(t.right < c.after)] = 0
    n = t.left % 4 or 4
    buf[:, t.top:t.top + h + 2, :, :n] = 0
    amt = (-(c.size + t.left)) & 3
    buf[:, t.top:t.top + h + 1, :, t.left + c.size:t.left + c.size + amt] = 0
    return buf.reshape(-1)


def device_codes(t: D32Tensor, rows: Axis, cols: Axis, same: bool, path: tuple[bool, int]) -> np.ndarray | None:
    """``[b, out_h, out_w, d]`` as the device computes them on ``path`` (:func:`path_shift`): each window moved
    its columns and read by flat address from the (for SAME, zapped) buffer - on the rolling buffer the rows
    outside the input as 0 -; None if a tap falls outside the tensor's buffer."""
    asm, shift = path
    r, c = collapse(rows), collapse(cols)
    flat = zapped(t, rows, cols, asm) if same else t.data.reshape(-1)
    b, _, _, d = t.shape
    ys = np.arange(r.out)[:, None] * r.stride + np.arange(r.window)[None, :] - r.before
    inside = ((ys >= 0) & (ys < r.size) | asm)[None, :, :, None, None, None]
    ys = ys if asm else np.clip(ys, 0, r.size - 1)
    xs = np.arange(c.out)[:, None] * c.stride + np.arange(c.window)[None, :] - c.before + shift
    ch = np.arange(d) + t.before
    row = (np.arange(b)[:, None, None] * t.h_total + t.top + ys[None]) * t.nd32  # [b, oh, kh]
    row = row[:, :, :, None, None, None] + (ch // LANES)[None, None, None, None, None, :]
    addr = (row * t.w_total + (xs + t.left)[None, None, None, :, :, None]) * LANES \
        + (ch % LANES)[None, None, None, None, None, :]
    if addr.min() < 0 or addr.max() >= flat.size:
        return None
    return np.where(inside, flat[addr], 0).max(axis=(2, 4)).astype(np.uint8)


def defect_reason(path: tuple[bool, int], left: int, same: bool) -> str:
    """Why the device's codes differ from the pool on left padding ``left`` (for a DeviceDefectWarning)."""
    asm, shift = path
    parts = [f"its asm slice reads every window {abs(shift)} column(s) to the {'right' if shift > 0 else 'left'}"
             ] if asm and shift else []
    if same and left % 4 == 0:
        parts.append("its padding zap clears data columns 0-3")
    elif same and left > 4:
        parts.append(f"its padding zap leaves {min(4, left)} padding column(s) as the producer wrote them")
    return " and ".join(parts) or "it reads padding bytes"
