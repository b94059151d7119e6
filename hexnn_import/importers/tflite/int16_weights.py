"""The weights of an int16x8 conv-like layer as LiteRT applies them (``tflite.handlers.int16``).

TFLite's int16x8 CONV_2D and DEPTHWISE_CONV_2D accumulate ``sum(x * q_w) + b`` in int64 and requantize
with ``MultiplyByQuantizedMultiplier(int64_t, ...)`` (tensorflow/lite/kernels/internal/common.cc), which
first reduces the 31-bit multiplier of ``s_in * s_w[c] / s_out`` (``QuantizeMultiplier``: ``frexp``,
mantissa rounded to 31 bits) to 15 bits, ``(m + 2**15) >> 16``: up to ``2**-16`` relative, half an output
step at full scale. FULLY_CONNECTED keeps the 31-bit multiplier (measured: LiteRT's int16 FC output is
bit-exact against it, and 1 output in 10 off against the 15-bit one). So a layer is imported with the
multiplier LiteRT applies: channel ``c``'s real weight unit is ``W[c] = M'[c] s_out / s_in``, its real
bias ``b[c] s_in W[c]``, and the 16-bit transposed conv's one rounding of ``acc M'[c]`` onto the output
scale is LiteRT's (its weights on the exact grid ``W[c] / 256``; only ties round apart: away from zero
here, up in LiteRT). Measured on converter-made models: with the real multiplier instead, about 1 output
in 7 of a single layer is 1 LSB off LiteRT.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.importers.tflite.int16 import scale_of
from hexnn_import.importers.tflite.reader import TFTensor
from hexnn_import.ops.quant import round_away


def litert_multiplier(m: float, reduced: bool = True) -> float:
    """The multiplier LiteRT's int16x8 requantization applies for the real multiplier ``m``: 31 bits, or 15
    when ``reduced`` (module doc)."""
    if m <= 0.0:
        return 0.0
    q, shift = math.frexp(m)
    fixed = int(round_away(q * 2.0 ** 31))
    if fixed == 2 ** 31:
        fixed //= 2
        shift += 1
    if shift < -31:
        return 0.0
    if not reduced:
        return fixed * 2.0 ** (shift - 31)
    fifteen = (fixed + 2 ** 15) >> 16 if fixed < 0x7FFF0000 else 0x7FFF
    return fifteen * 2.0 ** (shift - 15)


def layer16(x: TFTensor, w: TFTensor, b: TFTensor | None, y: TFTensor, axis: int, n_out: int,
            reduced: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(weights, bias, steps)``: the real weights in the weight tensor's layout, the real bias per output
    channel and each channel's exact 16-bit weight step, all on LiteRT's multipliers (module doc)."""
    assert w.data is not None and w.quant is not None
    s_in, s_out = scale_of(x), scale_of(y)
    s_w = np.broadcast_to(np.asarray(w.quant.scale, np.float64).reshape(-1), (n_out,))
    unit = np.array([litert_multiplier(s_in * float(s) / s_out, reduced) for s in s_w]) * s_out / s_in
    shape = [1] * w.data.ndim
    shape[axis] = -1
    weights = np.asarray(w.data, np.float64) * unit.reshape(shape)
    codes = np.zeros(n_out) if b is None or b.data is None else np.asarray(b.data, np.float64).reshape(-1)
    return weights, codes * s_in * unit, unit / 256.0

