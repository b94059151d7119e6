"""Index-finding ops on float data: ArgMax_ftoInt32 and TopK_f (hexagon_nn_ops.txt).

Both order float values, which NaN has no place in: NaN in the data is an
error (+-Inf order as usual). Ties give the lowest index first, as
hexagon_nn's ``if (x > max)`` scan and a stable sort do, and as the quint8
variants of these ops in ``argmax.py`` do.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernels.argmax import arg_extreme, one_axis
from hexnn_import.ops.kernels.float_common import f32_tensor, no_nan
from hexnn_import.ops.registry import Kernel, KernelContext, register

_WHY = "has no place in an ordering of the values"


@register("ArgMax_ftoInt32")
class ArgMaxFtoInt32(Kernel):
    """Index (int32) of the largest value along the axis; the axis keeps size 1 (hexagon_nn's output shape).

    The axis (input 1, int32 scalar) is one of -4..3, negative values counted
    from the end; an empty axis is an error. First index among equals.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axis_arr = inputs
        x = no_nan(ctx, f32_tensor(ctx, data, "input data"), "input data", _WHY)
        axis = one_axis(ctx, axis_arr, x)
        return (np.ascontiguousarray(arg_extreme(x, axis, True), dtype=np.int32),)


@register("TopK_f")
class TopKF(Kernel):
    """The k largest values along depth, descending, with their int32 depth indices (op text).

    Output depth is ``min(k, d)`` ("if depth is smaller than k, then the
    depth dimension size is unchanged"); ``values == take(data, indices)``
    along depth. Choices where the text is silent: equal values are ordered
    by lower index first (a stable sort); ``k < 1`` is an error.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, k_arr = inputs
        x = no_nan(ctx, f32_tensor(ctx, data, "input data"), "input data", _WHY)
        k = ctx.int_scalar(k_arr, "k")
        if k < 1:
            raise ctx.fail(f"k = {k}, it must be at least 1")
        keep = min(k, x.shape[3])
        # Stable sort of the negated values: descending, lower index first among equals
        # (negation is exact in float32 and maps +-Inf to -+Inf).
        order = np.argsort(-x, axis=3, kind="stable")[..., :keep]
        values = np.take_along_axis(x, order, axis=3)
        return (np.ascontiguousarray(values), order.astype(np.int32))
