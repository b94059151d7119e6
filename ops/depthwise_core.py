"""Exact depthwise product sums (SEMANTICS.md §3, §5).

A depthwise filter ``[fh, fw, din, dmul]`` gives output channel
``c * dmul + m`` the sum over the filter taps of
``(x[.., c] - x_zero) * (w[i, j, c, m] - w_zero)``. There is no reduction
over channels, so a matrix product does not help; instead the sum is
``fh * fw`` vectorized multiply-adds, one per filter tap, over a strided
view of the zero-point-centred, zero-bordered input
(:func:`conv_core.centered_padded`: padded taps hold ``x_zero`` and add
exactly 0). Every term is an integer below 255*255 in magnitude and the sum
is far below 2**53, so float64 arithmetic gives the exact integer; when the
per-channel bound on the sum is below 2**24 (always for 3x3 filters: 9 taps
of at most 255*255), float32 is exact too and twice as fast
(:class:`DepthwisePlan`, built once per node).

Measured on the 2-core development machine (1x112x112x32 input, 3x3
filter, SAME, stride 1, median of 21): ~9 ms for the sums with dmul 1,
~14 ms with dmul 2 (see the kernel module for the whole DepthwiseSupernode).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import as_strided

from hexnn_import.ops.conv_core import ConvGeometry, centered_padded
from hexnn_import.ops.registry import KernelContext

#: float32 represents every integer below this exactly.
_F32_EXACT = 2.0 ** 24
#: Outputs up to this many elements (per multiplier) are summed by one einsum; larger ones tap by tap.
_EINSUM_ELEMS = 40_000


def check_depthwise_filter(ctx: KernelContext, x: np.ndarray, w: np.ndarray) -> None:
    """A 4-D ``[fh, fw, din, dmul]`` filter with no empty dimension and ``din`` = input depth."""
    if w.ndim != 4:
        raise ctx.fail(f"filter has shape {list(w.shape)}, expected 4-D [fh,fw,din,dmul]")
    if min(w.shape) < 1:
        raise ctx.fail(f"filter shape {list(w.shape)} has an empty dimension")
    if w.shape[2] != x.shape[3]:
        raise ctx.fail(f"filter depth {w.shape[2]} (filter shape {list(w.shape)}) does not match "
                       f"input depth {x.shape[3]} (input shape {list(x.shape)})")


@dataclass(frozen=True)
class DepthwisePlan:
    """Per-node constants of a depthwise product (computed once, see :mod:`node_cache`).

    ``wc[i, j, m]`` is ``w[i, j, :, m] - w_zero`` (contiguous over the input
    channels) in the narrowest exact float type: ``bound[c * dmul + m]`` is
    the largest ``|sum|`` of that output channel (``max|x - x_zero| *
    sum|w - w_zero|``), which bounds every partial sum; below 2**24 for all
    channels float32 taps are exact, otherwise float64 (exact below 2**53).
    """

    w: np.ndarray  # the quint8 filter [fh, fw, din, dmul]
    x_zero: int
    wc: np.ndarray
    bound: np.ndarray  # float64 [din * dmul]
    _rows: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def dtype(self) -> type:
        """float32 or float64: the type of the sums."""
        return self.wc.dtype.type

    def row_weights(self, out_w: int) -> np.ndarray:
        """``wc`` tiled along an output row, ``[fh, fw, dmul, out_w, din]`` (kept per width).

        Multiplying a tap view by a whole row of weights lets numpy run one
        long inner loop over ``out_w * din`` elements instead of one per pixel
        (~2x on the wide, shallow layers).
        """
        got = self._rows.get(out_w)
        if got is None:
            got = self._rows[out_w] = np.ascontiguousarray(
                np.broadcast_to(self.wc[:, :, :, None, :], (*self.wc.shape[:3], out_w, self.wc.shape[3])))
        return got


def depthwise_plan(w: np.ndarray, w_zero: int, x_zero: int) -> DepthwisePlan:
    """Build the :class:`DepthwisePlan` of a quint8 ``[fh, fw, din, dmul]`` filter."""
    wc = w.astype(np.float64) - float(w_zero)
    bound = np.abs(wc).sum(axis=(0, 1)).reshape(-1) * float(max(x_zero, 255 - x_zero))  # [din*dmul], c*dmul+m
    dtype = np.float32 if bound.size == 0 or float(bound.max()) < _F32_EXACT else np.float64
    return DepthwisePlan(w, int(x_zero), np.ascontiguousarray(wc.transpose(0, 1, 3, 2), dtype=dtype), bound)


def depthwise_sum_at(x: np.ndarray, plan: DepthwisePlan, g: ConvGeometry) -> np.ndarray:
    """Exact depthwise sums as integer-valued floats ``[b, oh, ow, din * dmul]`` (``plan.dtype``), the geometry
    already worked out (a node's replay, see node_cache).

    Small outputs (up to :data:`_EINSUM_ELEMS` elements per multiplier) take
    one ``einsum`` over the window view; larger ones ``fh * fw`` multiply-adds,
    one per tap, over strided views of the centred, zero-bordered input with
    row-tiled weights (:meth:`DepthwisePlan.row_weights`); with a column
    stride above 1 the input is first split into its column phases so that
    every tap view has unit column stride. Any order of summation is exact
    (module doc), so both give the same integers.
    """
    fh, fw, din, dmul = plan.w.shape
    stride_h, stride_w = g.stride_h, g.stride_w
    dt = plan.dtype
    xc = centered_padded(x, plan.x_zero, g, dt)
    b, oh, ow = x.shape[0], g.out_h, g.out_w
    rows_end = (oh - 1) * stride_h + 1
    if oh * ow * din <= _EINSUM_ELEMS:
        sb, sy, sx, sc = xc.strides
        win = as_strided(xc, shape=(b, oh, ow, din, fh, fw),            # the windows, without copying
                         strides=(sb, stride_h * sy, stride_w * sx, sc, sy, sx), writeable=False)
        out = np.einsum("bhwcij,ijmc->bhwcm", win, plan.wc)            # channel c * dmul + m
        return out.reshape(b, oh, ow, din * dmul)
    phases = [xc] if stride_w == 1 else [np.ascontiguousarray(xc[:, :, p::stride_w]) for p in range(min(stride_w, fw))]
    wrow = plan.row_weights(ow)
    # One contiguous [b, oh, ow, din] accumulator per multiplier: a per-tap multiply-add on it is
    # faster than broadcasting into a [..., din, dmul] array (measured ~2x for dmul = 2).
    acc = np.empty((dmul, b, oh, ow, din), dtype=dt)
    term = np.empty((b, oh, ow, din), dtype=dt)
    for i in range(fh):
        for j in range(fw):
            src, col = phases[j % stride_w], j // stride_w
            tap = src[:, i:i + rows_end:stride_h, col:col + ow, :]
            for m in range(dmul):
                if i == j == 0:
                    np.multiply(tap, wrow[i, j, m], out=acc[m])
                else:
                    np.multiply(tap, wrow[i, j, m], out=term)
                    acc[m] += term
    out = acc[0] if dmul == 1 else np.moveaxis(acc, 0, -1)      # channel c * dmul + m
    return out.reshape(b, oh, ow, din * dmul)
