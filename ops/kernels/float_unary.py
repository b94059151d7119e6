"""Float elementwise unary ops: Neg_f, Abs_f, Ceil_f, Floor_f, Round_f, Relu_f, ReluX_f,
Clamp_f, Tanh_f, Sigmoid_f (hexagon_nn_ops.txt, the texts of those names).

Exact ops (negation, absolute value, rounding to integers, comparisons)
give the float32 result C gives. Tanh and sigmoid have no exact float32
evaluation on any machine; they are computed in float64 and rounded once
to float32 (within one float32 ulp of the true value; the device's own
approximation may differ in the last bits). NaN and Inf in the data follow
IEEE arithmetic; a NaN parameter (ReluX limit, Clamp bounds) is an error.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.ops.kernels.float_common import f32_out, f32_tensor, param
from hexnn_import.ops.registry import Kernel, KernelContext, register


def sigmoid64(x: np.ndarray) -> np.ndarray:
    """The logistic function in float64, ``(1 + tanh(x/2)) / 2`` (Sigmoid_f's text).

    Evaluated in the equal form ``1 / (1 + exp(-x))`` (``exp(x) / (1 + exp(x))``
    for x < 0), which keeps the tiny results of very negative x that
    ``1 + tanh(x/2)`` would cancel to 0.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))  # in (0, 1]: never overflows
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class _UnaryF(Kernel):
    """One float input; output ``fn(x)`` as float32, same shape."""

    fn: Callable[[np.ndarray], np.ndarray]

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = f32_tensor(ctx, inputs[0], "input data")
        with np.errstate(all="ignore"):
            return (f32_out(type(self).fn(x)),)


@register("Neg_f")
class NegF(_UnaryF):
    """``-x`` (exact; flips the sign of zeros and NaNs too, as C's unary minus)."""

    fn = staticmethod(np.negative)


@register("Abs_f")
class AbsF(_UnaryF):
    """``|x|`` (exact, as C's ``fabsf``)."""

    fn = staticmethod(np.abs)


@register("Ceil_f")
class CeilF(_UnaryF):
    """Smallest integer not less than x (C ``ceilf``; exact, -0.5 gives -0.0)."""

    fn = staticmethod(np.ceil)


@register("Floor_f")
class FloorF(_UnaryF):
    """Largest integer not more than x (C ``floorf``; exact)."""

    fn = staticmethod(np.floor)


@register("Round_f")
class RoundF(_UnaryF):
    """Nearest integer, ties to even (the text; C ``rintf`` in the default rounding mode): 2.5 -> 2, 3.5 -> 4."""

    fn = staticmethod(np.rint)


@register("Relu_f")
class ReluF(_UnaryF):
    """``max(0, x)``: negative values become 0.0; NaN and -0.0 pass unchanged (``x < 0 ? 0 : x``).

    The text's "-x, and max(0,x)" is garbled (catalog note); max(0, x) is meant.
    """

    fn = staticmethod(lambda x: np.where(x < 0, np.float32(0.0), x))


@register("Tanh_f")
class TanhF(_UnaryF):
    """``tanh(x)``, float64 then rounded to float32."""

    fn = staticmethod(lambda x: np.tanh(x.astype(np.float64)))


@register("Sigmoid_f")
class SigmoidF(_UnaryF):
    """``(1 + tanh(x/2)) / 2`` (the main text; the early edition's ``(1 + tanh(x))/2`` drops the /2),
    float64 (see :func:`sigmoid64`) then rounded to float32."""

    fn = staticmethod(sigmoid64)


@register("ReluX_f")
class ReluXF(Kernel):
    """``min(max(0, x), limit)`` (op text), exact in float32.

    Choice where the text is silent (as QuantizedReluX_8's kernel): any limit
    other than NaN is taken literally; +Inf gives plain relu, a negative
    limit gives that limit everywhere, as the formula says.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, limit_arr = inputs
        x = f32_tensor(ctx, data, "input data")
        limit = np.float32(param(ctx, limit_arr, "limit", finite=False))
        relu = np.where(x < 0, np.float32(0.0), x)
        return (f32_out(np.where(relu > limit, limit, relu)),)


@register("Clamp_f")
class ClampF(Kernel):
    """``min(max(x, min_clamp), max_clamp)`` (op text), exact in float32.

    Choice where the text is silent (as QuantizedClamp_8's kernel): the
    bounds may be infinite but must satisfy ``min_clamp <= max_clamp``; NaN
    data stays NaN.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, lo_arr, hi_arr = inputs
        x = f32_tensor(ctx, data, "input data")
        lo = np.float32(param(ctx, lo_arr, "min_clamp", finite=False))
        hi = np.float32(param(ctx, hi_arr, "max_clamp", finite=False))
        if lo > hi:
            raise ctx.fail(f"clamp range [{lo}, {hi}] has min_clamp > max_clamp")
        y = np.where(x < lo, lo, x)
        return (f32_out(np.where(y > hi, hi, y)),)
