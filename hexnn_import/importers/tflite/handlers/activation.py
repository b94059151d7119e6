"""TFLite activation and normalization builtins: SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1,
RELU_0_TO_1, LEAKY_RELU, PRELU, HARD_SWISH, SQRT, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION.

TFLite's fixed output parameters are honoured: the documented ops' fixed
ranges (SEMANTICS §6: sigmoid / softmax ``[0, 1]``, tanh ``[-1, 127/128]``,
L2Normalize ``[-1, 128/127]``) are moved onto the output tensor's range by
tflite.common.finish (Requantize_8to8) when they differ - the one extra
rounding noted per builtin; LOGISTIC and TANH reach TFLite's ``1/256`` and
``1/128`` grids with a single rounding.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.importers.nodes.core import ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1, clip_implied, node3
from hexnn_import.importers.nodes.activation import (
    alpha_const,
    emit_clip_activation,
    emit_hard_swish,
    emit_l2_normalize,
    emit_lrn_depth,
    lrn_problem,
    emit_prelu,
    emit_sigmoid,
    emit_softmax,
    emit_sqrt,
    emit_tanh,
)
from hexnn_import.importers.nodes.float_math import LOG_SOFTMAX_EMITS, emit_log_softmax
from hexnn_import.importers.tflite.common import finish, out_shape
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.handlers.elementwise import ACT_EMITS, check_arith, in4
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.nodes.values import Value

REQ = ("Requantize_8to8",)


def check_unary(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """One float32 or per-tensor quantized input and output, rank <= 4, supported fused activation."""
    return check_arith(imp, op, (0,))


def _check_with_options(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """One float32 or per-tensor quantized input and output, rank <= 4, an options table."""
    return check_unary(imp, op) or (None if op.options is not None else "missing options")


def _unary(imp: TFLiteImporter, op: TFOperator) -> tuple[Value, str]:
    return imp.qvalue(op.inputs[0]), imp.tensor(op.outputs[0]).name


@tflite_op("SOFTMAX", ("QuantizedSoftmax_8",) + REQ, _check_with_options)
def softmax(imp: TFLiteImporter, op: TFOperator) -> None:
    """SOFTMAX (beta) along the last axis: QuantizedSoftmax_8 onto ``[0, 1]`` (float64, one rounding),
    then Requantize_8to8 onto TFLite's ``[0, 255/256]`` - a second rounding (within 1 LSB)."""
    x, name = _unary(imp, op)
    finish(imp, op, emit_softmax(imp, x, float(op.options.Beta()), name))


@tflite_op("LOG_SOFTMAX", LOG_SOFTMAX_EMITS, check_unary)
def log_softmax(imp: TFLiteImporter, op: TFOperator) -> None:
    """LOG_SOFTMAX along the last axis in float32 ops: ``d = x - max(x)`` (Max_f, Sub_f), ``d - log(sum(exp(d)))``
    (exp and log as :mod:`nodes.float_math` builds them, Sum_f; the sum is >= 1), then Quantize onto the output's
    range (int8: TFLite's fixed ``[-255/16, 0]``) or AutoQuantize (run-time): one rounding."""
    x, name = _unary(imp, op)
    finish(imp, op, emit_log_softmax(imp, x, imp.act_range(op.outputs[0]), name))


@tflite_op("RELU_0_TO_1", ("QuantizedClamp_8",) + REQ, check_unary)
def relu_0_to_1(imp: TFLiteImporter, op: TFOperator) -> None:
    """RELU_0_TO_1: a Requantize_8to8 onto the output range when it lies inside ``[0, 1]`` (saturation clips,
    one rounding); else QuantizedClamp_8 to ``[0, 1]`` first."""
    x, name = _unary(imp, op)
    if not clip_implied(imp.act_range(op.outputs[0]), 0.0, 1.0):
        lo, hi = imp.range_consts((0.0, 1.0), f"{name}/clamp")
        x = node3(imp, "QuantizedClamp_8", x.triple() + [lo, hi], x.shape, f"{name}/clamp", None)
    finish(imp, op, x)


@tflite_op("LOGISTIC", ("QuantizedSigmoid_8",) + REQ, check_unary)
def logistic(imp: TFLiteImporter, op: TFOperator) -> None:
    """LOGISTIC: QuantizedSigmoid_8 onto ``[0, 1]``, then a Requantize_8to8 onto the output's parameters
    (TFLite's fixed ``[0, 255/256]``: a second rounding)."""
    x, name = _unary(imp, op)
    finish(imp, op, emit_sigmoid(imp, x, imp.act_range(op.outputs[0]), name))


@tflite_op("TANH", ("QuantizedTanh_8",) + REQ, check_unary)
def tanh(imp: TFLiteImporter, op: TFOperator) -> None:
    """TANH: QuantizedTanh_8 onto hexagon_nn's fixed ``[-1, 128/127]``, then a Requantize_8to8 onto the
    output's parameters (TFLite's scale 1/128: a second rounding)."""
    x, name = _unary(imp, op)
    finish(imp, op, emit_tanh(imp, x, name))


def _clip(act: int) -> Callable[[TFLiteImporter, TFOperator], None]:
    def handler(imp: TFLiteImporter, op: TFOperator) -> None:
        x, name = _unary(imp, op)
        finish(imp, op, emit_clip_activation(imp, x, act, imp.act_range(op.outputs[0]), name))

    handler.__doc__ = ("Clip activation: a Requantize_8to8 onto the output range when that range lies inside "
                       "the clip interval (saturation clips, one rounding); else the relu/clamp op first.")
    return handler


