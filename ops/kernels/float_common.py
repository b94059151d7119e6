"""Input helpers shared by the float (``*_f``) and int32 compute kernels.

The float ops of hexagon_nn_ops.txt (Add_f, Tanh_f, MaxPool_f, Sum_f, ...)
take IEEE float32 tensors and give float32 tensors; the int32 ops take and
give int32 tensors. These helpers read such inputs once, raise the project's
``OpError`` through ``ctx.fail`` (node and op named) when an input cannot be
read as the op's element type, and build float32 outputs.

Policy on special values shared by the float kernels (each module's
docstring repeats what applies to it): NaN and +-Inf in *data* follow IEEE
float arithmetic, as the device's C code would, except where an op cannot
give them a meaning (indices of a maximum, casts to integers), which say so;
NaN in a scalar *parameter* (a clamp bound, beta, alpha, ...) is an error.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.broadcast import as_4d
from hexnn_import.ops.kernel_io import i32_codes, u8_codes
from hexnn_import.ops.registry import KernelContext


def f32_tensor(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """A float input as a 4-D float32 array (shapes of fewer dims are left-padded with 1s).

    float32 arrays pass unchanged; other float arrays are rounded to float32
    (a finite value beyond the float32 range is an error); integer and bool
    arrays must convert exactly.
    """
    a = np.asarray(arr)
    if a.dtype.kind not in "biuf":
        raise ctx.fail(f"{what} has dtype {a.dtype}, expected float data")
    if a.dtype != np.float32:
        with np.errstate(over="ignore", invalid="ignore"):
            b = a.astype(np.float32)
        if a.dtype.kind == "f":
            if np.any(np.isinf(b) & np.isfinite(a)):
                raise ctx.fail(f"{what} holds values beyond the float32 range")
        elif not np.array_equal(b.astype(np.float64), a.astype(np.float64)):
            raise ctx.fail(f"{what} holds integers that float32 cannot hold exactly")
        a = b
    return as_4d(ctx, a, what)


def i32_tensor(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """An int32 input as a 4-D int32 array; other integer arrays must hold int32 values."""
    return as_4d(ctx, i32_codes(ctx, np.asarray(arr), what), what)


def u8_tensor(ctx: KernelContext, arr: np.ndarray, what: str) -> np.ndarray:
    """A uint8 input as a 4-D uint8 array; other integer arrays must hold values 0..255."""
    return as_4d(ctx, u8_codes(ctx, np.asarray(arr), what), what)


def no_nan(ctx: KernelContext, x: np.ndarray, what: str, why: str) -> np.ndarray:
    """Refuse NaN in ``x`` (for ops that cannot give NaN a meaning: ``why`` says which)."""
    if np.isnan(x).any():
        raise ctx.fail(f"{what} contains NaN, which {why}")
    return x


def param(ctx: KernelContext, arr: np.ndarray, what: str, finite: bool = True) -> float:
    """A float scalar parameter; NaN is always an error, +-Inf too unless ``finite`` is False."""
    value = ctx.scalar(arr, what)
    if math.isnan(value) or (finite and math.isinf(value)):
        raise ctx.fail(f"{what} is {value}, expected a {'finite ' if finite else ''}number")
    return value


def f32_out(y: np.ndarray) -> np.ndarray:
    """A float32, C-contiguous output array (float64 results are rounded once, to nearest)."""
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(y, dtype=np.float32)
