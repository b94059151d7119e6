"""Float elementwise binary ops: Add_f, Sub_f, Mul_f, Minimum_f, Maximum_f, AddN_f, Select_f
(hexagon_nn_ops.txt, the texts of those names).

Arithmetic is IEEE float32, each operation rounded to nearest as the
device's C code (``float`` operands, ``float`` result) rounds it: numpy's
float32 ``+ - *`` are the same correctly-rounded operations, so results are
bit-identical to C. Shapes broadcast as the texts say ("A,B shapes must
match on each dimension, except where one of them is 1; it will be
broadcast to the other"): :mod:`hexnn_import.ops.broadcast`. NaN and Inf in
the data follow IEEE arithmetic (module docstring of ``float_common``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.ops.broadcast import broadcast_pair
from hexnn_import.ops.kernels.float_common import f32_out, f32_tensor
from hexnn_import.ops.registry import Kernel, KernelContext, register


class _BinaryF(Kernel):
    """Inputs A, B (float, broadcast); output ``fn(A, B)`` as float32."""

    fn: Callable[[np.ndarray, np.ndarray], np.ndarray]

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        a_arr, b_arr = inputs
        a, b = broadcast_pair(ctx, f32_tensor(ctx, a_arr, "input A"), f32_tensor(ctx, b_arr, "input B"))
        with np.errstate(all="ignore"):  # overflow to Inf and Inf - Inf = NaN are IEEE results here
            return (f32_out(type(self).fn(a, b)),)


@register("Add_f")
class AddF(_BinaryF):
    """``a + b`` in float32, broadcasting."""

    fn = staticmethod(np.add)


@register("Sub_f")
class SubF(_BinaryF):
    """``a - b`` in float32, broadcasting."""

    fn = staticmethod(np.subtract)


@register("Mul_f")
class MulF(_BinaryF):
    """``a * b`` in float32, broadcasting."""

    fn = staticmethod(np.multiply)


@register("Minimum_f")
class MinimumF(_BinaryF):
    """``min(a, b)`` with C ``fminf`` semantics (hexagon_nn uses it): a NaN operand loses to a number."""

    fn = staticmethod(np.fmin)


@register("Maximum_f")
class MaximumF(_BinaryF):
    """``max(a, b)`` with C ``fmaxf`` semantics (hexagon_nn uses it): a NaN operand loses to a number."""

    fn = staticmethod(np.fmax)


@register("AddN_f")
class AddNF(Kernel):
    """Sum of N >= 1 float tensors of one shape, no broadcast (op text).

    Evaluated exactly as the text defines it, ``Add_f(Add_f(Add_f(in0, in1),
    in2), in3)``: left to right, each addition rounded to float32. A single
    input is returned unchanged. Differing shapes are an error.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        xs = [f32_tensor(ctx, arr, f"input {i}") for i, arr in enumerate(inputs)]
        shapes = {x.shape for x in xs}
        if len(shapes) > 1:
            listing = ", ".join(f"input {i} {list(x.shape)}" for i, x in enumerate(xs))
            raise ctx.fail(f"inputs must all have one shape (AddN_f does not broadcast): {listing}")
        total = xs[0].copy()
        with np.errstate(all="ignore"):
            for x in xs[1:]:
                total += x  # float32 += float32: one IEEE rounding per addition, in the text's order
        return (f32_out(total),)


@register("Select_f")
class SelectF(Kernel):
    """X where the condition is true, else Y; all three of one shape (op text, no broadcast).

    Choice where the text is silent: the condition is float data and is true
    where it is not 0.0 (C's truth of a float: NaN is true, -0.0 is false).
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        cond_arr, x_arr, y_arr = inputs
        cond = f32_tensor(ctx, cond_arr, "condition")
        x = f32_tensor(ctx, x_arr, "input x")
        y = f32_tensor(ctx, y_arr, "input y")
        if not cond.shape == x.shape == y.shape:
            raise ctx.fail(f"shapes differ: condition {list(cond.shape)}, x {list(x.shape)}, "
                           f"y {list(y.shape)}; Select_f requires one shape")
        return (f32_out(np.where(cond != 0, x, y)),)
