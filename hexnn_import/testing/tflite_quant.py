"""Quantization helpers that reproduce what the TFLite converter writes.

These are the small formulas a test or a model script needs to make a
quantized TFLite model look like a converter-made one:

* activations: asymmetric (scale, zero_point) from a calibrated float range,
  nudged so that 0.0 is exactly representable (TFLite "Quantization spec",
  ``GetAsymmetricQuantizationParams`` in ``tools/optimize/quantization_utils``);
* int8 weights: symmetric per channel, zero point 0, values in [-127, 127],
  scale = max|w| / 127 (``SymmetricPerChannelQuantization``);
* bias: int32, zero point 0, scale = input_scale * weight_scale[c].

All rounding is half away from zero, as ``TfLiteRound`` / ``std::round`` do
(numpy's ``np.round`` rounds half to even, which differs on ties).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import numpy.typing as npt

_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),
}


def qrange(dtype: npt.DTypeLike, narrow_range: bool = False) -> tuple[int, int]:
    """Return ``(qmin, qmax)`` of an integer dtype; narrow range drops the lowest value."""
    name = np.dtype(dtype).name
    if name not in _RANGES:
        raise ValueError(f"no quantized range for dtype {name}")
    qmin, qmax = _RANGES[name]
    return (qmin + 1 if narrow_range else qmin), qmax


def round_half_away(x: npt.ArrayLike) -> np.ndarray:
    """Round to the nearest integer, ties away from zero (``std::round``)."""
    a = np.asarray(x, dtype=np.float64)
    return np.sign(a) * np.floor(np.abs(a) + 0.5)


def choose_params(
    rmin: float,
    rmax: float,
    dtype: npt.DTypeLike = np.int8,
    narrow_range: bool = False,
    symmetric: bool = False,
) -> tuple[float, int]:
    """Return ``(scale, zero_point)`` for a float range, as the TFLite converter does.

    The range is first widened to contain 0.0, then the zero point is taken
    from whichever end (min or max) gives the smaller error and nudged to an
    integer in ``[qmin, qmax]`` (``GetAsymmetricQuantizationParams``).  A
    degenerate range gives ``(1.0, 0)`` like the converter.  With
    ``symmetric`` the zero point is 0 and ``scale = max(|rmin|, |rmax|) / qmax``
    (the int16 activation / int8 weight rule).  The scale is returned rounded
    to float32, the precision it has once written into the flatbuffer.
    """
    qmin, qmax = qrange(dtype, narrow_range)
    rmin = min(float(rmin), 0.0)
    rmax = max(float(rmax), 0.0)
    if symmetric:
        half = max(abs(rmin), abs(rmax))
        return (float(np.float32(half / qmax)) if half > 0 else 1.0), 0
    if rmax - rmin < np.finfo(np.float64).eps:
        return 1.0, 0
    scale = (rmax - rmin) / (qmax - qmin)
    zp_from_min = qmin - rmin / scale
    zp_from_max = qmax - rmax / scale
    err_min = abs(qmin) + abs(rmin / scale)
    err_max = abs(qmax) + abs(rmax / scale)
    zp = zp_from_min if err_min < err_max else zp_from_max
    zp_int = int(np.clip(round_half_away(zp), qmin, qmax))
    return float(np.float32(scale)), zp_int


def quantize_per_tensor(
    x: npt.ArrayLike, scale: float, zero_point: int, dtype: npt.DTypeLike = np.int8
) -> np.ndarray:
    """Quantize ``x`` as ``clamp(round(x / scale) + zero_point)`` (TFLite QUANTIZE)."""
    qmin, qmax = qrange(dtype)
    q = round_half_away(np.asarray(x, dtype=np.float64) / float(scale)) + int(zero_point)
    return np.clip(q, qmin, qmax).astype(dtype)


def quantize_per_channel(
    w: npt.ArrayLike, axis: int = 0, dtype: npt.DTypeLike = np.int8
) -> tuple[np.ndarray, np.ndarray]:
    """Quantize weights symmetrically per channel along ``axis``.

    Returns ``(q, scales)``: ``q`` in ``[-qmax, qmax]`` (narrow range, zero
    point 0) and float32 ``scales`` with ``scale[c] = max|w[c]| / qmax``; an
    all-zero channel gets scale 1.0 so it stays representable.
    """
    a = np.asarray(w, dtype=np.float64)
    _, qmax = qrange(dtype)
    other = tuple(i for i in range(a.ndim) if i != axis % a.ndim)
    absmax = np.max(np.abs(a), axis=other) if other else np.abs(a)
    scales = np.where(absmax > 0, absmax / qmax, 1.0).astype(np.float32)
    shape = [1] * a.ndim
    shape[axis] = -1
    q = round_half_away(a / scales.astype(np.float64).reshape(shape))
    return np.clip(q, -qmax, qmax).astype(dtype), scales


def quantize_bias(
    bias: npt.ArrayLike, input_scale: float, weight_scales: float | Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Quantize a bias to int32 with ``scale = input_scale * weight_scale`` and zero point 0.

    Returns ``(q, scales)``; ``scales`` has one entry per channel when the
    weights are per channel, else a single entry.  Scales are computed in
    float32, like the converter does from the float32 scales in the file.
    """
    ws = np.atleast_1d(np.asarray(weight_scales, dtype=np.float32))
    scales = (np.float32(input_scale) * ws).astype(np.float32)
    q = round_half_away(np.asarray(bias, dtype=np.float64) / scales.astype(np.float64))
    lo, hi = qrange(np.int32)
    return np.clip(q, lo, hi).astype(np.int32), scales


def dequantize(
    q: npt.ArrayLike,
    scale: float | Sequence[float] | np.ndarray,
    zero_point: int | Sequence[int] | np.ndarray = 0,
    axis: int | None = None,
) -> np.ndarray:
    """Return ``(q - zero_point) * scale`` as float64; per channel along ``axis`` if given."""
    a = np.asarray(q, dtype=np.float64)
    s = np.asarray(scale, dtype=np.float64)
    z = np.asarray(zero_point, dtype=np.float64)
    if axis is not None:
        shape = [1] * a.ndim
        shape[axis] = -1
        s = s.reshape(shape)
        if z.ndim:
            z = z.reshape(shape)
    return (a - z) * s
