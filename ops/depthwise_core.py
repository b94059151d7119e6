"""Exact depthwise product sums (SEMANTICS.md §3, §5).

A depthwise filter ``[fh, fw, din, dmul]`` gives output channel
``c * dmul + m`` the sum over the filter taps of
``(x[.., c] - x_zero) * (w[i, j, c, m] - w_zero)``. There is no reduction
over channels, so a matrix product does not help; instead the sum is
``fh * fw`` vectorized multiply-adds, one per filter tap, over a strided
view of the zero-point-centred, zero-bordered input
(:func:`conv_core.centered_padded`: padded taps hold ``x_zero`` and add
exactly 0). Every term is an integer below 255*255 in magnitude and the sum
is far below 2**53, so float64 arithmetic gives the exact integer.

Measured on the 2-core development machine (1x112x112x32 input, 3x3
filter, SAME, stride 1, median of 21): ~9 ms for the sums with dmul 1,
~14 ms with dmul 2 (see the kernel module for the whole DepthwiseSupernode).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.conv_core import centered_padded, check_exact, conv_geometry
from hexnn_import.ops.registry import KernelContext


def check_depthwise_filter(ctx: KernelContext, x: np.ndarray, w: np.ndarray) -> None:
    """A 4-D ``[fh, fw, din, dmul]`` filter with no empty dimension and ``din`` = input depth."""
    if w.ndim != 4:
        raise ctx.fail(f"filter has shape {list(w.shape)}, expected 4-D [fh,fw,din,dmul]")
    if min(w.shape) < 1:
        raise ctx.fail(f"filter shape {list(w.shape)} has an empty dimension")
    if w.shape[2] != x.shape[3]:
        raise ctx.fail(f"filter depth {w.shape[2]} (filter shape {list(w.shape)}) does not match "
                       f"input depth {x.shape[3]} (input shape {list(x.shape)})")


def depthwise_sum(ctx: KernelContext, x: np.ndarray, x_zero: int, w: np.ndarray, w_zero: int,
                  stride_h: int, stride_w: int) -> np.ndarray:
    """Exact depthwise sums, int64 ``[b, oh, ow, din * dmul]`` (channel ``c * dmul + m``).

    ``x`` is quint8 ``[b,h,w,din]``, ``w`` quint8 ``[fh,fw,din,dmul]``;
    padding follows ``ctx.padding`` (SAME / VALID / SAME_CAFFE).
    """
    check_depthwise_filter(ctx, x, w)
    fh, fw, din, dmul = w.shape
    check_exact(ctx, fh * fw)
    g = conv_geometry(ctx, x.shape, w.shape, stride_h, stride_w)
    xc = centered_padded(x, x_zero, g)
    wc = w.astype(np.float64) - float(w_zero)
    b = x.shape[0]
    # One contiguous [b, oh, ow, din] accumulator per multiplier: a per-tap multiply-add on it is
    # faster than broadcasting into a [..., din, dmul] array (measured ~2x for dmul = 2).
    acc = np.zeros((dmul, b, g.out_h, g.out_w, din), dtype=np.float64)
    term = np.empty((b, g.out_h, g.out_w, din), dtype=np.float64)
    for i in range(fh):
        rows = slice(i, i + (g.out_h - 1) * stride_h + 1, stride_h)
        for j in range(fw):
            tap = xc[:, rows, j:j + (g.out_w - 1) * stride_w + 1:stride_w, :]
            for m in range(dmul):
                np.multiply(tap, wc[i, j, :, m], out=term)
                acc[m] += term
    out = acc[0] if dmul == 1 else np.moveaxis(acc, 0, -1)      # channel c * dmul + m
    return out.reshape(b, g.out_h, g.out_w, din * dmul).astype(np.int64)
