"""Weights for conv-like layers: quint8 codes, one weight range, per-channel scales.

hexagon_nn's conv ops take one weight range (SEMANTICS §3); per-channel
weights (TFLite ``quantized_dimension``, ONNX per-axis) become a range built
on the largest channel scale plus the supernode's channel scales
``k[c] = s[c] / max(s)`` (SEMANTICS §5: each ``k`` in (1/2048, 1]). Float
weights are quantized here, symmetric per output channel, as TFLite's and
onnxruntime's quantizers do.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.errors import ModelFormatError
from hexnn_import.ops.quant import scale_zp_to_range

MIN_CHANNEL_SCALE = 1.0 / 2048.0  # SEMANTICS §5: each k[c] in (1/2048, 1]


@dataclass
class LayerWeights:
    """quint8 codes in the source layout, their (min, max), channel scales (None if per-tensor), notes."""

    codes: np.ndarray
    w_range: tuple[float, float]
    k: np.ndarray | None
    notes: list[str]


def to_quint8(data: np.ndarray, dtype: str) -> np.ndarray:
    """int8 codes to quint8 by XOR 0x80 (SEMANTICS §1); uint8 unchanged."""
    if dtype == "int8":
        return (np.asarray(data).astype(np.int8).view(np.uint8) ^ np.uint8(0x80)).astype(np.uint8)
    return np.asarray(data).astype(np.uint8)


def quantize_real_weights(w: np.ndarray, axis: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Float weights -> (int8 codes, scales): symmetric, per channel along ``axis`` (per tensor if None)."""
    w = np.asarray(w, dtype=np.float64)
    if not np.all(np.isfinite(w)):
        raise ModelFormatError("weights hold NaN or Inf")
    if axis is None:
        peak = np.array([np.max(np.abs(w)) if w.size else 0.0])
        view = w.reshape(1, -1)
    else:
        view = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        peak = np.max(np.abs(view), axis=1) if view.size else np.zeros(w.shape[axis])
    # an all-zero channel (a pruned filter) takes the largest channel's scale, so it does not
    # become the largest scale itself and shrink every other channel's ratio k
    top = float(np.max(peak)) if peak.size and np.max(peak) > 0 else 127.0
    scale = np.where(peak > 0, peak, top) / 127.0
    codes = np.clip(np.round(view / scale[:, None]), -127, 127).astype(np.int8)
    if axis is None:
        return codes.reshape(w.shape), scale
    return np.moveaxis(codes.reshape((w.shape[axis],) + tuple(np.delete(w.shape, axis))), 0, axis), scale


def layer_weights(codes: np.ndarray, dtype: str, scale: np.ndarray, zero_point: np.ndarray, axis: int,
                  name: str) -> LayerWeights:
    """Quantized weights (int8/uint8 codes, per-tensor or per-channel along ``axis``) -> :class:`LayerWeights`.

    Per-channel zero points must be 0 (symmetric), as both converters write
    them; a channel whose scale ratio is at most 1/2048 has its codes rescaled
    onto ``k = 1/1024`` (rounded half away) and is named in the notes.
    """
    signed = dtype == "int8"
    scale = np.asarray(scale, dtype=np.float64).reshape(-1)
    zero_point = np.asarray(zero_point).reshape(-1)
    if scale.size == 0 or np.any(~np.isfinite(scale)) or np.any(scale <= 0):
        raise ModelFormatError(f"weights {name} have a zero, negative or non-finite scale")
    if scale.size == 1:
        rng = scale_zp_to_range(float(scale[0]), int(zero_point[0]) if zero_point.size else 0, signed)
        return LayerWeights(to_quint8(codes, dtype), rng, None, [])
    if np.any(zero_point != 0):
        raise ModelFormatError(f"per-channel weights {name} have non-zero zero points")
    if codes.shape[axis] != scale.size:
        raise ModelFormatError(f"weights {name}: {scale.size} channel scales for {codes.shape[axis]} channels")
    smax = float(scale.max())
    k = scale / smax
    notes: list[str] = []
    small = k <= MIN_CHANNEL_SCALE
    if np.any(small):
        data = np.moveaxis(codes.astype(np.int64), axis, 0).copy()
        for c in np.flatnonzero(small):  # per channel: a handful at most
            if np.any(data[c] != 0):
                data[c] = np.trunc(data[c] * (k[c] * 1024.0) + np.copysign(0.5, data[c]))
                notes.append(f"{name}: channel {c} scale ratio {k[c]:.3g} below 1/2048; weights rescaled to 1/1024")
                k[c] = 1.0 / 1024.0
            else:
                k[c] = 1.0
        codes = np.moveaxis(data, 0, axis).astype(np.int8 if signed else np.uint8)
    rng = scale_zp_to_range(smax, 0, signed)
    return LayerWeights(to_quint8(codes, dtype), rng, k, notes)


def float_layer_weights(w: np.ndarray, axis: int, name: str) -> LayerWeights:
    """Float weights quantized symmetric per channel along ``axis`` -> :class:`LayerWeights`."""
    codes, scale = quantize_real_weights(w, axis)
    return layer_weights(codes, "int8", scale, np.zeros(scale.size, dtype=np.int64), axis, name)


def dilate(w_hwio: np.ndarray, zero_code: int, dh: int, dw: int) -> np.ndarray:
    """Spread kernel taps ``dh`` / ``dw`` apart, filling the gaps with the weights' zero code."""
    if dh == 1 and dw == 1:
        return w_hwio
    fh, fw = w_hwio.shape[:2]
    out = np.full(((fh - 1) * dh + 1, (fw - 1) * dw + 1) + w_hwio.shape[2:], zero_code, dtype=w_hwio.dtype)
    out[::dh, ::dw] = w_hwio
    return out
