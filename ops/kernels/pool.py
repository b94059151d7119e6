"""QuantizedMaxPool_8 and QuantizedAvgPool_8 on flat quint8 tensors (SEMANTICS.md §3, §6)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out, require_4d, shape4, u8_codes
from hexnn_import.ops.node_cache import replay_get, replay_store
from hexnn_import.ops.quant import sat16, sat_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register
from hexnn_import.ops.windows import Axis, axis_geometry, window_view

#: Largest in-bounds tap count AvgPool can average: beyond it ``0x8000 // cnt`` is 0.
MAX_AVG_TAPS = 0x8000


class _Pool(Kernel):
    """Shared input handling of the quint8 pools.

    Inputs: data ``[b,h,w,d]``, min, max, window (shape ``[1,fh,fw,1]``),
    stride (shape ``[1,sh,sw,1]``); only the shapes of inputs 3 and 4 are
    read. Choices where the documents are silent: window and stride must be
    1 on the batch and depth axes (pooling never mixes images or channels),
    shapes with fewer than 4 dimensions are left-padded with 1s; the input
    range must be sane and passes through unchanged. Padding is the node's
    NN_PAD_* (SAME, VALID, SAME_CAFFE; NA is an error), geometry as §3.
    """

    def geometry(self, ctx: KernelContext, inputs: tuple[np.ndarray, ...]
                 ) -> tuple[np.ndarray, float, float, Axis, Axis]:
        """Read and check the inputs: ``(codes, min, max, row axis, column axis)``."""
        data, mn_arr, mx_arr, window, stride = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        wb, fh, fw, wd = shape4(ctx, window, "window shape")
        sb, sh, sw, sd = shape4(ctx, stride, "stride shape")
        if (wb, wd, sb, sd) != (1, 1, 1, 1):
            raise ctx.fail(f"window shape {[wb, fh, fw, wd]} and stride shape {[sb, sh, sw, sd]} "
                           "must be 1 on the batch and depth axes")
        if x.size == 0:
            raise ctx.fail(f"input data has shape {list(x.shape)}, with no elements to pool")
        _, h, w, _ = x.shape
        rows = axis_geometry(ctx, h, fh, sh)
        cols = axis_geometry(ctx, w, fw, sw)
        return x, mn, mx, rows, cols


@register("QuantizedMaxPool_8")
class QuantizedMaxPool8(_Pool):
    """Max over each window's in-bounds taps; the range passes through (SEMANTICS §6).

    Out-of-bounds taps are padded with code 0, which can never win: every
    SAME/VALID window holds at least one in-bounds tap and codes are >= 0.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x, mn, mx, rows, cols = self.geometry(ctx, inputs)
        out = window_view(x, rows, cols, fill=0).max(axis=(-2, -1))
        return (np.ascontiguousarray(out, dtype=np.uint8), *range_out(mn, mx))


@register("QuantizedAvgPool_8")
class QuantizedAvgPool8(_Pool):
    """Mean over each window's in-bounds taps only (padding not counted) (SEMANTICS §6).

    ``out = (sum * sat16(0x8000 // cnt) + 0x4000) >> 15`` with ``cnt`` the
    number of in-bounds taps of that output position; the range passes
    through. Choice where the documents are silent: a window with more than
    32768 in-bounds taps is an error, since its reciprocal ``0x8000 // cnt``
    is 0 and every output would silently be code 0.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        replay = replay_get(ctx.state, inputs)
        if replay is not None:
            return replay(inputs[0])
        x, mn, mx, rows, cols = self.geometry(ctx, inputs)
        cnt = rows.tap_counts()[:, None] * cols.tap_counts()[None, :]  # [out_h, out_w]
        if cnt.size and int(cnt.max()) > MAX_AVG_TAPS:
            raise ctx.fail(f"window {rows.window}x{cols.window} averages {int(cnt.max())} taps, "
                           f"more than the {MAX_AVG_TAPS} the 16-bit reciprocal 0x8000 // cnt can divide by")
        recip = sat16(np.int64(0x8000) // np.maximum(cnt, 1))[None, :, :, None]  # cnt >= 1; max() guards empty

        def run(x_new: np.ndarray) -> np.ndarray:
            total = window_view(x_new, rows, cols, fill=0).sum(axis=(-2, -1), dtype=np.int64)
            return sat_u8((total * recip + 0x4000) >> 15)

        out_mn, out_mx = range_out(mn, mx)
        if x is inputs[0]:  # uint8 data: later runs with the same other inputs redo only the sums (node_cache)
            out_mn.flags.writeable = out_mx.flags.writeable = False
            replay_store(ctx.state, inputs, (0,), lambda x_new: (run(x_new), out_mn, out_mx))
        return (run(x), out_mn, out_mx)
