"""QuantizedMaxPool_8 and QuantizedAvgPool_8 on flat quint8 tensors, as hexagon_nn computes them.

Followed (SEMANTICS §0: the C code wins): ``ops/src/op_maxpool.c`` and
``ops/src/op_avgpool.c`` (``*_execute`` and ``*_execute_slice_ref``).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.compiled import tile_max as compiled_tile_max
from hexnn_import.ops.kernel_io import kept_range_out, range_out, require_4d, shape4, u8_codes
from hexnn_import.ops.node_cache import replay_get, replay_store
from hexnn_import.ops.quant import sat16
from hexnn_import.ops.registry import PAD_NA, Kernel, KernelContext, register
from hexnn_import.ops.windows import Axis, c_axis_geometry, window_view


class _Pool(Kernel):
    """Shared input handling of the quint8 pools (``maxpool_execute`` / ``avgpool_execute``).

    Inputs: data ``[b,h,w,d]``, min, max, window (shape ``[1,fh,fw,1]``),
    stride (shape ``[1,sh,sw,1]``); only the shapes of inputs 3 and 4 are
    read, and they must be 1 on the batch and depth axes ("bad window/stride
    shape"); shapes with fewer than 4 dimensions are left-padded with 1s.
    The input range (any finite range with min <= max) is copied to the
    output. Padding is the node's NN_PAD_*: NA is an error ("This op might
    pad"); geometry is ``nn_pad_compute_outsize_and_padbefore``, so a VALID
    window larger than the input (or a padding other than SAME, VALID,
    SAME_CAFFE) gives an empty output, as the C.
    """

    def geometry(self, ctx: KernelContext, inputs: tuple[np.ndarray, ...]
                 ) -> tuple[np.ndarray, float, float, Axis, Axis]:
        """Read and check the inputs: ``(codes, min, max, row axis, column axis)``."""
        data, mn_arr, mx_arr, window, stride = inputs
        mn, mx = ctx.finite_range(mn_arr, mx_arr, "input")
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        wb, fh, fw, wd = shape4(ctx, window, "window shape")
        sb, sh, sw, sd = shape4(ctx, stride, "stride shape")
        if (wb, wd, sb, sd) != (1, 1, 1, 1):
            raise ctx.fail(f"window shape {[wb, fh, fw, wd]} and stride shape {[sb, sh, sw, sd]} "
                           "must be 1 on the batch and depth axes")
        if ctx.padding == PAD_NA:
            raise ctx.fail("padding NA: this op might pad (op_maxpool.c / op_avgpool.c refuse it)")
        _, h, w, _ = x.shape
        rows = c_axis_geometry(ctx, h, fh, sh)
        cols = c_axis_geometry(ctx, w, fw, sw)
        return x, mn, mx, rows, cols


def tiles(x: np.ndarray, rows: Axis, cols: Axis) -> np.ndarray | None:
    """``[b, out_h, fh, out_w, fw, d]``: the windows of ``x`` as a reshaped view where they tile it (window
    = stride, no padding, no rows or columns left over: a global pool, or MobileNet's 2x2 / 2); else None.
    The same taps as :func:`window_view` without its padded copy and 6-D strided view (speed, issue 37)."""
    if not (rows.window == rows.stride and cols.window == cols.stride and rows.before == cols.before == 0
            and rows.out * rows.window == rows.size and cols.out * cols.window == cols.size
            and x.flags.c_contiguous):
        return None
    b, _, _, d = x.shape
    return x.reshape(b, rows.out, rows.window, cols.out, cols.window, d)


#: Most taps a tiled pool reduces slice by slice (numpy's reduction over two strided axes of a 6-D view is
#: ~10x slower than pairwise passes over the tap slices; a global pool reduces its two axes at once).
MAX_TILE_TAPS = 16


def tile_max(t: np.ndarray) -> np.ndarray:
    """``t.max(axis=(2, 4))`` of :func:`tiles`' view, the same codes (speed, issue 37)."""
    fh, fw = t.shape[2], t.shape[4]
    if fh * fw > MAX_TILE_TAPS:
        return t.max(axis=(2, 4))
    acc = t[:, :, 0, :, 0].copy()
    for i in range(fh):
        for j in range(fw):
            if i or j:
                np.maximum(acc, t[:, :, i, :, j], out=acc)
    return acc


def tile_sum(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``t.sum(axis=(2, 4), dtype=int64)`` of :func:`tiles`' view ``t`` of ``x``: exact integer sums in any order
    (speed, issue 37)."""
    _, oh, fh, ow, fw, _ = t.shape
    if oh == ow == 1:
        return x.sum(axis=(1, 2), keepdims=True, dtype=np.int64)
    if fh * fw > MAX_TILE_TAPS:
        return t.sum(axis=(2, 4), dtype=np.int64)
    acc = t[:, :, 0, :, 0].astype(np.int64)
    for i in range(fh):
        for j in range(fw):
            if i or j:
                np.add(acc, t[:, :, i, :, j], out=acc)
    return acc


def _empty(x: np.ndarray, rows: Axis, cols: Axis) -> np.ndarray | None:
    """The (all-empty) output when there is nothing to pool, else None."""
    if x.size and rows.out and cols.out:
        return None
    return np.zeros((x.shape[0], rows.out, cols.out, x.shape[3]), np.uint8)


@register("QuantizedMaxPool_8")
class QuantizedMaxPool8(_Pool):
    """Max over each window's in-bounds taps, starting from 0 (``maxpool_execute_slice_ref``).

    Out-of-bounds taps are padded with code 0, which can never win over the
    C's starting value 0.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(codes, out_min, out_max)``."""
        x, mn, mx, rows, cols = self.geometry(ctx, inputs)
        out = _empty(x, rows, cols)
        if out is None:
            t = tiles(x, rows, cols)
            if t is None:
                out = np.ascontiguousarray(window_view(x, rows, cols, fill=0).max(axis=(-2, -1)), dtype=np.uint8)
            else:   # one compiled pass over the tiled input where numba is installed
                out = compiled_tile_max(x, rows.window, cols.window)
                out = tile_max(t) if out is None else out
        return (out, *kept_range_out(ctx.state, mn, mx))


@register("QuantizedAvgPool_8")
class QuantizedAvgPool8(_Pool):
    """Mean over each window's in-bounds taps only (``avgpool_execute_slice_ref``).

    ``out = (sum * sath(0x8000 / cnt) + 0x4000) >> 15`` with ``cnt`` the
    number of in-bounds taps of that output position (so a single tap uses
    32767, and a window of more than 32768 taps gives 0, as the C).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(codes, out_min, out_max)``."""
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        x, mn, mx, rows, cols = self.geometry(ctx, inputs)
        out_mn, out_mx = range_out(mn, mx)
        empty = _empty(x, rows, cols)
        if empty is not None:
            return (empty, out_mn, out_mx)
        cnt = rows.tap_counts()[:, None] * cols.tap_counts()[None, :]  # [out_h, out_w], every count >= 1
        recip = sat16(np.int64(0x8000) // np.maximum(cnt, 1))[None, :, :, None]

        def run(x_new: np.ndarray) -> np.ndarray:
            t = tiles(x_new, rows, cols)
            total = (window_view(x_new, rows, cols, fill=0).sum(axis=(-2, -1), dtype=np.int64) if t is None
                     else tile_sum(x_new, t))
            # sum <= 255 * cnt and recip <= 0x8000 / cnt, so the result is at most 255 (no wrap in uint8)
            return ((total * recip + 0x4000) >> 15).astype(np.uint8)

        if x is inputs[0]:  # uint8 data: later runs with the same other inputs redo only the sums (node_cache)
            out_mn.flags.writeable = out_mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda x_new: (run(x_new), out_mn, out_mx))
        return (run(x), out_mn, out_mx)
