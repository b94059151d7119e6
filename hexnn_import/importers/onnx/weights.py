"""Weights and biases of ONNX conv-like layers: float, QDQ (DequantizeLinear'd) and QOperator codes.

All roads end in :class:`~hexnn_import.importers.nodes.weights.LayerWeights`
(quint8 codes in the ONNX layout, one range, channel scales). Codes whose
quantization ``weights.layer_weights`` takes directly (per tensor with any
zero point; per axis on the output-channel axis with zero points 0) stay
exact; anything else - per-axis weights with non-zero zero points, uint8
per-axis weights, per-axis on another axis - is converted through its real
values and re-quantized symmetric per output channel (issue [ONNX import]:
"weights with non-zero zero points").
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hexnn_import.errors import ModelFormatError
from hexnn_import.importers.onnx.reader import QConst
from hexnn_import.importers.nodes.weights import LayerWeights, float_layer_weights, layer_weights
from hexnn_import.ops.quant import step_zero

if TYPE_CHECKING:
    from hexnn_import.importers.onnx.importer import OnnxImporter


def weight_source(imp: "OnnxImporter", name: str) -> str | None:
    """Why ``name`` cannot be a layer's weights (None when it can): it must be constant, float or quantized."""
    if not name or not imp.tensors.is_const(name):
        return f"weights {name or '(none)'} are not constant"
    qc = imp.tensors.qconst(name)
    if qc is not None:
        return None if qc.codes.dtype in (np.int8, np.uint8) else f"weights of type {qc.codes.dtype}"
    dt = imp.tensors.dtype(name)
    return None if dt in ("float32", "float64") else f"weights of type {dt}"


def qconst_weights(qc: QConst, axis: int, name: str, scale_mul: float = 1.0) -> LayerWeights:
    """LayerWeights of quantized codes along output-channel ``axis`` (module doc for the exact cases)."""
    if scale_mul > 0 and qc.axis is None:
        return layer_weights(qc.codes, qc.dtype, qc.scale * scale_mul, qc.zero_point, axis, name)
    if scale_mul > 0 and qc.axis == axis and not np.any(qc.zero_point != 0):
        return layer_weights(qc.codes, qc.dtype, qc.scale * scale_mul, qc.zero_point, axis, name)
    return float_layer_weights(qc.real() * scale_mul, axis, name)


def layer_weights_of(imp: "OnnxImporter", name: str, axis: int, label: str, scale_mul: float = 1.0,
                     real_fn=None) -> LayerWeights:  # type: ignore[no-untyped-def]
    """The LayerWeights of constant ``name`` (float, or DequantizeLinear'd codes); notes go to the summary.

    ``real_fn`` (float -> float array) transforms real weights first (a
    folded BatchNormalization); it forces the real-valued path.
    """
    qc = imp.tensors.qconst(name)
    if qc is not None and real_fn is None:
        lw = qconst_weights(qc, axis, label, scale_mul)
    else:
        w = qc.real() if qc is not None else np.asarray(imp.tensors.const(name), dtype=np.float64)
        w = w * scale_mul
        if real_fn is not None:
            w = real_fn(w)
        lw = float_layer_weights(w, axis, label)
    for n in lw.notes:
        imp.note(n)
    return lw


def bias_of(imp: "OnnxImporter", name: str, n_out: int, label: str) -> np.ndarray:
    """A layer's bias in real units (float64), zeros when absent; DequantizeLinear'd int32 codes exactly."""
    if not name:
        return np.zeros(n_out)
    qc = imp.tensors.qconst(name)
    data = qc.real() if qc is not None else np.asarray(imp.tensors.const(name), dtype=np.float64)
    data = data.reshape(-1)
    if data.size == 1 and n_out != 1:
        data = np.full(n_out, float(data[0]))
    if data.size != n_out:
        raise ModelFormatError(f"{imp.label}: bias {name} of {label} has {data.size} values for {n_out} channels")
    return data


def limit_channel_scales(lw: LayerWeights, low: float, axis: int, name: str) -> tuple[LayerWeights, list[str]]:
    """Rescale channels whose scale ratio is at most ``low`` (ops with a (1/32, 1] bound) onto ``2 * low``.

    The codes of such a channel are multiplied by ``k / (2 low)`` (round half
    away) around the zero code, which loses precision only in channels whose
    weights are already at least 32 times smaller than the largest.
    """
    if lw.k is None or not np.any(lw.k <= low):
        return lw, []
    zero = step_zero(*lw.w_range)[1]
    data = np.moveaxis(lw.codes.astype(np.int64) - zero, axis, 0).copy()
    k = lw.k.copy()
    notes = []
    for c in np.flatnonzero(k <= low):
        f = k[c] / (2.0 * low)
        data[c] = np.trunc(data[c] * f + np.copysign(0.5, data[c]))
        k[c] = 2.0 * low
        notes.append(f"{name}: channel {c} scale ratio below 1/{round(1 / low)}; weights rescaled")
    codes = np.clip(np.moveaxis(data, 0, axis) + zero, 0, 255).astype(np.uint8)
    return LayerWeights(codes, lw.w_range, k, lw.notes + notes), notes
