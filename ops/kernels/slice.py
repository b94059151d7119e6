"""QuantizedSlice_8 and QuantizedStridedSlice_8 on flat quint8 tensors (op texts; SEMANTICS.md §6)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.movement_io import int_list, u8_tensor
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
    """Copy the block ``[start, start + size)`` of quint8 data; the range passes through.

    Inputs: data, start, size (k = 1..4 int32 each, the same count), min,
    max. With k < 4 the values apply to the last k dimensions and the others
    are taken whole (start 0, size -1), as the op text's ``[2,0] / [4,-1]``
    example shows. A size of -1 means "to the end of the dimension". Choices
    where the text is silent: every start must lie inside its dimension, every
    size must be -1 or >= 1 and reach no further than the dimension's end (an
    empty output is an error, as a hexagon_nn tensor has no 0-sized dims).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, start_arr, size_arr, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_tensor(ctx, data, "input data")
        starts = int_list(ctx, start_arr, "start")
        sizes = int_list(ctx, size_arr, "size")
        if len(starts) != len(sizes):
            raise ctx.fail(f"start has {len(starts)} values and size {len(sizes)}; they must match")
        index = []
        for axis, (n, b, s) in enumerate(zip(x.shape, left_fill(starts, 0), left_fill(sizes, -1))):
            if not 0 <= b < n:
                raise ctx.fail(f"start {b} on {AXES[axis]} is outside the input's 0..{n - 1} "
                               f"(input shape {list(x.shape)})")
            if s == -1:
                s = n - b
            if s < 1 or b + s > n:
                raise ctx.fail(f"size {s} from start {b} on {AXES[axis]} does not fit the input's {n} "
                               f"(input shape {list(x.shape)}); sizes are -1 or 1..{n - b}")
            index.append(np.arange(b, b + s))
        return (gather(x, index), *range_out(mn, mx))


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


@register("QuantizedStridedSlice_8")
class QuantizedStridedSlice8(Kernel):
    """Strided slice of quint8 data with begin/end/shrink masks; the range passes through.

    Inputs: data, begin, end, step (k = 1..4 int32 each, the same count),
    begin_mask, end_mask, shrink_mask, min, max (all 9 present: min/max
    follow the masks). Follows the op text literally:

    - with k < 4 the values apply to the last k dims; the others take
      begin 0, end = size, step 1;
    - mask bits 0, 1, 2, 3 mean B, H, W, D regardless of k (a shrink bit on
      a dim not covered by k keeps index 0 of it);
    - per dimension, :func:`resolve_axis` (shrink, then begin/end masks, then
      the step/size/in-range rules);
    - shrunk dims are squeezed out and the shape is left-padded with 1s:
      ``(b,h,w,d) -> (1,b',h',d')`` for shrink_mask 4.

    Choices where the text is silent: indices are literal, not wrapped like
    TF/Python negative indices - the text's reverse-slice condition
    ``-1 <= end < begin`` (and end_mask's ``end = -1``) only make sense so;
    a negative begin is therefore out of range (importers resolve TF/ONNX
    negative indices before building the node). Mask values must lie in
    0..15 (only bits 0..3 have a meaning). The input range must be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, begin_arr, end_arr, step_arr, bm_arr, em_arr, sm_arr, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_tensor(ctx, data, "input data")
        begins = int_list(ctx, begin_arr, "begin")
        ends = int_list(ctx, end_arr, "end")
        steps = int_list(ctx, step_arr, "step")
        if not len(begins) == len(ends) == len(steps):
            raise ctx.fail(f"begin, end and step hold {len(begins)}, {len(ends)} and {len(steps)} values; "
                           "they must match")
        masks = []
        for arr, what in ((bm_arr, "begin_mask"), (em_arr, "end_mask"), (sm_arr, "shrink_mask")):
            m = int_param(ctx, arr, what)
            if not 0 <= m <= 15:
                raise ctx.fail(f"{what} is {m}; only bits 0..3 (B,H,W,D) exist, so 0..15")
            masks.append(m)
        k = len(begins)
        full_b = [0] * (4 - k) + begins
        full_e = list(x.shape[:4 - k]) + ends
        full_s = [1] * (4 - k) + steps
        axes = [resolve_axis(ctx, i, x.shape[i], full_b[i], full_e[i], full_s[i], *masks) for i in range(4)]
        out = gather(x, [a.index() for a in axes])
        kept = [a.size for a in axes if not a.shrink]
        return (out.reshape(tuple(left_fill(kept, 1))), *range_out(mn, mx))
