"""Softmax_f and LRN_f on float tensors (hexagon_nn_ops.txt and the early edition).

Neither has an exact float32 evaluation: both are computed in float64 from
the float32 input and rounded once to float32 (the device's float code
rounds in between and may differ in the last bits). NaN and Inf in the data
follow IEEE arithmetic; NaN or Inf parameters are errors.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.kernel_io import shape4
from hexnn_import.ops.kernels.float_common import f32_out, f32_tensor, param
from hexnn_import.ops.kernels.normalize import _box_sum
from hexnn_import.ops.registry import Kernel, KernelContext, register


def softmax_depth(x: np.ndarray, beta: float) -> np.ndarray:
    """``exp(beta*x) / sum_d exp(beta*x)`` along depth (axis 3) in float64.

    The row maximum of ``beta*x`` is subtracted first (no change to the
    result, no overflow). An empty depth gives an empty result.
    """
    z = beta * x.astype(np.float64)
    if z.size:
        z = z - z.max(axis=3, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=3, keepdims=True)


@register("Softmax_f")
class SoftmaxF(Kernel):
    """Softmax along depth, ``exp(beta*x) / sum exp(beta*x)`` (op text: "renormalize data exponentially").

    Choices where the texts are silent: the text's "only supports 1D data"
    is read as one softmax per ``[b, h, w, :]`` row along depth (which is
    the whole tensor for 1-D data ``[1,1,1,n]``, and is what
    QuantizedSoftmax_8 does); beta is an optional input 1 (float scalar,
    default 1.0, finite) as on QuantizedSoftmax_8 - the catalog entry lists
    one input today, so a node can only give beta once the catalog adds the
    optional slot. Float64, rounded once to float32.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        x = f32_tensor(ctx, inputs[0], "input data")
        beta = param(ctx, inputs[1], "beta") if len(inputs) > 1 else 1.0
        with np.errstate(invalid="ignore"):  # Inf - Inf in a row with +Inf gives NaN, as IEEE says
            return (f32_out(softmax_depth(x, beta)),)


@register("LRN_f")
class LRNF(Kernel):
    """``x / (bias + (alpha / n) * sum(window x**2)) ** beta`` (the main text's formula).

    Choices where the texts are silent or disagree (catalog note):

    - the window is the *shape* of input 1 ``[1, wh, ww, wd]`` (its data is
      not read), centred on each element as QuantizedLRN_8's kernel centres
      it (an even size reaches one further after); taps outside the tensor
      contribute 0; ``n = wh * ww * wd`` (the main text divides alpha by the
      window size, the early edition does not: the main text is followed);
    - bias and alpha finite and >= 0, not both 0 (hexagon_nn's check); beta
      finite (the text: "any value is allowed");
    - an element equal to 0 gives 0 (the device's shortcut; it also avoids
      ``0 * inf`` when bias is 0).

    Float64, rounded once to float32.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, window, bias_arr, alpha_arr, beta_arr = inputs
        x32 = f32_tensor(ctx, data, "input data")
        wb, wh, ww, wd = shape4(ctx, window, "window shape")
        if wb != 1 or min(wh, ww, wd) < 1:
            raise ctx.fail(f"window shape {[wb, wh, ww, wd]} must be [1, h>=1, w>=1, d>=1]")
        bias = param(ctx, bias_arr, "bias")
        alpha = param(ctx, alpha_arr, "alpha")
        beta = param(ctx, beta_arr, "beta")
        if bias < 0 or alpha < 0 or (bias == 0 and alpha == 0):
            raise ctx.fail(f"bias {bias} and alpha {alpha} must be >= 0 and not both 0")
        x = x32.astype(np.float64)
        sq = x * x
        for axis, size in ((1, wh), (2, ww), (3, wd)):
            sq = _box_sum(sq, axis, size)
        base = bias + (alpha / (wh * ww * wd)) * sq
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = np.where(x == 0, 0.0, x * base ** -beta)
        return (f32_out(y),)
