"""Index-finding ops on quint8 data: ArgMax_8toInt32, ArgMax_8, ArgMin_8, TopK_8.

ArgMax_8toInt32, ArgMax_8 and TopK_8 follow nnlib's C (op_argmax.c, op_topk_q.c): codes only, the input
range is not read (ArgMax) or copied unchecked (TopK); the axis is element 0 of the axis input, -4..3,
negative from the end (nn_axis.h); the reduced axis keeps size 1. Ties: the first index for ArgMax
(except the HVX ``dim == 128`` quirk of ArgMax_8toInt32, :func:`argmax_rows_hvx`), the LARGER index first
for TopK_8. ArgMin_8 (HVX only in nnlib, not modelled) keeps the op text's rules: a sane range, the first
index of the minimum.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.movement_io import copied_range, u8_tensor
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


def c_axis(ctx: KernelContext, arr: np.ndarray) -> int:
    """nn_axis.h ``handle_negative_axes``: element 0 of the axis input, -4..3, negative from the end."""
    axis = int(np.asarray(arr).reshape(-1)[0])
    if not -4 <= axis <= 3:
        raise ctx.fail(f"axis {axis} is outside -4..3")
    return axis % 4


def argmax_rows_hvx(rows: np.ndarray) -> np.ndarray:
    """op_argmax.c's HVX row kernels (stride-1 axis), one result per row of ``rows`` ``[n, dim]``.

    ``dim > 128`` (``horizontal_argmax_hvx``): the first index of the maximum. ``dim <= 128``
    (``horizontal_argmax128_hvx``): lanes are masked by ``Q6_Q_vsetq_R(dim)``, which keeps the first
    ``dim mod 128`` lanes, then the largest ``(value << 8) | (127 - lane)`` wins: the first index of the
    maximum, except that ``dim == 128`` masks every lane and always gives 0.
    """
    dim = rows.shape[1]
    if dim == 128:
        return np.zeros(rows.shape[0], np.int64)
    return np.argmax(rows, axis=1)


@register("ArgMax_8toInt32")
class ArgMax8toInt32(Kernel):
    """Index (int32) of the largest code along the axis: op_argmax.c ``argmax_execute_8toInt32``.

    Inputs: data, axis (-4..3), min, max (not read). The reduced axis keeps size 1. When every dim
    after the axis is 1 the device's HVX row kernels run (:func:`argmax_rows_hvx`, with its
    ``dim == 128`` quirk); otherwise the scalar loop: the first index of the maximum.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axis_arr = inputs[0], inputs[1]
        x = u8_tensor(ctx, data, "input data")   # empty: the C divides by zero
        axis = c_axis(ctx, axis_arr)
        out_shape = tuple(1 if i == axis else n for i, n in enumerate(x.shape))
        if int(np.prod(x.shape[axis + 1:])) == 1:
            res = argmax_rows_hvx(x.reshape(-1, x.shape[axis]))
        else:
            res = np.argmax(x, axis=axis)
        return (res.reshape(out_shape).astype(np.int32),)


@register("ArgMin_8")
class ArgMin8(Kernel):
    """Index (int32) of the smallest code along the axis; ties give the first index.

    Not checked against nnlib: op_argmin.c runs HVX only (src/argminmax.c). The input range must be
    sane, as the op text's inputs say.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axis_arr, mn_arr, mx_arr = inputs
        x = read_codes(ctx, data, mn_arr, mx_arr)
        axis = one_axis(ctx, axis_arr, x)
        return (arg_extreme(x, axis, False).astype(np.int32),)


@register("ArgMax_8")
class ArgMax8(Kernel):
    """Index of the largest code along the axis as a quint8 code, range ``[0, 255]``: op_argmax.c
    ``argmax_execute_8`` (scalar loop, first index of the maximum).

    As the C: an axis longer than 256 is an error; one of exactly 256 is refused too (the C's 8-bit loop
    counter never ends there). The input range is not read.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axis_arr = inputs[0], inputs[1]
        x = u8_tensor(ctx, data, "input data")   # empty: the C divides by zero
        axis = c_axis(ctx, axis_arr)
        if x.shape[axis] > ARGMAX_8_MAX_DIM:
            raise ctx.fail(f"axis {axis} has {x.shape[axis]} elements; ArgMax_8 needs fewer than 256 "
                           "(256 never ends in nnlib, more is an error)")
        return (np.argmax(x, axis=axis, keepdims=True).astype(np.uint8), *range_out(0.0, 255.0))


@register("TopK_8")
class TopK8(Kernel):
    """The k largest codes along depth with their int32 depth indices: op_topk_q.c ``topk_8_execute``.

    Output depth ``min(k, d)``; values descending. Ties as the C's histogram gives them: it scans each
    row from the END and keeps, per code, the first k positions it meets, then emits codes from 255
    down - so equal codes come with the LARGER index first. The range is copied unchecked (outputs 2,
    3). ``k = 0`` gives empty outputs ``[b,h,w,0]``, as the C; a negative k is refused (the C fails).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, k_arr, mn_arr, mx_arr = inputs
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        k = int(np.asarray(k_arr).reshape(-1)[0])
        if k < 0:
            raise ctx.fail(f"k = {k} is negative (nnlib's output is then too small)")
        d = x.shape[3]
        keep = min(k, d)
        # key = code * d + index: descending order gives codes descending, then larger index first
        key = x.astype(np.int64) * d + np.arange(d)
        order = np.argsort(-key, axis=3)[..., :keep]
        values = np.take_along_axis(x, order, axis=3)
        return (values, order.astype(np.int32), *copied_range(ctx, mn_arr, mx_arr))
