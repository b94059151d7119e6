"""QuantizedLRN_8, L2Normalize_8, QuantizedInstanceNorm_8, QuantizedInstanceNormBG_8.

The op texts (hexagon_nn_ops.txt) give the formulas; the bits follow the
recipe SEMANTICS.md §6 states for softmax/sigmoid/tanh: compute in float64
from the dequantized inputs (§1) and quantize with round-half-away onto the
output range (§2). Output ranges: L2Normalize's is fixed by its text; the
others follow the observed result by AutoQuantize's rule (§2), as
hexagon_nn's reference kernels span the values they produce.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.float_ref import finite_extent, quantize_auto, quantize_fixed, real_input
from hexnn_import.ops.kernel_io import shape4
from hexnn_import.ops.quant import adjust_range
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: QuantizedInstanceNorm_8 has no epsilon input: the text's "variance_epsilon"
#: is taken as 1e-5 (InstanceNorm_f's value in hexagon_nn and ONNX's default).
INSTANCE_NORM_EPSILON = 1e-5


def _box_sum(v: np.ndarray, axis: int, size: int) -> np.ndarray:
    """Sum of ``v`` over a window of ``size`` taps along ``axis``, zeros outside.

    The window around index i covers ``i - (size-1)//2 .. i + size//2`` (centred;
    an even size reaches one further after).
    """
    if size == 1:
        return v
    before = (size - 1) // 2
    pad = [(0, 0)] * v.ndim
    pad[axis] = (before, size - 1 - before)
    padded = np.pad(v, pad)
    n = v.shape[axis]
    total = np.zeros_like(v)
    for k in range(size):  # loop over window taps, not over data
        total += np.take(padded, np.arange(k, k + n), axis=axis)
    return total


@register("QuantizedLRN_8")
class QuantizedLRN8(Kernel):
    """``x / (bias + (alpha / window_size) * sum(window x**2)) ** beta`` (op text).

    Choices where the documents are silent: the window is the *shape* of
    input 3 ``[1, wh, ww, wd]`` (its data is not read), centred on each
    element (even sizes reach one further after), taps outside the tensor
    contribute 0; ``window_size = wh * ww * wd``. bias must be > 0 and alpha
    >= 0 (so the base is positive), beta finite. Output range: the observed
    result by AutoQuantize's rule (SEMANTICS §2). Float64 from the dequantized
    input, quantized with round-half-away.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, window, bias_arr, alpha_arr, beta_arr = inputs
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        wb, wh, ww, wd = shape4(ctx, window, "window")
        if wb != 1 or min(wh, ww, wd) < 1:
            raise ctx.fail(f"window shape {[wb, wh, ww, wd]} must be [1, h>=1, w>=1, d>=1]")
        bias = ctx.scalar(bias_arr, "bias")
        alpha = ctx.scalar(alpha_arr, "alpha")
        beta = ctx.scalar(beta_arr, "beta")
        if not (math.isfinite(bias) and bias > 0):
            raise ctx.fail(f"bias {bias} must be finite and > 0")
        if not (math.isfinite(alpha) and alpha >= 0):
            raise ctx.fail(f"alpha {alpha} must be finite and >= 0")
        if not math.isfinite(beta):
            raise ctx.fail(f"beta {beta} is not finite")
        sq = x * x
        for axis, size in ((1, wh), (2, ww), (3, wd)):
            sq = _box_sum(sq, axis, size)
        y = x * (bias + (alpha / (wh * ww * wd)) * sq) ** -beta
        return quantize_auto(y, *finite_extent(y))


