"""Transpose_f/_int32, AxisShuffle_f/_int32, Reshape, Flatten, ExpandDims_f/_int32, Shape_int32, Rank_int32 (op texts).

Shape-level data movement without min/max: values are copied unchanged
(element type of the op's data slot; Reshape and Flatten keep whatever
numeric type they are given). The permutation and group-shuffle rules are
the quantized twins' (``kernels/transpose_tile.py``, ``kernels/shuffle.py``),
the reshape target rules QuantizedReshape's (``kernels/reshape.py``, op_reshape.c).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import shape4
from hexnn_import.ops.kernels.reshape import reshape_target_c
from hexnn_import.ops.kernels.shuffle import group_shuffle
from hexnn_import.ops.kernels.transpose_tile import control_permutation
from hexnn_import.ops.plain_io import plain_tensor, slot_dtype, typed_data
from hexnn_import.ops.registry import Kernel, KernelContext, register


@register("Transpose_f", "Transpose_int32")
class Transpose(Kernel):
    """Reorder axes: inputs data, control (``[1,1,1,n]``, a permutation of the last n axes), as op_transpose.c
    ``transpose_execute`` (src/gentranspose.c ``nn_transpose_check``: n = 0..4, 0 or 1 values leave the input as
    it is, where the op text says 2..4; checked on the device, issue 36).

    Output axis i is input axis ``perm[i]`` (numpy's convention, under which
    the text's ``[1,0,2]`` and ``[0,2,1,3]`` both swap h and w).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, control_arr = inputs
        x = plain_tensor(ctx, data, "input data", slot_dtype(self.spec.inputs[0]))
        perm = control_permutation(ctx, control_arr, x.shape)
        return (x.transpose(perm).copy(order="C"),)


@register("AxisShuffle_f", "AxisShuffle_int32")
class AxisShuffle(Kernel):
    """Group-transpose along an axis (as AxisShuffle_8): inputs data, axis (0..3, or -4..-1), groups.

    Along the axis of size ``g*k``: ``out[j*g + i] = in[i*k + j]``; the axis
    size must be a multiple of the number of groups.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axis_arr, groups_arr = inputs
        x = plain_tensor(ctx, data, "input data", slot_dtype(self.spec.inputs[0]))
        axis = int_param(ctx, axis_arr, "axis")
        if axis not in range(-4, 4):
            raise ctx.fail(f"axis {axis} names no dimension: 0..3 (b,h,w,d) or -4..-1 from the end")
        return (group_shuffle(ctx, x, axis % 4, int_param(ctx, groups_arr, "number of groups")),)


@register("Reshape")
class Reshape(Kernel):
    """Copy data of any numeric type into a new shape: inputs data, desired shape (1..4 int32).

    op_reshape.c ``reshape_execute``, as QuantizedReshape
    (:func:`~hexnn_import.ops.kernels.reshape.reshape_target_c`): the shape is left-padded with 1s, any
    negative value is the one unknown dimension (the op text says -1; checked on the device, issue 36), the
    element count must be unchanged.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, shape_arr = inputs
        x = typed_data(ctx, data, "input data", None)
        return (np.array(x.reshape(reshape_target_c(ctx, shape_arr, x.size)), copy=True),)


@register("Flatten")
class Flatten(Kernel):
    """Flatten data of any numeric type to ``[1,1,1,b*h*w*d]`` in row-major order (main document's text)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = typed_data(ctx, inputs[0], "input data", None)
        return (np.array(x.reshape(1, 1, 1, x.size), copy=True),)


def node_out_shape(ctx: KernelContext) -> tuple[int, ...] | None:
    """Output 0's shape from the node's output definition, when the caller hands it over.

    ``KernelContext`` carries it as an optional ``out_shapes`` attribute
    (one shape per output); None when absent.
    """
    shapes: Sequence[Sequence[int]] | None = getattr(ctx, "out_shapes", None)
    if not shapes:
        return None
    return tuple(int(n) for n in shapes[0])


@register("ExpandDims_f", "ExpandDims_int32")
class ExpandDims(Kernel):
    """Copy the data into the node's output shape (op text: "reshapes input data to match output shape").

    The op has no shape input: the shape is that of the node's output
    definition (``ctx.out_shapes[0]``, left-padded with 1s to 4-D); it must
    hold as many elements as the input. Without it the shape cannot be
    known, which is an error (as Split's part count without ``n_outputs``).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = plain_tensor(ctx, inputs[0], "input data", slot_dtype(self.spec.inputs[0]))
        shape = node_out_shape(ctx)
        if shape is None:
            raise ctx.fail("the node's output shape is unknown; ExpandDims takes its shape from the node's "
                           "output definition")
        if len(shape) > 4 or any(n < 1 for n in shape):
            raise ctx.fail(f"output shape {list(shape)} is not a shape of up to 4 dims, each >= 1")
        shape = (1,) * (4 - len(shape)) + shape
        if int(np.prod(shape, dtype=np.int64)) != x.size:
            raise ctx.fail(f"output shape {list(shape)} does not hold the input's {x.size} elements "
                           f"(input shape {list(x.shape)})")
        return (np.array(x.reshape(shape), copy=True),)


@register("Shape_int32")
class ShapeInt32(Kernel):
    """The input's shape ``{b,h,w,d}`` as a ``[1,1,1,4]`` int32 tensor (fewer dims are left-padded with 1s)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (np.asarray(shape4(ctx, inputs[0], "input"), dtype=np.int32).reshape(1, 1, 1, 4),)


@register("Rank_int32")
class RankInt32(Kernel):
    """Copy the int32 rank scalar (input 1) to a ``[1,1,1,1]`` output; input 0 is not read (op text)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (np.full((1, 1, 1, 1), int_param(ctx, inputs[1], "rank"), dtype=np.int32),)
