"""Transformer normalization and activation on the documented op set: LayerNorm and GELU.

**LayerNorm** (normalize each row over the last axis, then ``* gamma + beta`` per feature) has no
hexagon_nn op of its own; ``QuantizedInstanceNorm_8`` (op text: ``(in - mean) / sqrt(variance)`` per
batch and channel over height and width; nnlib's op_instancenorm.c: integer sums of the codes, so the
statistics are exact) normalizes over the spatial axes instead. So the rows are laid across depth:
the value is viewed as ``[1, rows, h, w]`` (QuantizedReshape; ``h * w = D``, :func:`norm_grid`), Transpose_8
makes it ``[1, h, w, rows]`` (each row a channel, its D features an ``h x w`` grid), QuantizedInstanceNorm_8
normalizes each row onto a run-time range (its extreme results), Transpose_8 and QuantizedReshape restore
``[1, 1, rows, D]``, and gamma / beta are a 1x1 depthwise layer (gamma the per-feature weights, quantized
symmetric with channel scales; beta the bias) requantized once onto the output range. Two roundings in all (the normalized value on 8 bits,
the output). Epsilon: op_instancenorm.c adds ``1e-5`` to the standard deviation in code units, where
LayerNorm adds ``eps`` to the variance in real units; the two agree wherever a row's variance is large
against ``eps`` (a row whose values span several codes), and a constant row gives 0 (then ``beta``) in
both.

**The grid, and what the DSP computes.** prepare.c makes every QuantizedInstanceNorm_8 a
``QuantizedInstanceNorm_8_d32``, and that is what a device runs (op_instancenorm_hvx.c; the engine follows it,
ops/kernels/d32_instancenorm.py). Its ``getstats_asm`` reads two rows below the data at heights 1-2, bytes
nothing writes (a row laid along the width, ``[1, 1, D, rows]``, came out squashed to [0, 0] on the emulated DSP),
and it counts the d32 padding bytes (width to a multiple of 4, height to even) into qf16 sums it then takes them
out of again, which costs precision. So the features lie on a grid of at least 3 rows with the least such
padding (D = 32: 4 x 8, none), where the device's result is defined and the engine's equals it (the ViT and
encoder families on the emulated DSP). That op's 16-bit fixed point lands up to about 2.5 of its own output
steps from the exact normalization (the flat op, which no device runs, within one): the transformer
families lose 0.5-5 dB against their runtimes for it (docs/transformers.md).

**GELU** ``x * Phi(x)`` (exact, with erf; or the tanh approximation): with fixed input and output ranges
a 256-entry table of output codes (the importers' look-up tables: CastUInt8ToInt32 + Gather_8, one
rounding). With a run-time range (a float model imported without calibration) in float:
Dequantize, then ``x * sigmoid(2c (x + 0.044715 x^3))`` (``0.5 (1 + tanh(z)) = sigmoid(2z)``, ``c =
sqrt(2/pi)``) with Mul_f / Add_f / Sigmoid_f, and AutoQuantize; that is the tanh form, within 5e-4 of
the exact one (:data:`TANH_FORM_ERROR`), far below an 8-bit step.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from hexnn_import.graph import NNPad, OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, dequantize, emit_conv, node3, quantize_float, reshape_value
from hexnn_import.importers.nodes.movement import transpose
from hexnn_import.importers.nodes.values import Value
from hexnn_import.importers.nodes.weights import float_layer_weights

LAYER_NORM_EMITS = ("QuantizedReshape", "Transpose_8", "QuantizedInstanceNorm_8", "QuantizedDepthwiseConv2d_8x8to32",
                    "QuantizedChannelScale_32xf", "QuantizedBiasAdd_32p32to32", "Requantize_32to8",
                    "QuantizeDownAndShrinkRange_32to8")
GELU_FLOAT_EMITS = ("Dequantize", "Mul_f", "Add_f", "Sigmoid_f", "AutoQuantize", "Quantize")
#: largest |gelu_tanh(x) - gelu_erf(x)| over the reals (measured on a fine grid: 4.7e-4 near |x| = 2)
TANH_FORM_ERROR = 5e-4
_C = math.sqrt(2.0 / math.pi)
#: the fewest rows of the features' grid (module doc): op_instancenorm_hvx.c ``getstats_asm`` reads below the
#: data at heights 1-2
GRID_MIN_ROWS = 3


def norm_grid(d: int) -> tuple[int, int]:
    """``(height, width)`` for the ``d`` features of one row (module doc): at least :data:`GRID_MIN_ROWS` rows,
    the fewest bytes of d32 padding ``getstats_asm`` reads (width up to a multiple of 4, height up to even), then
    the fewest rows; ``(1, d)`` where no grid has enough rows."""
    grids = [(h, d // h) for h in range(GRID_MIN_ROWS, d + 1) if d % h == 0]
    if not grids:
        return 1, d
    return min(grids, key=lambda g: ((g[1] + -g[1] % 4) * (g[0] + g[0] % 2) - d, g[0]))


def _erf(v: np.ndarray) -> np.ndarray:
    """erf in float64 (math.erf on each of at most 256 table entries; numpy has no erf)."""
    return np.vectorize(math.erf, otypes=[np.float64])(v)


def gelu_fn(approximate: bool) -> Callable[[np.ndarray], np.ndarray]:
    """GELU in float64: ``0.5 x (1 + erf(x / sqrt 2))``, or ``0.5 x (1 + tanh(c (x + 0.044715 x^3)))``."""
    if approximate:
        return lambda v: 0.5 * v * (1.0 + np.tanh(_C * (v + 0.044715 * v ** 3)))
    return lambda v: 0.5 * v * (1.0 + _erf(np.asarray(v, dtype=np.float64) / math.sqrt(2.0)))


def _float_node(b: GraphBuilder, op: str, refs: list[Ref], shape: tuple[int, ...], name: str) -> Ref:
    node = b.graph.append(op, refs, [OutputDef(tuple(shape), "float")], name=name)
    return Ref(node.node_id, 0)


def emit_gelu_float(b: GraphBuilder, x: Value, out_range: Range | None, name: str) -> Value:
    """GELU in float (module doc: the tanh form) quantized onto ``out_range`` (None: AutoQuantize)."""
    s = x.shape
    f = dequantize(b, x, name)
    sq = _float_node(b, "Mul_f", [f, f], s, f"{name}/square")
    k3 = b.float_const(2.0 * _C * 0.044715, f"{name}/k3")
    k1 = b.float_const(2.0 * _C, f"{name}/k1")
    poly = _float_node(b, "Mul_f", [sq, k3], s, f"{name}/scale_square")
    poly = _float_node(b, "Add_f", [poly, k1], s, f"{name}/poly")
    z = _float_node(b, "Mul_f", [poly, f], s, f"{name}/z")
    gate = _float_node(b, "Sigmoid_f", [z], s, f"{name}/gate")
    y = _float_node(b, "Mul_f", [gate, f], s, f"{name}/gelu")
    return quantize_float(b, y, s, out_range, name)


def emit_layer_norm(b: GraphBuilder, x: Value, gamma: np.ndarray, beta: np.ndarray, out_range: Range | None,
                    name: str) -> Value:
    """LayerNorm over the last (depth) axis of ``x`` with per-feature ``gamma`` / ``beta`` (module doc)."""
    d = x.shape[3]
    rows = int(np.prod(x.shape[:3]))
    h, w = norm_grid(d)
    v = reshape_value(b, x, (1, rows, h, w), f"{name}/rows")
    v = transpose(b, v, [0, 2, 3, 1], f"{name}/rows_as_channels")
    v = node3(b, "QuantizedInstanceNorm_8", v.triple(), v.shape, f"{name}/normalize", None)
    v = transpose(b, v, [0, 3, 1, 2], f"{name}/features_as_channels")
    v = reshape_value(b, v, (1, 1, rows, d), f"{name}/features")
    g = np.broadcast_to(np.asarray(gamma, dtype=np.float64).reshape(-1), (d,))
    bias = np.broadcast_to(np.asarray(beta, dtype=np.float64).reshape(-1), (d,)).copy()
    lw = float_layer_weights(g.reshape(-1, 1, 1, 1), 0, f"{name}/gamma")
    w = np.ascontiguousarray(lw.codes.reshape(1, 1, d, 1))
    y = emit_conv(b, name, v, w, lw.w_range, lw.k, bias, out_range, (1, 1), NNPad.VALID, v.shape, depthwise=True)
    return reshape_value(b, y, x.shape, f"{name}/reshape")


__all__ = ["GELU_FLOAT_EMITS", "LAYER_NORM_EMITS", "TANH_FORM_ERROR", "emit_gelu_float", "emit_layer_norm",
           "gelu_fn"]
