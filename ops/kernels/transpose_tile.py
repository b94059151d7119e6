"""Transpose_8 and QuantizedTile_8 on flat quint8 tensors (op_transpose.c + src/gentranspose.c, op_tile.c).

:func:`full_permutation` keeps the op text's rule (k = 2..4) for the float / int32 Transpose
(``float_movement_shape``)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.movement_io import check_out_shape, copied_range, int32_words, u8_tensor
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


def transpose_check(ctx: KernelContext, perm: list[int], shape: tuple[int, ...]) -> tuple[int, ...]:
    """src/gentranspose.c ``nn_transpose_check``: the 4-axis permutation for a control of n = 0..4 values.

    Each value must be in 0..n-1 without repeats; it permutes the last n dims (n = 0 or 1: no change).
    """
    n = len(perm)
    if n > 4 or any(not 0 <= k < n for k in perm) or len(set(perm)) != n:
        raise ctx.fail(f"bad transpose control {perm}: it must hold 0..{n - 1}, no repeats (input shape {list(shape)})")
    return tuple(range(4 - n)) + tuple(4 - n + k for k in perm)


@register("Transpose_8")
class Transpose8(Kernel):
    """Reorder the axes of quint8 data: op_transpose.c ``transpose_execute`` (src/gentranspose.c).

    Inputs: data, control (a ``[1,1,1,n]`` int32 tensor, n = 0..4, :func:`transpose_check`), min, max.
    Output axis i is input axis ``perm[i]``. The C moves the bytes through a strategy table (scalar
    strided copies or HVX kernels); the result is this permutation. The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, control_arr, mn_arr, mx_arr = inputs
        x = u8_tensor(ctx, data, "input data")
        ctl = np.asarray(control_arr)
        if ctl.ndim == 4 and ctl.shape[:3] != (1, 1, 1):
            raise ctx.fail(f"transpose control has shape {list(ctl.shape)}; it must be [1,1,1,n]")
        perm = transpose_check(ctx, [int(v) for v in int32_words(ctx, ctl, "control")], x.shape)
        return (np.ascontiguousarray(x.transpose(perm)), *copied_range(ctx, mn_arr, mx_arr))


@register("QuantizedTile_8")
class QuantizedTile8(Kernel):
    """Replicate quint8 data along each dimension: op_tile.c ``tile_execute``.

    Inputs: data, multiples (n int32 values: d = last, w = the one before, h = third from last, b =
    the first when n > 3), min, max. Output position ``j`` of an axis of size s reads ``j mod s``. The C
    does not check the multiples; one below 1 makes it write past its output (memory corruption), so it
    is refused here. The range is copied unchecked.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mult_arr, mn_arr, mx_arr = inputs
        x = u8_tensor(ctx, data, "input data")
        m = [int(v) for v in int32_words(ctx, mult_arr, "multiples")]
        k = len(m)
        if k < 1:
            raise ctx.fail("multiples is empty")
        mult = [m[0] if k > 3 else 1, m[k - 3] if k > 2 else 1, m[k - 2] if k > 1 else 1, m[k - 1]]
        if any(v < 1 for v in mult):
            raise ctx.fail(f"multiples {mult} must all be >= 1 (nnlib would write past its output)")
        check_out_shape(ctx, tuple(n * v for n, v in zip(x.shape, mult)))
        return (np.tile(x, mult), *copied_range(ctx, mn_arr, mx_arr))
