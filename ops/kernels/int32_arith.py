"""int32 elementwise ops and Range_int32 (hexagon_nn_ops.txt).

Add_int32, Sub_int32, Mul_int32, Neg_int32, Abs_int32, BitwiseAnd_int32,
BitwiseOr_int32, BitwiseXor_int32, BitwiseNot_int32, Range_int32.

Overflow: the texts are silent. In C, signed overflow is undefined; the
device's 32-bit ALU wraps, and so do these kernels: every result is the
exact integer result reduced modulo 2**32 into -2**31 .. 2**31-1 (two's
complement). So ``2**31-1 + 1 = -2**31``, ``-(-2**31) = -2**31`` and
``|-2**31| = -2**31``. Binary ops broadcast as their texts say ("shapes must
match on each dimension, except where one of them is 1"). Inputs must hold
int32 values (other integer dtypes are accepted when they fit).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernels.float_common import i32_tensor
from hexnn_import.ops.movement_io import check_out_shape
from hexnn_import.ops.registry import Kernel, KernelContext, register


def wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values reduced modulo 2**32 to int32 (two's complement), C-contiguous."""
    return np.ascontiguousarray(v.astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32))


class _BinaryInt32(Kernel):
    """Inputs A, B (int32, broadcast); output ``wrap32(fn(A, B))`` with ``fn`` exact in int64."""

    fn: Callable[[np.ndarray, np.ndarray], np.ndarray]

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a_arr, b_arr = inputs
        a, b = broadcast_pair(ctx, i32_tensor(ctx, a_arr, "input A"), i32_tensor(ctx, b_arr, "input B"))
        # int32 x int32 fits int64 exactly for + - * (|a*b| <= 2**62), so fn is exact before wrapping.
        return (wrap32(type(self).fn(a.astype(np.int64), b.astype(np.int64))),)


@register("Add_int32")
class AddInt32(_BinaryInt32):
    """``a + b``, wrapping modulo 2**32."""

    fn = staticmethod(np.add)


@register("Sub_int32")
class SubInt32(_BinaryInt32):
    """``a - b``, wrapping modulo 2**32."""

    fn = staticmethod(np.subtract)


@register("Mul_int32")
class MulInt32(_BinaryInt32):
    """``a * b``, wrapping modulo 2**32 (the low 32 bits of the product)."""

    fn = staticmethod(np.multiply)


@register("BitwiseAnd_int32")
class BitwiseAndInt32(_BinaryInt32):
    """``a & b`` on the two's complement bits."""

    fn = staticmethod(np.bitwise_and)


@register("BitwiseOr_int32")
class BitwiseOrInt32(_BinaryInt32):
    """``a | b`` on the two's complement bits."""

    fn = staticmethod(np.bitwise_or)


@register("BitwiseXor_int32")
class BitwiseXorInt32(_BinaryInt32):
    """``a ^ b`` on the two's complement bits."""

    fn = staticmethod(np.bitwise_xor)


class _UnaryInt32(Kernel):
    """One int32 input; output ``wrap32(fn(x))`` with ``fn`` exact in int64."""

    fn: Callable[[np.ndarray], np.ndarray]

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = i32_tensor(ctx, inputs[0], "input data")
        return (wrap32(type(self).fn(x.astype(np.int64))),)


@register("Neg_int32")
class NegInt32(_UnaryInt32):
    """``-x``, wrapping: ``-(-2**31) = -2**31``."""

    fn = staticmethod(np.negative)


@register("Abs_int32")
class AbsInt32(_UnaryInt32):
    """``|x|``, wrapping: ``|-2**31| = -2**31`` (as C ``abs`` on the device)."""

    fn = staticmethod(np.abs)


@register("BitwiseNot_int32")
class BitwiseNotInt32(_UnaryInt32):
    """``~x`` (``-x - 1``; never overflows)."""

    fn = staticmethod(np.invert)


@register("Range_int32")
class RangeInt32(Kernel):
    """``for (i = start; i < limit; i += delta)`` (``i > limit`` when ``limit < start``), as int32 ``[1,1,1,n]``.

    ``n = ceil((limit - start) / delta)`` computed exactly. Choices where the
    text is silent: a loop that would never end (``delta == 0`` with
    ``start != limit``, or ``delta`` pointing away from ``limit``) is an
    error; ``start == limit`` gives the empty tensor ``[1,1,1,0]``. Every value
    lies between start and limit, so none overflows.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        start_arr, limit_arr, delta_arr = inputs
        start = int_param(ctx, start_arr, "start")
        limit = int_param(ctx, limit_arr, "limit")
        delta = int_param(ctx, delta_arr, "delta")
        if start == limit:
            n = 0
        elif delta == 0 or (limit > start) != (delta > 0):
            raise ctx.fail(f"range start {start}, limit {limit}, delta {delta} never reaches its limit")
        else:
            n = -(-(limit - start) // delta)  # ceil division, exact for either sign of delta
        check_out_shape(ctx, (1, 1, 1, n))
        values = start + np.arange(n, dtype=np.int64) * delta
        return (values.astype(np.int32).reshape(1, 1, 1, n),)
