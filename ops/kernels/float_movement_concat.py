"""Concat_f, ConcatV2_f, ConcatV2_int32, Split_f, Split_int32, Pack_f, Pack_int32 (op texts; SEMANTICS.md §6).

Plain data movement on float32 / int32 tensors without min/max: values are
copied bit for bit, the element type is the op's (its catalog data slot).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.movement_io import check_out_shape, dim_param
from hexnn_import.ops.plain_io import plain_tensor, slot_dtype
from hexnn_import.ops.registry import Kernel, KernelContext, register


def concat_along(ctx: KernelContext, datas: list[np.ndarray], dim: int) -> np.ndarray:
    """Concatenate 4-D tensors on ``dim``; every other dimension must match input 0's (op text)."""
    first = datas[0].shape
    for i, x in enumerate(datas):
        if x.shape[:dim] + x.shape[dim + 1:] != first[:dim] + first[dim + 1:]:
            raise ctx.fail(f"data input {i} has shape {list(x.shape)}, data input 0 has {list(first)}: "
                           f"dimensions must match except on the concatenation dimension {dim}")
    check_out_shape(ctx, first[:dim] + (sum(x.shape[dim] for x in datas),) + first[dim + 1:])
    return np.concatenate(datas, axis=dim)


@register("Concat_f")
class ConcatF(Kernel):
    """Concatenate float tensors along dimension 0..3 (b,h,w,d); inputs: dimension, then N data tensors.

    Unlike QuantizedConcat_8, any of the four dimensions is allowed (the
    Concat_f text lists them all); values are copied unchanged.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        dtype = slot_dtype(self.spec.inputs[1])
        dim = dim_param(ctx, inputs[0], "dimension")
        datas = [plain_tensor(ctx, x, f"data input {i}", dtype) for i, x in enumerate(inputs[1:])]
        return (concat_along(ctx, datas, dim),)


@register("ConcatV2_f", "ConcatV2_int32")
class ConcatV2(Kernel):
    """As Concat_f, with the dimension input last: inputs are N data tensors, then the dimension."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        dtype = slot_dtype(self.spec.inputs[0])
        dim = dim_param(ctx, inputs[-1], "dimension (last input)")
        datas = [plain_tensor(ctx, x, f"data input {i}", dtype) for i, x in enumerate(inputs[:-1])]
        return (concat_along(ctx, datas, dim),)


@register("Split_f", "Split_int32")
class Split(Kernel):
    """Split a tensor into N equal parts along dimension 0..3; inputs: dimension, data.

    N is the node's declared output count (``ctx.n_outputs``); a call
    without it is an error, since N cannot be guessed. The dimension's size
    must be divisible by N (op text). Every part is a fresh copy.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        dim_arr, data = inputs
        if ctx.n_outputs is None:
            raise ctx.fail("N, the number of parts, is the node's output count, which this call does not give")
        n = ctx.n_outputs
        if n < 1:
            raise ctx.fail(f"the node declares {n} outputs; the op gives N parts, N >= 1")
        dim = dim_param(ctx, dim_arr, "dimension")
        x = plain_tensor(ctx, data, "input data", slot_dtype(self.spec.inputs[1]))
        if x.shape[dim] % n:
            raise ctx.fail(f"{n} equal parts do not divide size {x.shape[dim]} of dimension {dim} "
                           f"(input data shape {list(x.shape)})")
        return tuple(np.array(p, copy=True) for p in np.split(x, n, axis=dim))


@register("Pack_f", "Pack_int32")
class Pack(Kernel):
    """Stack n equal-shaped tensors: the rightmost 1 of their shape becomes n (op text).

    The data is the n inputs one after the other (``np.stack`` on a new
    leading axis), given the shape with its rightmost 1 replaced by n; when
    dims > 1 stand left of that 1 this orders the data "as for" stacking in
    front, exactly as the text's NOTE describes ([1,5,1,100] x 3 gives shape
    [1,5,3,100] holding the data of [3,5,1,100]) - reproduced, not refused.
    A shape without any 1 has nowhere to put n and is an error.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        dtype = slot_dtype(self.spec.inputs[0])
        datas = [plain_tensor(ctx, x, f"data input {i}", dtype) for i, x in enumerate(inputs)]
        shape = datas[0].shape
        for i, x in enumerate(datas):
            if x.shape != shape:
                raise ctx.fail(f"data input {i} has shape {list(x.shape)}, data input 0 has {list(shape)}; "
                               "all inputs must have the same shape")
        ones = [axis for axis, n in enumerate(shape) if n == 1]
        if not ones:
            raise ctx.fail(f"input shape {list(shape)} has no dimension of size 1 to hold the {len(datas)} inputs")
        out_shape = shape[:ones[-1]] + (len(datas),) + shape[ones[-1] + 1:]
        check_out_shape(ctx, out_shape)
        return (np.stack(datas).reshape(out_shape),)
