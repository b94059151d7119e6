"""QuantizedSigmoid_8, QuantizedTanh_8 and QuantizedSoftmax_8 (SEMANTICS.md §6).

§6: output range fixed - sigmoid and softmax ``[0, 1]``, tanh
``[-1, 0.992188]`` - computed in float64 from the dequantized input (§1)
and quantized onto the output range with round-half-away (§2).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.float_ref import quantize_fixed, real_input
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: Tanh's output max: the op text's "+0.992188" is 127/128 printed to six
#: digits; 127/128 gives the step 2**-7 and puts 0.0 exactly on code 128.
TANH_MAX = 127.0 / 128.0


@register("QuantizedSigmoid_8")
class QuantizedSigmoid8(Kernel):
    """``(1 + tanh(x/2)) / 2`` onto the fixed range ``[0, 1]`` (SEMANTICS §6).

    Float64 from the dequantized input, then ``q = round_away(y * 255)``.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        return quantize_fixed((1.0 + np.tanh(x / 2.0)) / 2.0, 0.0, 1.0)


@register("QuantizedTanh_8")
class QuantizedTanh8(Kernel):
    """``tanh(x)`` onto the fixed range ``[-1, 127/128]`` (SEMANTICS §6).

    The op text's "0.992188" is taken as exactly 127/128 (:data:`TANH_MAX`), so
    ``q = sat_u8(round_away(128 * tanh(x) + 128))``; tanh values above 127/128
    saturate to code 255.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        return quantize_fixed(np.tanh(x), -1.0, TANH_MAX)


@register("QuantizedSoftmax_8")
class QuantizedSoftmax8(Kernel):
    """Softmax along depth, ``exp(beta*x) / sum_d exp(beta*x)``, onto ``[0, 1]`` (SEMANTICS §6).

    Choices where the documents are silent: the softmax runs over the depth
    axis (each ``[b, h, w, :]`` row, as TFLite's and hexagon_nn's); beta
    (input 3, default 1.0) may be any finite value. Computed in float64 from
    the dequantized input (the row maximum is subtracted first, which does not
    change the result), then ``q = round_away(y * 255)``.
    """

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, mn_arr, mx_arr = inputs[:3]
        beta = ctx.scalar(inputs[3], "beta") if len(inputs) > 3 else 1.0
        if not math.isfinite(beta):
            raise ctx.fail(f"beta {beta} is not finite")
        x, _, _ = real_input(ctx, data, mn_arr, mx_arr, "input")
        z = beta * x
        if z.size:
            z = z - z.max(axis=3, keepdims=True)
        e = np.exp(z)
        return quantize_fixed(e / e.sum(axis=3, keepdims=True), 0.0, 1.0)
