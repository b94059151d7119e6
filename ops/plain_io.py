"""Reading the data tensors of the plain (float / int32 / uint8, no min/max) data-movement ops.

Ops such as Concat_f, ConcatV2_int32, Slice_8 or StridedSlice_uint8 carry
their element type in the op name; the catalog slot of the data input says
which (``float`` -> float32, ``int32`` -> int32, ``quint8|uint8`` -> uint8).
These helpers read a data input as that dtype and raise the project's
``OpError`` (through ``ctx.fail``) naming node and op when it cannot be held
exactly, so one kernel class serves every element-type variant of an op.
Data movement never looks at the values: NaN and Inf in float data move
like any other value.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.catalog import NUMPY_DTYPES, TensorSpec
from hexnn_import.ops.kernel_io import i32_codes, require_4d, u8_codes
from hexnn_import.ops.registry import KernelContext


def slot_dtype(slot: TensorSpec) -> np.dtype | None:
    """The numpy dtype of a catalog slot's first element type (None for ``any``)."""
    return NUMPY_DTYPES.get(slot.types[0])


def float32_data(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """Float data as float32: float arrays are rounded to float32, integer arrays must convert exactly."""
    a = np.asarray(arr)
    if a.dtype == np.float32:
        return a
    if a.dtype.kind not in "biuf":
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected float data")
    with np.errstate(over="ignore", invalid="ignore"):
        b = a.astype(np.float32)
    if a.dtype.kind == "f":
        if np.any(np.isinf(b) & ~np.isinf(a)):
            raise ctx.fail(f"{what} holds values beyond the float32 range")
    elif not np.array_equal(b.astype(np.float64), a.astype(np.float64)):
        raise ctx.fail(f"{what} holds integers that float32 cannot hold exactly")
    return b


def typed_data(ctx: KernelContext, arr: np.ndarray, what: str, dtype: np.dtype | None) -> np.ndarray:
    """A data input converted (exactly) to ``dtype``; ``None`` leaves any numeric dtype as it is."""
    if dtype is None:
        a = np.asarray(arr)
        if a.dtype.kind not in "biuf":
            raise ctx.fail(f"{what} has dtype {a.dtype}, expected numeric data")
        return a
    if dtype == np.float32:
        return float32_data(ctx, arr, what)
    if dtype == np.int32:
        return i32_codes(ctx, arr, what)
    if dtype == np.uint8:
        return u8_codes(ctx, arr, what)
    raise ctx.fail(f"{what}: element type {dtype} is not one of the plain data-movement types")


def plain_tensor(ctx: KernelContext, arr: np.ndarray, what: str, dtype: np.dtype | None) -> np.ndarray:
    """A 4-D data tensor with at least one element, as ``dtype`` (see :func:`typed_data`)."""
    x = require_4d(ctx, typed_data(ctx, arr, what, dtype), what)
    if x.size == 0:
        raise ctx.fail(f"{what} has shape {list(x.shape)}, with no elements")
    return x
