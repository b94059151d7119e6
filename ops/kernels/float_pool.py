"""MaxPool_f, AvgPool_f and L2Pool_f on float tensors (hexagon_nn_ops.txt; geometry SEMANTICS.md §3).

Inputs: data ``[b,h,w,d]``, window (shape ``[1,fh,fw,1]``), stride (shape
``[1,sh,sw,1]``); only the shapes of inputs 1 and 2 are read, and both must
be 1 on the batch and depth axes. Padding is the node's NN_PAD_* (SAME,
VALID, SAME_CAFFE; NA is an error), output size and padding per
:func:`hexnn_import.ops.padding.out_and_pad`. Windows cover in-bounds taps
only: padding is never counted (as in hexagon_nn's float pools and
SEMANTICS §6 for the quantized ones).

The arithmetic replays the device's C loops in float32, so results are
bit-identical to them: taps are visited row by row, left to right; the
max starts from -Inf and takes a tap only when it is greater (``if (x >
max)``: a NaN tap never wins, a window of NaNs gives -Inf); the average is
``sum / count`` with ``sum`` accumulated in float32 (``sum += x``) and
``count`` the number of in-bounds taps; L2 is ``sqrtf(sum / count)`` with
``sum += x * x`` (a float32 product, then a float32 addition, no fused
multiply-add). A padded tap adds +0.0, which never changes a float32 sum
that starts at +0.0. The loop runs over window taps, not over data.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import shape4
from hexnn_import.ops.kernels.float_common import f32_out, f32_tensor
from hexnn_import.ops.registry import Kernel, KernelContext, register
from hexnn_import.ops.windows import Axis, axis_geometry


def pool_geometry(ctx: KernelContext, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, Axis, Axis]:
    """Read ``(float32 data, row axis, column axis)`` and check window and stride shapes."""
    data, window, stride = inputs
    x = f32_tensor(ctx, data, "input data")
    wb, fh, fw, wd = shape4(ctx, window, "window shape")
    sb, sh, sw, sd = shape4(ctx, stride, "stride shape")
    if (wb, wd, sb, sd) != (1, 1, 1, 1):
        raise ctx.fail(f"window shape {[wb, fh, fw, wd]} and stride shape {[sb, sh, sw, sd]} "
                       "must be 1 on the batch and depth axes")
    if x.size == 0:
        raise ctx.fail(f"input data has shape {list(x.shape)}, with no elements to pool")
    return x, axis_geometry(ctx, x.shape[1], fh, sh), axis_geometry(ctx, x.shape[2], fw, sw)


def window_taps(x: np.ndarray, rows: Axis, cols: Axis, fill: float) -> list[np.ndarray]:
    """The ``fh * fw`` tap views ``[b, out_h, out_w, d]`` of ``x`` padded with ``fill``, in row-major tap order."""
    pad = ((0, 0), (rows.before, rows.after), (cols.before, cols.after), (0, 0))
    xp = np.pad(x, pad, mode="constant", constant_values=fill)
    h_end, w_end = (rows.out - 1) * rows.stride + 1, (cols.out - 1) * cols.stride + 1
    return [xp[:, i:i + h_end:rows.stride, j:j + w_end:cols.stride]
            for i in range(rows.window) for j in range(cols.window)]


def tap_counts(rows: Axis, cols: Axis) -> np.ndarray:
    """In-bounds taps per output position as float32 ``[1, out_h, out_w, 1]`` (each >= 1)."""
    cnt = rows.tap_counts()[:, None] * cols.tap_counts()[None, :]
    return cnt.astype(np.float32)[None, :, :, None]


@register("MaxPool_f")
class MaxPoolF(Kernel):
    """Max over each window's in-bounds taps (``if (x > max) max = x`` from -Inf, see module docstring)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x, rows, cols = pool_geometry(ctx, inputs)
        taps = window_taps(x, rows, cols, fill=-np.inf)
        best = np.full(taps[0].shape, -np.inf, dtype=np.float32)
        for t in taps:
            best = np.where(t > best, t, best)
        return (f32_out(best),)


@register("AvgPool_f")
class AvgPoolF(Kernel):
    """Mean over each window's in-bounds taps: float32 ``sum / count`` (see module docstring)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x, rows, cols = pool_geometry(ctx, inputs)
        total = np.zeros((x.shape[0], rows.out, cols.out, x.shape[3]), dtype=np.float32)
        with np.errstate(all="ignore"):
            for t in window_taps(x, rows, cols, fill=0.0):
                total += t
            return (f32_out(total / tap_counts(rows, cols)),)


@register("L2Pool_f")
class L2PoolF(Kernel):
    """Root mean square over each window's in-bounds taps: float32 ``sqrt(sum(x*x) / count)``."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x, rows, cols = pool_geometry(ctx, inputs)
        total = np.zeros((x.shape[0], rows.out, cols.out, x.shape[3]), dtype=np.float32)
        with np.errstate(all="ignore"):
            for t in window_taps(x, rows, cols, fill=0.0):
                total += t * t
            return (f32_out(np.sqrt(total / tap_counts(rows, cols))),)
