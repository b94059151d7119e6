"""Transpose_8 and QuantizedTile_8 on flat quint8 tensors (op_transpose.c + src/gentranspose.c, op_tile.c).

:func:`control_permutation` reads the control as op_transpose.c ``transpose_execute`` does for every element type
(Transpose_8 / _16 / _f / _int32)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.movement_io import check_out_shape, copied_range, int32_words, u8_tensor
from hexnn_import.ops.registry import Kernel, KernelContext, register


def transpose_check(ctx: KernelContext, perm: list[int], shape: tuple[int, ...]) -> tuple[int, ...]:
    """src/gentranspose.c ``nn_transpose_check``: the 4-axis permutation for a control of n = 0..4 values.

    Each value must be in 0..n-1 without repeats; it permutes the last n dims (n = 0 or 1: no change).
    """
    n = len(perm)
    if n > 4 or any(not 0 <= k < n for k in perm) or len(set(perm)) != n:
        raise ctx.fail(f"bad transpose control {perm}: it must hold 0..{n - 1}, no repeats (input shape {list(shape)})")
    return tuple(range(4 - n)) + tuple(4 - n + k for k in perm)


def control_permutation(ctx: KernelContext, control_arr: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...]:
    """op_transpose.c ``transpose_execute``: the control must be ``[1,1,1,n]`` ("dims !1d"), its n int32 values
    (n = 0..4) checked by :func:`transpose_check` (0 or 1 values: the input unchanged)."""
    ctl = np.asarray(control_arr)
    if ctl.ndim == 4 and ctl.shape[:3] != (1, 1, 1):
        raise ctx.fail(f"transpose control has shape {list(ctl.shape)}; it must be [1,1,1,n]")
    return transpose_check(ctx, [int(v) for v in int32_words(ctx, ctl, "control")], shape)


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
        perm = control_permutation(ctx, control_arr, x.shape)
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
