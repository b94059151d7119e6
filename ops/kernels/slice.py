"""QuantizedSlice_8 and QuantizedStridedSlice_8 on flat quint8 tensors (op_slice.c, op_stridedslice.c).

The helpers :func:`resolve_axis`, :func:`left_fill`, :func:`gather` keep the op texts' rules for the float /
int32 variants (``move_core``); the quint8 kernels follow the C (``slice_c``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.ops.kernels.slice_c import slice_c, strided_slice_c
from hexnn_import.ops.movement_io import copied_range, int32_words, param_depth, u8_tensor
from hexnn_import.ops.registry import Kernel, KernelContext, register

AXES = "BHWD"


def left_fill(values: list[int], fill: int) -> list[int]:
    """A list of k <= 4 per-dimension values applied to the *last* k of [b,h,w,d]."""
    return [fill] * (4 - len(values)) + values


def gather(x: np.ndarray, index: list[np.ndarray]) -> np.ndarray:
    """``x`` sampled at one index vector per axis (outer product), as a fresh array."""
    return x[np.ix_(*index)]


@register("QuantizedSlice_8")
class QuantizedSlice8(Kernel):
    """Copy the block ``[start, start + size)`` of quint8 data: op_slice.c ``slice_run`` / ``slice_prepare``.

    Inputs: data, start, size, min, max. start and size are ``[1,1,1,k]`` int32 tensors of the same
    shape, k = 1..4, applying to the last k dims (others whole); a size of -1 runs to the end. The copy,
    including the C's wrong batch stride when batches, height and width are all sliced
    (:func:`~kernels.slice_c.slice_c`), and the errors are the C's; the range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, start_arr, size_arr, mn_arr, mx_arr = inputs
        x = u8_tensor(ctx, data, "input data")
        sa, za = np.asarray(start_arr), np.asarray(size_arr)
        k = param_depth(sa)
        if sa.size != k or not 1 <= k <= 4 or sa.shape != za.shape:
            raise ctx.fail(f"bad size/shape spec for slice: start {list(sa.shape)}, size {list(za.shape)} "
                           "(both [1,1,1,k], k = 1..4)")
        starts = [int(v) for v in int32_words(ctx, sa, "start")]
        sizes = [int(v) for v in int32_words(ctx, za, "size")]
        return (slice_c(ctx, x, starts, sizes), *copied_range(ctx, mn_arr, mx_arr))


@dataclass(frozen=True)
class AxisSlice:
    """The resolved slicing of one dimension: sampled at ``begin + i*step``, ``i < size``."""

    begin: int
    step: int
    size: int
    shrink: bool

    def index(self) -> np.ndarray:
        """The input indices sampled, in output order."""
        return self.begin + self.step * np.arange(self.size)


def resolve_axis(ctx: KernelContext, axis: int, n: int, begin: int, end: int, step: int,
                 begin_mask: int, end_mask: int, shrink_mask: int) -> AxisSlice:
    """Apply the mask rules of QuantizedStridedSlice_8's text to one dimension and check it.

    Shrink: step 1, end = begin + 1 (begin/end masks ignored). Otherwise
    begin_mask sets begin to 0 (step > 0) or n-1 (step < 0), end_mask sets
    end to n (step > 0) or -1 (step < 0). Then step != 0; step > 0 needs
    end > begin and gives ceil((end-begin)/step) samples, step < 0 needs
    end < begin and gives ceil((begin-end)/-step); every sample must lie in
    0..n-1. Indices are literal positions, never wrapped (see the class).
    """
    bit = 1 << axis
    name = AXES[axis]
    shrink = bool(shrink_mask & bit)
    if shrink:
        step, end = 1, begin + 1
    else:
        if step == 0:
            raise ctx.fail(f"step on {name} is 0; step cannot be 0")
        if begin_mask & bit:
            begin = 0 if step > 0 else n - 1
        if end_mask & bit:
            end = n if step > 0 else -1
    if step > 0 and end <= begin:
        raise ctx.fail(f"on {name}: step {step} >= 1 needs end > begin, got begin {begin}, end {end}")
    if step < 0 and end >= begin:
        raise ctx.fail(f"on {name}: step {step} <= -1 needs end < begin, got begin {begin}, end {end}")
    size = -(-abs(end - begin) // abs(step))  # ceil(|end - begin| / |step|)
    last = begin + (size - 1) * step
    if not (0 <= begin < n and 0 <= last < n):
        raise ctx.fail(f"on {name}: samples {begin}, {begin + step}, ... {last} leave the input's 0..{n - 1}")
    return AxisSlice(begin, step, size, shrink)


def strided_params(ctx: KernelContext, begin_arr: np.ndarray, end_arr: np.ndarray,
                   step_arr: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """op_stridedslice.c ``strided_slice_impl``'s reads: ``order`` = the begin tensor's depth; begin, end and
    step are read at elements ``order-4 .. order-1`` (those >= 0), i.e. the last ``min(order, 4)`` of the
    first ``order`` values of each. Extra values of end/step are ignored; fewer than ``order`` values are
    refused (the C reads past the tensor then)."""
    order = param_depth(begin_arr)
    vals = []
    for arr, what in ((begin_arr, "begin"), (end_arr, "end"), (step_arr, "step")):
        v = int32_words(ctx, arr, what)
        if v.size < order:
            raise ctx.fail(f"{what} has {v.size} values, fewer than begin's depth {order} "
                           "(nnlib would read past it)")
        vals.append([int(x) for x in v[max(0, order - 4):order]])
    return vals[0], vals[1], vals[2]


@register("QuantizedStridedSlice_8")
class QuantizedStridedSlice8(Kernel):
    """Strided slice of quint8 data with masks: op_stridedslice.c ``sslice_execute_q8``.

    Inputs: data, begin, end, step (int32 values for the last k dims, read as :func:`strided_params`),
    begin_mask, end_mask, shrink_mask (element 0 of each), min, max. Indices, masks and errors follow
    :func:`~kernels.slice_c.strided_slice_c` (negative begin/end count from the end and are clamped,
    TF style; mask bits past 3 are ignored); the range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, begin_arr, end_arr, step_arr, bm_arr, em_arr, sm_arr, mn_arr, mx_arr = inputs
        x = u8_tensor(ctx, data, "input data")
        begins, ends, steps = strided_params(ctx, begin_arr, end_arr, step_arr)
        masks = tuple(int(int32_words(ctx, a, w)[0]) for a, w in ((bm_arr, "begin_mask"), (em_arr, "end_mask"),
                                                                   (sm_arr, "shrink_mask")))
        out = strided_slice_c(ctx, x, begins, ends, steps, masks)  # type: ignore[arg-type]
        return (out, *copied_range(ctx, mn_arr, mx_arr))