tflite_op("RELU", ACT_EMITS, check_unary)(_clip(ACT_RELU))
tflite_op("RELU6", ACT_EMITS, check_unary)(_clip(ACT_RELU6))
tflite_op("RELU_N1_TO_1", ACT_EMITS, check_unary)(_clip(ACT_RELU_N1_TO_1))


@tflite_op("LEAKY_RELU", ("QuantizedPRelu_8_V2",) + REQ, _check_with_options)
def leaky_relu(imp: TFLiteImporter, op: TFOperator) -> None:
    """LEAKY_RELU: QuantizedPRelu_8_V2 with the alpha as an exact quint8 Const (code 255 on
    ``[0, alpha]``), exact rounding onto the output range. LiteRT's int8/uint8 kernel lands one
    code further from zero on about half of the negative inputs (measured; within 1 LSB)."""
    x, name = _unary(imp, op)
    alpha = alpha_const(imp, float(op.options.Alpha()), f"{name}/alpha")
    finish(imp, op, emit_prelu(imp, x, alpha, imp.act_range(op.outputs[0]), name))


def _check_prelu(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized input, alpha and output, rank <= 4; alpha broadcasts to the input's
    shape."""
    why = check_arith(imp, op)
    if why:
        return why
    try:
        shape = np.broadcast_shapes(in4(imp, op, 0), in4(imp, op, 1))
    except ValueError:
        return "input and alpha shapes do not broadcast"
    return None if tuple(shape) == out_shape(imp, op) else "output shape is not the broadcast shape"


@tflite_op("PRELU", ("QuantizedPRelu_8_V2", "QuantizedTile_8") + REQ, _check_prelu)
def prelu(imp: TFLiteImporter, op: TFOperator) -> None:
    """PRELU: QuantizedPRelu_8_V2 with the alpha tensor (quint8, its own range), exact rounding onto
    the output range; an input smaller than the alphas is tiled first."""
    x, name = _unary(imp, op)
    alpha = imp.qvalue(op.inputs[1])
    y = emit_prelu(imp, x, alpha, imp.act_range(op.outputs[0]), name, out_shape(imp, op))
    finish(imp, op, y)


@tflite_op("HARD_SWISH", ("QuantizedAdd_8p8to8", "QuantizedMul_8x8to32", "Requantize_32to8",
                          "QuantizeDownAndShrinkRange_32to8") + REQ, check_unary)
def hard_swish(imp: TFLiteImporter, op: TFOperator) -> None:
    """HARD_SWISH decomposed: ``x * relu6(x + 3) / 6`` = QuantizedAdd_8p8to8 onto ``[0, 6]`` (the
    saturation is relu6), read on ``[0, 1]``, QuantizedMul_8x8to32 with x, Requantize_32to8. The gate
    has 8 bits where TFLite keeps 16 (one more rounding)."""
    x, name = _unary(imp, op)
    finish(imp, op, emit_hard_swish(imp, x, imp.act_range(op.outputs[0]), name))


@tflite_op("SQRT", ("QuantizedSqrt_8", "Sub_f") + REQ, check_unary)
def sqrt(imp: TFLiteImporter, op: TFOperator) -> None:
    """SQRT: QuantizedSqrt_8 onto ``[0, sqrt(max)]`` (negative inputs first become 0, where TFLite
    fails), then Requantize_8to8 onto the output range - a second rounding."""
    x, name = _unary(imp, op)
    finish(imp, op, emit_sqrt(imp, x, name))


@tflite_op("L2_NORMALIZATION", ("L2Normalize_8", "QuantizedReshape") + ACT_EMITS, check_unary)
def l2_normalization(imp: TFLiteImporter, op: TFOperator) -> None:
    """L2_NORMALIZATION along the last axis: L2Normalize_8 (on a ``[1, rows, d, 1]`` view, along axis 2: the
    device's accurate path) onto ``[-1, 1]``, then
    Requantize_8to8 onto TFLite's fixed ``[-1, 127/128]`` (a second rounding). A zero vector gives
    0 (TFLite's float kernel divides by ``sqrt(max(sum, 1e-6))``: also ~0)."""
    x, name = _unary(imp, op)
    finish(imp, op, emit_l2_normalize(imp, x, name))


def _check_lrn(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """One float32 or per-tensor quantized input and output, rank <= 4; bias >= 1, alpha >= 0, beta >= 0
    (nnlib's QuantizedLRN_8)."""
    why = _check_with_options(imp, op)
    if why:
        return why
    o = op.options
    return lrn_problem(float(o.Bias()), float(o.Alpha()), float(o.Beta()))


@tflite_op("LOCAL_RESPONSE_NORMALIZATION", ("QuantizedLRN_8",) + REQ, _check_lrn)
def local_response_normalization(imp: TFLiteImporter, op: TFOperator) -> None:
    """LOCAL_RESPONSE_NORMALIZATION (TFLite: float only) across depth: QuantizedLRN_8 with a
    ``[1,1,1,2r+1]`` window and alpha times the window size (QuantizedLRN_8 divides by it)."""
    x, name = _unary(imp, op)
    o = op.options
    y = emit_lrn_depth(imp, x, int(o.Radius()), float(o.Bias()), float(o.Alpha()), float(o.Beta()), name)
    finish(imp, op, y)
