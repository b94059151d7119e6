"""The 3x3 depthwise kernels' output padding columns (ops/kernels/dwise_pad_columns.py) against the kernels'
C models read literally on a d32 byte buffer.

asm_src/dwconv2dbbb_s{1,2}_3x3_h.S (C model): output column ``j`` of row ``y``, lane ``z`` of slice ``d`` reads
``in_buf[(y * sh + fy) * next_in_width + d * next_in_width_32 + (j * sw + filt_x) * 32 + z]`` with the weights
shifted by ``in_left_skip`` taps; op_dwise_snode_8bit.c starts ``in_buf`` at row ``-pad_top``, column
``-in_left_pad`` and zaps the pad columns of the data rows, the ``pad_top`` rows above and the
``pad_bottom + extra_bottom_row`` rows below with the input's zero code. Here the buffer is the d32 layout
itself (``D32Tensor.data``), every byte nothing sets marked, and the valid columns are checked against the
engine's depthwise sums (device-verified: tests/ops/test_hvx_dwise.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops.conv_core import ConvGeometry
from hexnn_import.ops.d32 import to_d32
from hexnn_import.ops.kernels.dwise_pad_columns import pad_column_sums, pad_columns
from hexnn_import.ops.registry import PAD_SAME, PAD_VALID


def _geometry(h: int, w: int, sh: int, sw: int, padding: int) -> ConvGeometry:
    def axis(n: int, s: int) -> tuple[int, int, int]:
        if padding == PAD_VALID:
            return (n - 3) // s + 1, 0, 0
        o = -(-n // s)
        tot = max(0, (o - 1) * s + 3 - n)
        return o, tot // 2, tot - tot // 2
    oh, top, bottom = axis(h, sh)
    ow, left, right = axis(w, sw)
    return ConvGeometry(oh, ow, top, bottom, left, right, sh, sw)


def _c_model(x: np.ndarray, xz: int, wc: np.ndarray, g: ConvGeometry, padding: int
             ) -> tuple[np.ndarray, np.ndarray, object]:
    """Every output column's sums (NaN where a weighted byte is one nothing sets) of the kernels' C model on the
    zapped d32 buffer, ``[b, oh, out_width_total, din]``, and the padding plan."""
    b, h, w, din = x.shape
    t = to_d32(x)
    pc = pad_columns(g, h, t.left, t.right, padding)
    buf = t.data.astype(np.float64) - xz                       # [b, h_total, nch, w_total, 32]
    defined = np.zeros(buf.shape, bool)
    rows = slice(t.top, t.top + h)
    channel = np.arange(buf.shape[2])[:, None, None] * 32 + np.arange(32)    # [nch, 1, 32]
    defined[:, rows, :, t.left:t.left + w] = channel < din
    zap = np.zeros(buf.shape[1], bool)
    zap[t.top - g.pad_top:t.top] = zap[t.top + h:t.top + h + pc.zap_bottom] = True
    zap_cols = np.ones(buf.shape[3], bool)
    zap_cols[t.left:t.left + w] = False
    buf[:, zap] = 0.0
    defined[:, zap] = True
    buf[:, rows, :, zap_cols] = 0.0
    defined[:, rows, :, zap_cols] = True
    flat, ok = buf.reshape(b, -1), defined.reshape(b, -1)
    next_row, next_32 = buf.shape[2] * buf.shape[3] * 32, buf.shape[3] * 32
    total = g.out_w + pc.out_left + (-(g.out_w + pc.out_left)) % 4
    y, j, c = np.ix_(np.arange(g.out_h), np.arange(total), np.arange(din))
    out = np.zeros((b, g.out_h, total, din))
    for fy in range(3):
        for tap in range(3):
            a = ((t.top - g.pad_top + y * g.stride_h + fy) * next_row + (c // 32) * next_32
                 + (j * g.stride_w + pc.skip + tap) * 32 + c % 32)
            weighted = wc[fy, tap][None, None, None, :] != 0
            out += np.where(weighted, np.where(ok[:, a], flat[:, a], np.nan) * wc[fy, tap], 0.0)
    return out, pc


@pytest.mark.parametrize("h, w, din, sh, sw, padding", [
    (4, 7, 7, 1, 1, PAD_SAME),      # the golden case's shape: the last row's right pad reads past the zapped rows
    (3, 8, 40, 1, 1, PAD_SAME),     # two slices: the first slice's right pad runs into the second's left pad
    (5, 12, 5, 2, 2, PAD_SAME),     # stride 2, left pad columns only
    (4, 8, 5, 2, 2, PAD_SAME),      # stride 2: the right pad reads past the row into the next row's data
    (4, 8, 40, 2, 2, PAD_SAME),     # ... into the next slice's data, and its depth padding
    (5, 9, 33, 2, 2, PAD_SAME),     # stride 2, two slices, in_left_skip 1
    (6, 10, 3, 1, 2, PAD_VALID),
])
def test_pad_columns_equal_the_c_model(h: int, w: int, din: int, sh: int, sw: int, padding: int) -> None:
    rng = np.random.default_rng(h * 100 + w)
    x = rng.integers(0, 256, (1, h, w, din), dtype=np.uint8)
    wc = rng.integers(-128, 128, (3, 3, din)).astype(np.float64)
    wc[0, 0, 0] = 0.0
    xz = int(rng.integers(0, 256))
    g = _geometry(h, w, sh, sw, padding)
    want, pc = _c_model(x, xz, wc, g, padding)
    got, known = pad_column_sums(x, xz, wc, g, pc, 4, to_d32(x).w_total)
    cols = want[:, :, pc.cols]
    assert np.array_equal(~np.isnan(cols), known)
    assert np.array_equal(got[known], cols[known]) and not got[~known].any()
    # the valid columns of the same model are the engine's depthwise sums (device-verified)
    xp = np.pad(x.astype(np.float64) - xz, ((0, 0), (g.pad_top, g.pad_bottom), (g.pad_left, g.pad_right), (0, 0)))
    ref = sum(xp[:, fy:fy + (g.out_h - 1) * sh + 1:sh, tap:tap + (g.out_w - 1) * sw + 1:sw] * wc[fy, tap]
              for fy in range(3) for tap in range(3))
    assert np.array_equal(want[:, :, pc.out_left:pc.out_left + g.out_w], ref)
