"""Reductions over listed dims: Sum_f, Prod_f, Prod_int32, Min_f, Max_f (hexagon_nn_ops.txt).

Inputs (the texts): 0 data; 1 optional int32 list ``[1,1,1,n]`` of dims to
reduce; 2 optional int32 scalar "true rank", 1..4, default 4. Rules:

- no dims input, or any listed dim < 0: the whole tensor is reduced to a
  scalar ``[1,1,1,1]``;
- with true rank r, dim k names 4-D axis ``4 - r + k`` (r = 4: 0..3 are
  B,H,W,D; r = 1: 0 is D); a dim ``>= r`` is an error, as is r outside 1..4;
- padding NN_PAD_VALID squeezes the reduced dims away, the kept dims moving
  to the end: ``[2,5,7,32]`` reduced on H and W gives ``[1,1,2,32]``; any
  other padding keeps them with size 1 (``[2,1,1,32]``).

Choices where the texts are silent: a dim listed twice is reduced once; an
empty list (``n = 0``) counts as "no list" and reduces everything.

Arithmetic: Sum_f and Prod_f are evaluated in float64 and rounded once to
float32 (the device accumulates in float32, in its own order; the results
may differ in the last bits, never more than float32 rounding of each of its
steps allows). Min_f / Max_f replay hexagon_nn's C reduction with
``fminf`` / ``fmaxf`` from +Inf / -Inf: NaN is skipped, a slice of NaNs
gives +Inf (Min) / -Inf (Max), as does an empty slice. Prod_int32 wraps
modulo 2**32 as a chain of C int32 multiplications on the device does (the
product modulo 2**32 does not depend on the order); an empty product is 1,
an empty sum 0.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.ops.int_params import int_param, int_values
from hexnn_import.ops.kernels.float_common import f32_out, f32_tensor, i32_tensor
from hexnn_import.ops.registry import PAD_VALID, Kernel, KernelContext, register


def reduction_axes(ctx: KernelContext, inputs: tuple[np.ndarray, ...]) -> tuple[int, ...] | None:
    """The sorted, distinct 4-D axes to reduce, or None for "reduce everything" (module docstring)."""
    if len(inputs) < 2:
        return None
    dims = int_values(ctx, inputs[1], "reduction dims")
    rank = int_param(ctx, inputs[2], "true rank") if len(inputs) > 2 else 4
    if not 1 <= rank <= 4:
        raise ctx.fail(f"true rank {rank} must be 1..4")
    if not dims or any(d < 0 for d in dims):
        return None
    bad = [d for d in dims if d >= rank]
    if bad:
        raise ctx.fail(f"reduction dims {dims}: {bad} not below the true rank {rank}")
    return tuple(sorted({4 - rank + d for d in dims}))


def out_shape(ctx: KernelContext, shape: tuple[int, ...], axes: tuple[int, ...] | None) -> tuple[int, ...]:
    """The output shape: kept dims size 1 in place, or squeezed to the end under NN_PAD_VALID."""
    if axes is None:
        return (1, 1, 1, 1)
    if ctx.padding == PAD_VALID:
        kept = [n for i, n in enumerate(shape) if i not in axes]
        return (1,) * (4 - len(kept)) + tuple(kept)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


class _ReduceF(Kernel):
    """A float reduction ``fn(x, axes) -> keepdims result`` (float64 or float32), then the shape rule."""

    fn: Callable[[np.ndarray, tuple[int, ...]], np.ndarray]

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = f32_tensor(ctx, inputs[0], "input data")
        axes = reduction_axes(ctx, inputs)
        red = (0, 1, 2, 3) if axes is None else axes
        with np.errstate(all="ignore"):
            y = type(self).fn(x, red)
        return (f32_out(y).reshape(out_shape(ctx, x.shape, axes)),)


@register("Sum_f")
class SumF(_ReduceF):
    """Sum over the dims, float64 then rounded to float32 (module docstring)."""

    fn = staticmethod(lambda x, axes: x.sum(axis=axes, dtype=np.float64, keepdims=True))


@register("Prod_f")
class ProdF(_ReduceF):
    """Product over the dims, float64 then rounded to float32 (module docstring)."""

    fn = staticmethod(lambda x, axes: x.prod(axis=axes, dtype=np.float64, keepdims=True))


@register("Min_f")
class MinF(_ReduceF):
    """Minimum over the dims with ``fminf`` from +Inf (NaN skipped; module docstring)."""

    fn = staticmethod(lambda x, axes: np.fmin.reduce(x, axis=axes, keepdims=True, initial=np.inf))


@register("Max_f")
class MaxF(_ReduceF):
    """Maximum over the dims with ``fmaxf`` from -Inf (NaN skipped; module docstring)."""

    fn = staticmethod(lambda x, axes: np.fmax.reduce(x, axis=axes, keepdims=True, initial=-np.inf))


@register("Prod_int32")
class ProdInt32(Kernel):
    """Product of int32 data over the dims, wrapping modulo 2**32 as C int32 multiplication does.

    Computed exactly in uint64 (which wraps modulo 2**64, a multiple of
    2**32) and reduced to the low 32 bits, read as two's complement.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = i32_tensor(ctx, inputs[0], "input data")
        axes = reduction_axes(ctx, inputs)
        red = (0, 1, 2, 3) if axes is None else axes
        wide = x.astype(np.int64).astype(np.uint64)  # two's complement bits, sign-extended to 64
        prod = wide.prod(axis=red, keepdims=True, dtype=np.uint64)
        y = (prod & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
        return (np.ascontiguousarray(y.reshape(out_shape(ctx, x.shape, axes))),)
