"""ONNX activations: Relu, LeakyRelu, PRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, Softmax, LRN.

Elementwise activations keep their input's layout. With fixed input and
output ranges, Sigmoid, Tanh, HardSigmoid, HardSwish and LeakyRelu are one
table lookup (nodes.lut: one rounding, as onnxruntime computes them);
otherwise they use the shared emitters of nodes.activation. Where the output range
is fixed and lies inside the clip interval, the Requantize_8to8 onto it
saturates exactly as the clip does, so no clip node is needed
(``nodes.activation.emit_clip_activation``). Softmax runs along graph depth:
an NCHW softmax over channels is already there; another axis gets a layout
with that axis last (the layout is tracked, not transposed back).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.importers.nodes.core import ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1, clip_implied, node3, requantize_to
from hexnn_import.importers.nodes.activation import (alpha_const, emit_clip_activation, emit_hard_swish,
                                                    emit_lrn_depth, emit_prelu, lrn_problem, emit_sigmoid, emit_softmax,
                                                    emit_tanh, relabel)
from hexnn_import.importers.nodes.elementwise import broadcast4, emit_add, emit_minmax
from hexnn_import.importers.onnx.common import check_data, clip_bounds, const_input, need_const
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import NHWC, axis4
from hexnn_import.importers.nodes import lut
from hexnn_import.importers.nodes.lut import LUT_EMITS, emit_lut
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.nodes.values import Value

ACT_EMITS = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8", "Requantize_8to8", "QuantizedPRelu_8_V2",
             "QuantizedTile_8", "QuantizedSigmoid_8", "QuantizedTanh_8", "QuantizedAdd_8p8to8", "QuantizedAdd_8p8to32",
             "QuantizedMul_8x8to32", "Requantize_32to8", "QuantizedMaximum", "QuantizedMinimum") + LUT_EMITS


def _lut(imp: OnnxImporter, x: Value, out: str, fn) -> Value | None:  # type: ignore[no-untyped-def]
    """A table lookup (nodes.lut) when the input and output ranges are both fixed; else None."""
    rng = imp.tensors.act_range(out)
    if x.range is None or rng is None:
        return None
    return emit_lut(imp, x, fn, rng, out)


def _unary(imp: OnnxImporter, node: ONode):  # type: ignore[no-untyped-def]
    t = imp.tensors.tensor(node.inputs[0])
    return t.value, t.perm, node.outputs[0]


@onnx_op("Relu", ACT_EMITS, lambda imp, node: check_data(imp, node))
def relu(imp: OnnxImporter, node: ONode) -> None:
    """Relu: folded into the output range when that range starts at 0, else QuantizedRelu_8."""
    x, perm, out = _unary(imp, node)
    imp.tensors.finish(out, emit_clip_activation(imp, x, ACT_RELU, imp.tensors.act_range(out), out), perm)


def _computed_bounds(imp: OnnxImporter, node: ONode) -> bool:
    """Clip (opset 11+) with a min or max that is not constant (computed by the graph)."""
    return node.since >= 11 and need_const(imp, node, (1, 2)) is not None


def _check_clip(imp: OnnxImporter, node: ONode) -> str | None:
    """Data as for every op; constant min and max with min <= max, or computed scalar bounds (opset 11+)."""
    why = check_data(imp, node)
    if why:
        return why
    if _computed_bounds(imp, node):
        for pos in (1, 2):
            name = node.input(pos)
            if name and not imp.tensors.is_const(name):
                why = check_data(imp, node, (pos,))
                if why or int(np.prod(imp.tensors.shape(name))) != 1:
                    return why or f"bound {name} of shape {list(imp.tensors.shape(name))} is not a scalar"
        return None
    lo, hi = clip_bounds(imp, node)
    return None if lo <= hi else f"Clip min {lo} above max {hi}"


def clip_computed(imp: OnnxImporter, node: ONode) -> None:
    """Clip with computed bounds: ``min(max(x, lo), hi)`` as QuantizedMaximum then QuantizedMinimum (each
    bound a one-element value broadcast over ``x``). With a fixed output range both steps write onto it:
    rounding onto one grid is monotone, so it commutes with max and min and the result is the one
    rounding of the exact clip (what QDQ's DequantizeLinear -> Clip -> QuantizeLinear computes). ONNX
    applies max then min, so ``lo > hi`` gives ``hi`` everywhere, as here."""
    x, perm, out = _unary(imp, node)
    rng = imp.tensors.act_range(out)
    lo, hi = node.input(1), node.input(2)
    if lo:
        x = emit_minmax(imp, x, imp.tensors.value(lo, perm), rng, out if not hi else f"{out}/min", True)
    if hi:
        x = emit_minmax(imp, x, imp.tensors.value(hi, perm), rng, out, False)
    imp.tensors.finish(out, x, perm)


@onnx_op("Clip", ACT_EMITS, _check_clip)
def clip(imp: OnnxImporter, node: ONode) -> None:
    """Clip: RELU / RELU6 / RELU_N1_TO_1 by name, any other interval with QuantizedClamp_8; computed
    bounds with QuantizedMaximum / QuantizedMinimum (:func:`clip_computed`)."""
    if _computed_bounds(imp, node):
        clip_computed(imp, node)
        return
    x, perm, out = _unary(imp, node)
    lo, hi = clip_bounds(imp, node)
    lo = -math.inf if lo <= -3.4e38 else lo
    hi = math.inf if hi >= 3.4e38 else hi
    rng = imp.tensors.act_range(out)
    acts = {(0.0, math.inf): ACT_RELU, (0.0, 6.0): ACT_RELU6, (-1.0, 1.0): ACT_RELU_N1_TO_1}
    if (lo, hi) in acts:
        y = emit_clip_activation(imp, x, acts[(lo, hi)], rng, out)
    elif clip_implied(rng, lo, hi):
        y = requantize_to(imp, x, rng, out)
    else:
        c_lo, c_hi = imp.range_consts((lo, hi), f"{out}/clamp")
        y = node3(imp, "QuantizedClamp_8", x.triple() + [c_lo, c_hi], x.shape, f"{out}/clamp", None)
    imp.tensors.finish(out, y, perm)


@onnx_op("LeakyRelu", ACT_EMITS, lambda imp, node: check_data(imp, node))
def leaky_relu(imp: OnnxImporter, node: ONode) -> None:
    """LeakyRelu -> QuantizedPRelu_8_V2 with one exact alpha, straight onto the output range."""
    x, perm, out = _unary(imp, node)
    a = float(node.attr("alpha", 0.01))
    y = _lut(imp, x, out, lut.leaky_relu(a))
    if y is None:
        y = emit_prelu(imp, x, alpha_const(imp, a, f"{out}/alpha"), imp.tensors.act_range(out), out)
    imp.tensors.finish(out, y, perm)


@onnx_op("PRelu", ACT_EMITS, lambda imp, node: check_data(imp, node, (0, 1)))
def prelu(imp: OnnxImporter, node: ONode) -> None:
    """PRelu: slopes laid out like the data (a [C,1,1] slope becomes [1,1,1,C] under NHWC)."""
    x, perm, out = _unary(imp, node)
    slope = imp.tensors.value(node.inputs[1], perm)
    shape = broadcast4(x.shape, slope.shape)
    y = emit_prelu(imp, x, slope, imp.tensors.act_range(out), out, shape if shape != x.shape else None)
    imp.tensors.finish(out, y, perm)


@onnx_op("Sigmoid", ACT_EMITS, lambda imp, node: check_data(imp, node))
def sigmoid(imp: OnnxImporter, node: ONode) -> None:
    """Sigmoid: exact QuantizedTanh_8 form onto [0, 255/256] (QDQ / TFLite-style output), else QuantizedSigmoid_8."""
    x, perm, out = _unary(imp, node)
    y = _lut(imp, x, out, lut.sigmoid)
    imp.tensors.finish(out, y if y is not None else emit_sigmoid(imp, x, imp.tensors.act_range(out), out), perm)


@onnx_op("Tanh", ACT_EMITS, lambda imp, node: check_data(imp, node))
def tanh(imp: OnnxImporter, node: ONode) -> None:
    """Tanh -> QuantizedTanh_8 (fixed [-1, 127/128])."""
    x, perm, out = _unary(imp, node)
    y = _lut(imp, x, out, np.tanh)
    imp.tensors.finish(out, y if y is not None else emit_tanh(imp, x, out), perm)


def _check_hard_sigmoid(imp: OnnxImporter, node: ONode) -> str | None:
    """Data as for every op; alpha > 0."""
    return check_data(imp, node) or (None if float(node.attr("alpha", 0.2)) > 0 else "alpha <= 0")


@onnx_op("HardSigmoid", ACT_EMITS, _check_hard_sigmoid)
def hard_sigmoid(imp: OnnxImporter, node: ONode) -> None:
    """``clip(alpha x + beta, 0, 1)``: QuantizedAdd_8p8to8(x, beta/alpha) onto [0, 1/alpha] saturates
    exactly as the clip does; those codes read on [0, 1] are the result (a relabel, no node)."""
    x, perm, out = _unary(imp, node)
    alpha, beta = float(node.attr("alpha", 0.2)), float(node.attr("beta", 0.5))
    y = _lut(imp, x, out, lut.hard_sigmoid(alpha, beta))
    if y is not None:
        imp.tensors.finish(out, y, perm)
        return
    gate = emit_add(imp, x, alpha_const(imp, beta / alpha, f"{out}/offset"), (0.0, 1.0 / alpha), out)
    imp.tensors.finish(out, relabel(imp, gate, (0.0, 1.0), f"{out}/hard_sigmoid"), perm)


@onnx_op("HardSwish", ACT_EMITS, lambda imp, node: check_data(imp, node))
def hard_swish(imp: OnnxImporter, node: ONode) -> None:
    """HardSwish: ``x relu6(x + 3) / 6`` (nodes.activation.emit_hard_swish)."""
    x, perm, out = _unary(imp, node)
    y = _lut(imp, x, out, lut.hard_swish)
    imp.tensors.finish(out, y if y is not None else emit_hard_swish(imp, x, imp.tensors.act_range(out), out), perm)


def softmax_axis(imp: OnnxImporter, node: ONode) -> int | None:
    """The one ONNX axis the softmax runs along (opset < 13: the coerced 2-D view), None if several."""
    shape = imp.tensors.shape(node.inputs[0])
    r = len(shape)
    if node.since >= 13:
        a = int(node.attr("axis", -1))
        return a + r if a < 0 else a
    a = int(node.attr("axis", 1))
    a = a + r if a < 0 else a
    big = [i for i in range(a, r) if shape[i] != 1]
    return (r - 1 if not big else big[0]) if len(big) <= 1 else None


def _check_softmax(imp: OnnxImporter, node: ONode) -> str | None:
    """Data as for every op; softmax along one axis (not several flattened axes)."""
    why = check_data(imp, node)
    if why:
        return why
    return None if softmax_axis(imp, node) is not None else "softmax over several flattened axes"


@onnx_op("Softmax", ("QuantizedSoftmax_8", "Transpose_8", "QuantizedReshape", "Requantize_8to8"), _check_softmax)
def softmax(imp: OnnxImporter, node: ONode) -> None:
    """Softmax -> QuantizedSoftmax_8 along graph depth (module doc), output [0, 1]."""
    name, out = node.inputs[0], node.outputs[0]
    r = len(imp.tensors.shape(name))
    a4 = axis4(softmax_axis(imp, node), r)  # type: ignore[arg-type]
    perm = imp.tensors.perm_of(name)
    if perm[3] != a4:
        perm = tuple([p for p in perm if p != a4] + [a4])  # type: ignore[assignment]
    x = imp.tensors.value(name, perm)
    imp.tensors.finish(out, emit_softmax(imp, x, 1.0, out), perm)


def _check_lrn(imp: OnnxImporter, node: ONode) -> str | None:
    """A rank-4 input, an odd size; bias >= 1, alpha >= 0, beta >= 0 (nnlib's QuantizedLRN_8)."""
    why = check_data(imp, node)
    if why:
        return why
    if len(imp.tensors.shape(node.inputs[0])) != 4:
        return "LRN over a tensor of rank other than 4"
    if int(node.attr("size")) % 2 != 1:
        return "even LRN size (asymmetric window)"
    return lrn_problem(float(node.attr("bias", 1.0)), float(node.attr("alpha", 1e-4)), float(node.attr("beta", 0.75)))


@onnx_op("LRN", ("QuantizedLRN_8", "Transpose_8", "QuantizedReshape", "Requantize_8to8"), _check_lrn)
def lrn(imp: OnnxImporter, node: ONode) -> None:
    """LRN across channels -> QuantizedLRN_8 along NHWC depth (``alpha / size`` per ONNX)."""
    out = node.outputs[0]
    size = int(node.attr("size"))
    x = imp.tensors.value(node.inputs[0], NHWC)
    y = emit_lrn_depth(imp, x, (size - 1) // 2, float(node.attr("bias", 1.0)),
                       float(node.attr("alpha", 1e-4)) / size, float(node.attr("beta", 0.75)), out)
    imp.tensors.finish(out, y, NHWC)