@register("L2Normalize_8")
class L2Normalize8(Kernel):
    """``x / sqrt(sum(x*x))`` along an axis (default depth, 3); output range ``[-1, 1]`` zero-fixed.

    Choices where the documents are silent: the axis (input 3) is in
    ``-4..3``, negative counting from the end; a slice whose sum of squares is
    0 gives 0. The text's range ``[-1, 1]`` has no code for 0.0, so it is
    zero-fixed with adjust_range (SEMANTICS §1) to ``[-1, 128/127]`` (step
    1/127, zero code 127). Float64 from the dequantized input, quantized with
    round-half-away.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs[:3]
        axis = ctx.int_scalar(inputs[3], "axis") if len(inputs) > 3 else 3
        if not -4 <= axis <= 3:
            raise ctx.fail(f"axis {axis} is out of range -4..3")
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        norm = np.sqrt(np.sum(x * x, axis=axis, keepdims=True))
        y = np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)
        return quantize_fixed(y, *adjust_range(-1.0, 1.0))


def _instance_normalized(x: np.ndarray, epsilon: float) -> np.ndarray:
    """``(x - mean) / sqrt(var + epsilon)`` with mean/variance per ``[b, :, :, c]``.

    Population variance over the spatial axes (h, w). Where ``var + epsilon``
    is 0 (a constant channel and epsilon 0) the result is 0.
    """
    mean = x.mean(axis=(1, 2), keepdims=True)
    centred = x - mean
    denom = np.sqrt((centred * centred).mean(axis=(1, 2), keepdims=True) + epsilon)
    return np.divide(centred, denom, out=np.zeros_like(x), where=denom > 0)


@register("QuantizedInstanceNorm_8")
class QuantizedInstanceNorm8(Kernel):
    """``(x - mean) / sqrt(variance + 1e-5)`` per batch and channel (op text).

    Choices where the documents are silent: the epsilon the text names is
    :data:`INSTANCE_NORM_EPSILON` (1e-5), applied to the variance of the
    dequantized values; mean and population variance run over h and w; output
    range: the observed result by AutoQuantize's rule (SEMANTICS §2). Float64,
    quantized with round-half-away. An empty spatial extent is an error.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        if x.shape[1] * x.shape[2] == 0:
            raise ctx.fail(f"input shape {list(x.shape)} has no spatial elements to normalize over")
        y = _instance_normalized(x, INSTANCE_NORM_EPSILON)
        return quantize_auto(y, *finite_extent(y))


@register("QuantizedInstanceNormBG_8")
class QuantizedInstanceNormBG8(Kernel):
    """``(x - mean[b,c]) * gamma[c] / sqrt(var[b,c] + epsilon) + beta[c]`` (op text).

    Choices where the documents are silent: gamma and beta are quint8 tensors
    of shape ``[1,1,1,d]`` (or ``[1,1,1,1]``, broadcast over depth), each with
    its own sane range; epsilon must be finite and >= 0; where ``var +
    epsilon`` is 0 the normalized term is 0 (output = beta); output range: the
    observed result by AutoQuantize's rule (SEMANTICS §2). Float64 from the
    dequantized inputs, quantized with round-half-away.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr, eps_arr, g_data, g_mn, g_mx, b_data, b_mn, b_mx = inputs
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        if x.shape[1] * x.shape[2] == 0:
            raise ctx.fail(f"input shape {list(x.shape)} has no spatial elements to normalize over")
        epsilon = ctx.scalar(eps_arr, "epsilon")
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise ctx.fail(f"epsilon {epsilon} must be finite and >= 0")
        gamma, _, _ = real_input(ctx, g_data, g_mn, g_mx, "gamma")
        beta, _, _ = real_input(ctx, b_data, b_mn, b_mx, "beta")
        depth = x.shape[3]
        for name, t in (("gamma", gamma), ("beta", beta)):
            if t.shape[:3] != (1, 1, 1) or t.shape[3] not in (1, depth):
                raise ctx.fail(f"{name} has shape {list(t.shape)}, expected [1,1,1,{depth}] or [1,1,1,1]")
        y = _instance_normalized(x, epsilon) * gamma + beta
        return quantize_auto(y, *finite_extent(y))
