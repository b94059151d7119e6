"""Type casts: CastFloat32ToInt32, CastFloat32ToUInt8, CastInt32ToFloat32, CastInt32ToUInt8,
CastUInt8ToFloat32, CastUInt8ToInt32 and Convert_int32_f (hexagon_nn_ops.txt).

The texts say only "casts it to ...". Where C leaves the result undefined
the kernels follow hexagon_nn's own cast code, and state it:

- float -> int32: truncation toward zero; values beyond int32 (and +-Inf)
  saturate to -2**31 / 2**31-1 (the device's vector path saturates);
- float -> uint8: truncation toward zero, saturated to 0..255 (the device
  clamps to [0, 255], then truncates);
- int32 -> uint8: saturated to 0..255;
- int32 -> float (CastInt32ToFloat32, Convert_int32_f): round to nearest
  float32, ties to even (C's conversion); exact up to 2**24, above that the
  LSBs are lost, as Convert_int32_f's text warns;
- uint8 -> float / int32: exact.

NaN cannot be cast to an integer (C leaves it undefined): NaN in the input
of a float -> integer cast is an error. Shapes pass through unchanged.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernels.float_common import f32_out, f32_tensor, i32_tensor, no_nan, u8_tensor
from hexnn_import.ops.registry import Kernel, KernelContext, register

INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1


def float_to_int(ctx: KernelContext, arr: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Float data truncated toward zero and saturated to ``[lo, hi]``, as int64 (NaN is an error)."""
    x = no_nan(ctx, f32_tensor(ctx, arr, "input data"), "input data", "no integer can hold")
    # Clipping in float64 first is exact (lo, hi are integers float64 holds) and keeps Inf out of the cast.
    return np.trunc(np.clip(x.astype(np.float64), lo, hi)).astype(np.int64)


@register("CastFloat32ToInt32")
class CastFloat32ToInt32(Kernel):
    """Truncate toward zero, saturating to int32 (module docstring)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (float_to_int(ctx, inputs[0], INT32_MIN, INT32_MAX).astype(np.int32),)


@register("CastFloat32ToUInt8")
class CastFloat32ToUInt8(Kernel):
    """Truncate toward zero, saturating to 0..255 (module docstring)."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (float_to_int(ctx, inputs[0], 0, 255).astype(np.uint8),)


@register("CastInt32ToFloat32", "Convert_int32_f")
class CastInt32ToFloat32(Kernel):
    """int32 to the nearest float32 (ties to even), as C's ``(float)x``."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (f32_out(i32_tensor(ctx, inputs[0], "input data")),)


@register("CastInt32ToUInt8")
class CastInt32ToUInt8(Kernel):
    """int32 saturated to 0..255."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = i32_tensor(ctx, inputs[0], "input data")
        return (np.ascontiguousarray(np.clip(x, 0, 255).astype(np.uint8)),)


@register("CastUInt8ToFloat32")
class CastUInt8ToFloat32(Kernel):
    """uint8 to float32, exact."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (f32_out(u8_tensor(ctx, inputs[0], "input data")),)


@register("CastUInt8ToInt32")
class CastUInt8ToInt32(Kernel):
    """uint8 to int32, exact."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (np.ascontiguousarray(u8_tensor(ctx, inputs[0], "input data").astype(np.int32)),)
