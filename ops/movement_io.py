"""Input helpers shared by the data-movement kernels (concat/split, slices, pads, transpose/tile).

The op texts of QuantizedConcat_8, QuantizedSplit_8, QuantizedSlice_8,
QuantizedStridedSlice_8, QuantizedPad_8, MirrorPad_8, Transpose_8 and
QuantizedTile_8 read a quint8 data tensor, short int32 parameter vectors and
dimension indices, and build outputs whose size follows from parameters.
These helpers read and check those once and raise the project's ``OpError``
(through ``ctx.fail``) naming the node and op. Integer parsing itself is
:mod:`hexnn_import.ops.int_params`.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.int_params import int_param, int_values
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.registry import KernelContext

#: Largest element count of a tensor the ops may create (hexagon_nn sizes are 32-bit).
MAX_ELEMENTS = 2 ** 31 - 1


def int_list(ctx: KernelContext, arr: np.ndarray, what: str, min_len: int = 1, max_len: int = 4) -> list[int]:
    """The values of an int32 parameter tensor (read flat): ``min_len`` to ``max_len`` integers."""
    return int_values(ctx, arr, what, tuple(range(min_len, max_len + 1)))


def dim_param(ctx: KernelContext, arr: np.ndarray, what: str) -> int:
    """A dimension index 0..3 (0=batches, 1=height, 2=width, 3=depth)."""
    dim = int_param(ctx, arr, what)
    if not 0 <= dim <= 3:
        raise ctx.fail(f"{what} is {dim}, expected 0..3 (0=batches, 1=height, 2=width, 3=depth)")
    return dim


def u8_tensor(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """A 4-D quint8 data tensor with at least one element, as uint8 codes."""
    x = require_4d(ctx, u8_codes(ctx, arr, what), what)
    if x.size == 0:
        raise ctx.fail(f"{what} has shape {list(x.shape)}, with no elements")
    return x


def check_out_shape(ctx: KernelContext, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Refuse an output shape with more than :data:`MAX_ELEMENTS` elements (before allocating it)."""
    count = 1
    for n in shape:
        count *= int(n)
    if count > MAX_ELEMENTS:
        raise ctx.fail(f"output shape {list(shape)} has {count} elements, more than {MAX_ELEMENTS}")
    return shape


def copied_range(ctx: KernelContext, mn_arr: np.ndarray, mx_arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The output ``(min, max)`` of a pure data-movement op: the input's, copied as float32 unchecked.

    hexagon_nn's movement ops (op_slice.c, op_stridedslice.c, op_transpose.c, op_split.c, op_tile.c, ...)
    only ``tensor_copy`` their min/max inputs to the outputs: ranges excluding 0, zero-width ranges and
    even ``min > max`` pass through as given; the codes never depend on them.
    """
    return range_out(np.float32(ctx.scalar(mn_arr, "input min")), np.float32(ctx.scalar(mx_arr, "input max")))


def int32_words(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """An int32 parameter tensor's values, flat, as int64 (wrapping like the C's ``int32_t`` reads)."""
    a = np.asarray(arr)
    if a.dtype.kind not in "biu":
        if a.dtype.kind != "f" or not np.all(np.isfinite(a)) or np.any(a != np.trunc(a)):
            raise ctx.fail(f"{what} must hold integers, got {a.reshape(-1)[:8].tolist()}")
    return a.reshape(-1).astype(np.int64)


def param_depth(arr: np.ndarray) -> int:
    """The depth (last dim) of a parameter tensor as nnlib reads ``shape.depth`` (1 for a 0-d array)."""
    a = np.asarray(arr)
    return int(a.shape[-1]) if a.ndim else 1


def int32_word0(arr: np.ndarray) -> int:
    """Element 0 of a parameter tensor as nnlib's ``tensor_get_int32(t, 0)`` reads it: an integer tensor's
    value, a float tensor's float32 bit pattern (so NaN, 0.5 and -0.0 are all non-zero flags)."""
    a = np.ascontiguousarray(np.asarray(arr).reshape(-1)[:1])
    if a.dtype.kind == "f":
        return int(a.astype(np.float32).view(np.int32)[0])
    return int(a.astype(np.int64)[0])
