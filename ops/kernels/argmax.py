"""Index-finding ops on quint8 data: ArgMax_8toInt32, ArgMax_8, ArgMin_8, TopK_8
(hexagon_nn_ops.txt; codes per SEMANTICS.md §1).

The step of a sane range is positive, so comparing codes orders the real
values exactly: every op here works on the codes alone. Shared choices where
the documents are silent: the input range must still be sane (it is a
documented input); the axis is one of -4..3 of the 4-D tensor, negative
values counted from the end "pythonically" as ArgMax_8's text says (its
stated upper bound ``4`` is not an axis of a 4-D tensor and is an error);
the reduced axis keeps size 1 so outputs stay 4-D; ties give the first
(lowest) index, as numpy and TFLite do.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: ArgMax_8's text: "It can only be used in the condition of dimension[axis] < 256".
ARGMAX_8_MAX_DIM = 255


def read_codes(ctx: KernelContext, data: np.ndarray, mn_arr: np.ndarray, mx_arr: np.ndarray) -> np.ndarray:
    """quint8 4-D codes, after checking their range is sane."""
    ctx.sane_range(mn_arr, mx_arr, "input")
    return require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")


def one_axis(ctx: KernelContext, arr: np.ndarray, x: np.ndarray) -> int:
    """The axis (0..3) named by a scalar axis input; the axis must not be empty."""
    axis = ctx.int_scalar(arr, "axis")
    if not -4 <= axis <= 3:
        raise ctx.fail(f"axis {axis} is outside -4..3 of a 4-D tensor")
    axis %= 4
    if x.shape[axis] == 0:
        raise ctx.fail(f"input data has shape {list(x.shape)}: axis {axis} is empty, it has no extremum")
    return axis


def arg_extreme(x: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    """First index of the max (or min) along ``axis``, kept as a size-1 axis (int64)."""
    pick = np.argmax if largest else np.argmin
    return pick(x, axis=axis, keepdims=True)


class _ArgInt32(Kernel):
    """Inputs: data, axis (int32 scalar), min, max; output: int32 indices."""

    largest: bool = True

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axis_arr, mn_arr, mx_arr = inputs
        x = read_codes(ctx, data, mn_arr, mx_arr)
        axis = one_axis(ctx, axis_arr, x)
        return (arg_extreme(x, axis, self.largest).astype(np.int32),)


@register("ArgMax_8toInt32")
class ArgMax8toInt32(_ArgInt32):
    """Index (int32) of the largest code along the axis; ties give the first index."""

    largest = True


@register("ArgMin_8")
class ArgMin8(_ArgInt32):
    """Index (int32) of the smallest code along the axis; ties give the first index."""

    largest = False


@register("ArgMax_8")
class ArgMax8(Kernel):
    """Index of the largest code along the axis as a quint8 code, range ``[0, 255]``.

    The op text limits the axis to fewer than 256 elements (larger is an
    error). Choice where the documents are silent: the output range is
    ``[0, 255]``, step 1 and zero code 0, so each code dequantizes to the
    index itself.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axis_arr, mn_arr, mx_arr = inputs
        x = read_codes(ctx, data, mn_arr, mx_arr)
        axis = one_axis(ctx, axis_arr, x)
        if x.shape[axis] > ARGMAX_8_MAX_DIM:
            raise ctx.fail(f"axis {axis} has {x.shape[axis]} elements; ArgMax_8 needs fewer than 256 "
                           "(its index is 8-bit)")
        return (arg_extreme(x, axis, True).astype(np.uint8), *range_out(0.0, 255.0))


@register("TopK_8")
class TopK8(Kernel):
    """The k largest codes along depth, descending, with their int32 depth indices.

    Output depth is ``min(k, d)`` ("if depth is smaller than k, then the depth
    dimension size is unchanged"); ``values == take(data, indices)`` along
    depth; the range passes through (outputs 2, 3, "same value as input").
    Choices where the documents are silent: equal codes are ordered by lower
    index first (a stable sort); ``k < 1`` is an error; indices are int32 as
    the catalog records (TopK_f's text; the TopK_8 text's "quint8" could not
    hold every depth index).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, k_arr, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        k = ctx.int_scalar(k_arr, "k")
        if k < 1:
            raise ctx.fail(f"k = {k}, it must be at least 1")
        keep = min(k, x.shape[3])
        # Stable sort of the negated codes: descending values, lower index first among equals.
        order = np.argsort(-x.astype(np.int16), axis=3, kind="stable")[..., :keep]
        values = np.take_along_axis(x, order, axis=3)
        return (values, order.astype(np.int32), *range_out(mn, mx))
