"""int32 elementwise ops and Range_int32 (hexagon_nn_ops.txt).

Add_int32, Sub_int32, Mul_int32, Neg_int32, Abs_int32, BitwiseAnd_int32,
BitwiseOr_int32, BitwiseXor_int32, BitwiseNot_int32, Range_int32.

Overflow follows nnlib: the binary ops (op_add_f.c, op_sub_f.c, op_mul.c, op_bitwise.c, portable C
through nn_elementwise_with_broadcast) wrap modulo 2**32 (``2**31-1 + 1 = -2**31``); Neg_int32 and
Abs_int32 run HVX saturating word ops (op_neg.c), so ``-(-2**31) = |-2**31| = 2**31-1``. Binary ops broadcast as their texts say ("shapes must
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


def sat32(v: np.ndarray) -> np.ndarray:
    """int64 values saturated to int32 (HVX ``_sat`` word ops)."""
    return np.ascontiguousarray(np.clip(v, -2 ** 31, 2 ** 31 - 1).astype(np.int32))


@register("Neg_int32")
class NegInt32(Kernel):
    """``-x``, SATURATING: op_neg.c ``unary_op_execute`` runs ``Vw_vsub_VwVw_sat(0, x)``, so
    ``-(-2**31) = 2**31 - 1``."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (sat32(-i32_tensor(ctx, inputs[0], "input data").astype(np.int64)),)


@register("Abs_int32")
class AbsInt32(Kernel):
    """``|x|``, SATURATING: op_neg.c ``unary_op_execute`` runs ``Vw_vabs_Vw_sat``, so ``|-2**31| = 2**31 - 1``."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        return (sat32(np.abs(i32_tensor(ctx, inputs[0], "input data").astype(np.int64))),)


@register("BitwiseNot_int32")
class BitwiseNotInt32(_UnaryInt32):
    """``~x`` (``-x - 1``; never overflows)."""

    fn = staticmethod(np.invert)


@register("Range_int32")
class RangeInt32(Kernel):
    """op_range.c ``range_execute``: ``start + delta*i`` (int32, wrapping) as ``[1,1,1,n]``.

    ``start < limit``: ``delta`` is raised to at least 1 and ``n = (unsigned)(limit - start - 1) / delta + 1``;
    ``start > limit``: ``delta`` is lowered to at most -1 and ``n = (unsigned)(start - limit - 1) / -delta + 1``;
    ``start == limit``: one element, ``start``. The differences are taken modulo 2**32 as the C does.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        start_arr, limit_arr, delta_arr = inputs
        start = int_param(ctx, start_arr, "start")
        limit = int_param(ctx, limit_arr, "limit")
        delta = int_param(ctx, delta_arr, "delta")
        n = 1
        if start < limit:
            delta = max(delta, 1)
            n = ((limit - start - 1) % 2 ** 32) // delta + 1
        elif start > limit:
            delta = min(delta, -1)
            n = ((start - limit - 1) % 2 ** 32) // ((-delta) % 2 ** 32) + 1
        check_out_shape(ctx, (1, 1, 1, n))
        values = start + np.arange(n, dtype=np.int64) * delta
        return (wrap32(values).reshape(1, 1, 1, n),)
