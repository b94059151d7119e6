"""Windowed views for pooling-style ops: geometry, padded strided views, tap counts.

Geometry follows SEMANTICS.md §3 through :func:`hexnn_import.ops.padding.out_and_pad`
(VALID / SAME / SAME_CAFFE from ``ctx.padding``), or hexagon_nn's own
``nn_pad_compute_outsize_and_padbefore`` (:func:`c_axis_geometry`). The view is built with
``numpy.lib.stride_tricks.sliding_window_view`` so reductions over a window
run in numpy, with no Python loop over output elements.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from hexnn_import.ops.padding import nn_outsize_padding, out_and_pad
from hexnn_import.ops.registry import KernelContext


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a windowed op: sizes, window, stride and padding."""

    size: int
    window: int
    stride: int
    out: int
    before: int
    after: int

    def tap_counts(self) -> np.ndarray:
        """Number of in-bounds taps of each output position's window along this axis (int64)."""
        start = np.arange(self.out, dtype=np.int64) * self.stride - self.before
        lo = np.maximum(start, 0)
        hi = np.minimum(start + self.window, self.size)
        return np.maximum(hi - lo, 0)


def axis_geometry(ctx: KernelContext, size: int, window: int, stride: int) -> Axis:
    """Output size and padding along one axis for ``ctx.padding`` (errors name the node)."""
    out, before, after = out_and_pad(ctx, size, window, stride)
    return Axis(size, window, stride, out, before, after)


def c_axis_geometry(ctx: KernelContext, size: int, window: int, stride: int) -> Axis:
    """Output size and padding along one axis as hexagon_nn's ``nn_pad_compute_outsize_and_padbefore``.

    Never an error (:func:`hexnn_import.ops.padding.nn_outsize_padding`): a VALID window larger than
    the input gives 0 outputs. Window and stride must be >= 1 (the C divides by the stride).
    """
    if window < 1 or stride < 1:
        raise ctx.fail(f"window {window} and stride {stride} must both be >= 1")
    out, before, after = nn_outsize_padding(size, window, stride, ctx.padding)
    return Axis(size, window, stride, out, before, after)


def window_view(x: np.ndarray, rows: Axis, cols: Axis, fill: int) -> np.ndarray:
    """Read-only view ``[b, out_h, out_w, d, fh, fw]`` of ``x`` ``[b, h, w, d]`` padded with ``fill``.

    Padding is added as the axes say; window starts are ``0, s, ..., (out-1)*s``
    in the padded tensor, and rows/columns past the last window are never read.
    """
    pad = ((0, 0), (rows.before, rows.after), (cols.before, cols.after), (0, 0))
    xp = np.pad(x, pad, mode="constant", constant_values=fill) if any(p != (0, 0) for p in pad) else x
    view = sliding_window_view(xp, (rows.window, cols.window), axis=(1, 2))
    return view[:, : rows.out * rows.stride : rows.stride, : cols.out * cols.stride : cols.stride]
