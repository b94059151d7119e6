"""Transpose_8 and QuantizedTile_8 on flat quint8 tensors (op texts; SEMANTICS.md §6)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import range_out
from hexnn_import.ops.movement_io import check_out_shape, int_list, u8_tensor
from hexnn_import.ops.registry import Kernel, KernelContext, register


def full_permutation(ctx: KernelContext, control: list[int]) -> tuple[int, ...]:
    """The 4-axis permutation of a k-axis control (k = 2..4) acting on the last k dims.

    Op text: the control holds 0..k-1 in some order, no repeats; ``[1,0,2]``
    swaps h and w, as ``[0,2,1,3]`` does.
    """
    k = len(control)
    if sorted(control) != list(range(k)):
        raise ctx.fail(f"control {control} must hold the integers 0..{k - 1} in some order, no repeats")
    lead = 4 - k
    return tuple(range(lead)) + tuple(lead + c for c in control)


@register("Transpose_8")
class Transpose8(Kernel):
    """Reorder the axes of quint8 data; the range passes through.

    Inputs: data, control (k = 2, 3 or 4 int32 values, :func:`full_permutation`),
    min, max. Output axis i is input axis ``perm[i]`` (numpy's transpose
    convention, which makes ``[1,0,2]`` swap h and w as the text says). A
    control of another length is an error, as the text allows only 2..4.
    The input range must be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, control_arr, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_tensor(ctx, data, "input data")
        perm = full_permutation(ctx, int_list(ctx, control_arr, "control", 2, 4))
        return (np.ascontiguousarray(x.transpose(perm)), *range_out(mn, mx))


@register("QuantizedTile_8")
class QuantizedTile8(Kernel):
    """Replicate quint8 data along each dimension; the range passes through.

    Inputs: data, multiples (1..4 int32 values for b,h,w,d, left-filled with
    1s when shorter, op text), min, max. Output position ``j`` of an axis of
    size n reads input position ``j mod n``. Choice where the text is silent:
    every multiple must be >= 1 (0 would make an empty tensor). The input
    range must be sane.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mult_arr, mn_arr, mx_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        x = u8_tensor(ctx, data, "input data")
        mult = int_list(ctx, mult_arr, "multiples")
        mult = [1] * (4 - len(mult)) + mult
        if any(m < 1 for m in mult):
            raise ctx.fail(f"multiples {mult} must all be >= 1")
        check_out_shape(ctx, tuple(n * m for n, m in zip(x.shape, mult)))
        index = [np.arange(n * m) % n for n, m in zip(x.shape, mult)]
        return (x[np.ix_(*index)], *range_out(mn, mx))
