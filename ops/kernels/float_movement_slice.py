"""Slice_f, Slice_int32, Slice_8, StridedSlice_f, StridedSlice_int32, StridedSlice_uint8 (op texts; SEMANTICS.md §6).

Plain data movement without min/max; the element type is the op's (its
catalog data slot: float32, int32 or uint8) and values are copied unchanged.
The slicing rules are those of the quantized twins QuantizedSlice_8 and
QuantizedStridedSlice_8, shared through :mod:`~hexnn_import.ops.kernels.move_core`.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernels.move_core import block_slice, strided_slice
from hexnn_import.ops.movement_io import int_list
from hexnn_import.ops.plain_io import plain_tensor, slot_dtype
from hexnn_import.ops.registry import Kernel, KernelContext, register


@register("Slice_f", "Slice_int32", "Slice_8")
class Slice(Kernel):
    """Copy the block ``[start, start + size)``: inputs data, start, size (k = 1..4 values each).

    With k < 4 the values apply to the last k dims and the others are taken
    whole (the text's ``start [2,0] / size [4,-1]`` example); size -1 runs to
    the end of the dim. Choices where the text is silent (as QuantizedSlice_8):
    every start lies inside its dim, every block fits and is non-empty.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, start_arr, size_arr = inputs
        x = plain_tensor(ctx, data, "input data", slot_dtype(self.spec.inputs[0]))
        return (block_slice(ctx, x, int_list(ctx, start_arr, "start"), int_list(ctx, size_arr, "size")),)


@register("StridedSlice_f", "StridedSlice_int32", "StridedSlice_uint8")
class StridedSlice(Kernel):
    """Strided slice with optional begin/end/shrink masks (4 or 7 inputs; the masks come together).

    Inputs: data, begin, end, step (k = 1..4 values each, applied to the last
    k dims), then optionally begin_mask, end_mask, shrink_mask (default 0).
    Same rules as QuantizedStridedSlice_8 (see
    :func:`~hexnn_import.ops.kernels.move_core.strided_slice`): mask bits
    0..3 are B,H,W,D; shrunk dims are squeezed out and the shape left-padded
    with 1s; indices are literal (no Python-style wrapping of negatives), so
    every sample must lie inside the input.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, begin_arr, end_arr, step_arr = inputs[:4]
        x = plain_tensor(ctx, data, "input data", slot_dtype(self.spec.inputs[0]))
        return (strided_slice(ctx, x, begin_arr, end_arr, step_arr, tuple(inputs[4:])),)
