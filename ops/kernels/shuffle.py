"""AxisShuffle_8 and QuantizedChannelShuffle_8: grouped transposes along one axis (op texts; SEMANTICS.md §6).

Along the chosen axis of size ``n = g * k`` (``g`` = number of groups) the
elements are viewed as ``[g, k]``, transposed to ``[k, g]`` and flattened:
``out[j*g + i] = in[i*k + j]``. This is AxisShuffle_8's "reshape
``[..,wa*wb,..] -> [..,wa,wb,..]``, transpose, reshape" with ``wa`` = the
number of groups, and QuantizedChannelShuffle_8's "divide the channel
dimension into num_groups groups, and reorganize the channels by grouping
channels with the same index in each group". Data moves; the input range
must be sane and passes through.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import require_4d, u8_codes
from hexnn_import.ops.movement_io import copied_range
from hexnn_import.ops.registry import Kernel, KernelContext, register


def group_shuffle(ctx: KernelContext, x: np.ndarray, axis: int, groups: int) -> np.ndarray:
    """``[.., g*k, ..] -> [.., g, k, ..] -> [.., k, g, ..] -> [.., k*g, ..]`` along ``axis`` (0..3)."""
    n = x.shape[axis]
    if groups < 1 or n % groups:
        raise ctx.fail(f"number of groups {groups} must be >= 1 and divide the size {n} of axis {axis}")
    split = x.shape[:axis] + (groups, n // groups) + x.shape[axis + 1:]
    y = np.swapaxes(x.reshape(split), axis, axis + 1)
    return np.ascontiguousarray(y).reshape(x.shape)


@register("AxisShuffle_8")
class AxisShuffle8(Kernel):
    """Group-transpose quint8 data along an axis: op_axisshuffle.c ``axisshuffle_execute``.

    Inputs: data, axis (-4..3, negative from the end), number of groups (>= 1, dividing the axis),
    min, max (copied unchecked).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, axis_arr, groups_arr, mn_arr, mx_arr = inputs
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        axis = int(np.asarray(axis_arr).reshape(-1)[0])
        if not -4 <= axis <= 3:
            raise ctx.fail(f"axis {axis} is out of range -4..3")
        groups = int(np.asarray(groups_arr).reshape(-1)[0])
        return (group_shuffle(ctx, x, axis % 4, groups), *copied_range(ctx, mn_arr, mx_arr))


@register("QuantizedChannelShuffle_8")
class QuantizedChannelShuffle8(Kernel):
    """Channel shuffle of quint8 data in ``num_groups`` groups along depth: op_chanshuffle.c
    ``channelshuffle_execute`` with one input and one output.

    Inputs (number of groups first): groups, data, min, max. The depth must be a multiple of the number
    of groups. The output range is the C's merged range of its one input: ``[fminf(0, min), max]`` -
    with the codes unchanged (no rescaling for a single input), so a range above 0 comes out with min 0.
    hexagon_nn also accepts several inputs concatenated in depth and several outputs (not supported).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        groups_arr, data, mn_arr, mx_arr = inputs
        x = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        groups = int(np.asarray(groups_arr).reshape(-1)[0])
        mn, mx = copied_range(ctx, mn_arr, mx_arr)
        out_min = np.fmin(np.float32(0.0), mn).astype(np.float32)   # C fminf: a NaN min gives 0
        return (group_shuffle(ctx, x, 3, groups), out_min, mx)
