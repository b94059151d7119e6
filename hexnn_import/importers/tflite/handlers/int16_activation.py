"""The int16 branch of TFLite's elementwise builtins and edges (``tflite.handlers.int16`` module doc): ADD / SUB /
MUL on QuantizedAdd_u16 / QuantizedSub_u16 / QuantizedMul_u16, RELU / RELU6 / RELU_N1_TO_1 as a
requantize onto the clipped range (and an exact top clamp), SOFTMAX / LOGISTIC / TANH / LEAKY_RELU in float
between a three-piece dequantize and quantize, QUANTIZE / DEQUANTIZE at float and int8 edges.
"""
from __future__ import annotations

from hexnn_import.graph import shape4
# the 8-bit handlers are registered first, so they are the ones wrapped
import hexnn_import.importers.tflite.handlers.activation  # noqa: F401
import hexnn_import.importers.tflite.handlers.elementwise  # noqa: F401
import hexnn_import.importers.tflite.handlers.quantize  # noqa: F401
from hexnn_import.importers.nodes.core import ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1, node3
from hexnn_import.importers.nodes.int16 import binary16, range16, requantize16, to16, to8
from hexnn_import.importers.nodes.int16_float import dequantize16, float_unary16, leaky_relu16, quantize16
from hexnn_import.importers.tflite.importer import Handler, TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.int16 import is_int16, scale_of
from hexnn_import.importers.tflite.int16_branch import (EDGE16, FLOAT16, activation16, branch, check16, emits16,
                                                        finish16, out_range16, value16)
from hexnn_import.importers.tflite.int16_checks import check_edge16, check_elementwise16
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.nodes.values import Value


@tflite_op("SOFTMAX", emits16("SOFTMAX", FLOAT16 + ("Softmax_f", "Mul_f")), check16("SOFTMAX", check_elementwise16))
@branch("SOFTMAX")
def softmax(imp: TFLiteImporter, op: TFOperator) -> None:
    """SOFTMAX int16x8 in float: the input dequantized in three 8-bit pieces, Mul_f by beta, Softmax_f,
    quantized in three pieces onto the output's scale (``nodes.int16_float.float_unary16``; QuantizedSoftmax_8
    would round logits and probabilities to 1/255)."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], float_unary16(imp, imp.value(op.inputs[0]), "Softmax_f", scale_of(yt), yt.name,
                                                float(op.options.Beta())))


@tflite_op("LOGISTIC", emits16("LOGISTIC", FLOAT16 + ("Sigmoid_f",)), check16("LOGISTIC", check_elementwise16))
@branch("LOGISTIC")
def logistic(imp: TFLiteImporter, op: TFOperator) -> None:
    """LOGISTIC int16x8 in float (Sigmoid_f between three-piece dequantize and quantize)."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], float_unary16(imp, imp.value(op.inputs[0]), "Sigmoid_f", scale_of(yt), yt.name))


@tflite_op("TANH", emits16("TANH", FLOAT16 + ("Tanh_f",)), check16("TANH", check_elementwise16))
@branch("TANH")
def tanh(imp: TFLiteImporter, op: TFOperator) -> None:
    """TANH int16x8 in float (Tanh_f between three-piece dequantize and quantize)."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], float_unary16(imp, imp.value(op.inputs[0]), "Tanh_f", scale_of(yt), yt.name))


@tflite_op("LEAKY_RELU", emits16("LEAKY_RELU", FLOAT16 + ("Mul_f", "Maximum_f")),
           check16("LEAKY_RELU", check_elementwise16))
@branch("LEAKY_RELU")
def leaky_relu(imp: TFLiteImporter, op: TFOperator) -> None:
    """LEAKY_RELU int16x8 in float (``max(x, alpha x)``: Mul_f, Maximum_f) between three-piece dequantize
    and quantize."""
    yt = imp.tensor(op.outputs[0])
    alpha = float(imp.options(op).Alpha())
    imp.set_output(op.outputs[0], leaky_relu16(imp, imp.value(op.inputs[0]), alpha, scale_of(yt), yt.name))


# ---- 16-bit elementwise, shape, activations -------------------------------------------------------
#: builtin -> (the 16-bit op, the handler's docstring)
BINARY16: dict[str, tuple[str, str]] = {
    "ADD": ("QuantizedAdd_u16", "ADD int16x8: QuantizedAdd_u16 onto the output range (fused activation: the range "
                                "cut, codes saturate)."),
    "SUB": ("QuantizedSub_u16", "SUB int16x8: QuantizedSub_u16 onto the output range."),
    "MUL": ("QuantizedMul_u16", "MUL int16x8: QuantizedMul_u16 onto the output range."),
}


def _binary_handler(name: str, hex_op: str, doc: str) -> Handler:
    """The int16x8 handler of the elementwise builtin ``name``: ``hex_op`` onto the output range."""

    def handle(imp: TFLiteImporter, op: TFOperator) -> None:
        yt = imp.tensor(op.outputs[0])
        finish16(imp, op, binary16(imp, hex_op, value16(imp, op.inputs[0]), value16(imp, op.inputs[1]),
                                   out_range16(imp, op), shape4(yt.shape), yt.name))

    handle.__name__, handle.__qualname__, handle.__doc__ = name.lower(), name.lower(), doc
    return handle


for _name, (_hex, _doc) in BINARY16.items():
    tflite_op(_name, emits16(_name, (_hex,)), check16(_name, check_elementwise16))(
        branch(_name)(_binary_handler(_name, _hex, _doc)))


def _clip(imp: TFLiteImporter, op: TFOperator, act: int) -> None:
    """QuantizedAdd_u16 with a zero onto the clip's range (codes saturate at its bottom; one rounding),
    its top clamped (``nodes.int16.activation_range``)."""
    yt = imp.tensor(op.outputs[0])
    y = requantize16(imp, imp.value(op.inputs[0]), activation16(imp, op, act)[0], yt.name)
    finish16(imp, op, y, act)


@tflite_op("RELU", emits16("RELU", ("QuantizedAdd_u16",)), check16("RELU", check_elementwise16))
@branch("RELU")
def relu(imp: TFLiteImporter, op: TFOperator) -> None:
    """RELU int16x8: onto ``[0, 65536 s]`` (codes saturate at 0)."""
    _clip(imp, op, ACT_RELU)


@tflite_op("RELU6", emits16("RELU6", ("QuantizedAdd_u16",)), check16("RELU6", check_elementwise16))
@branch("RELU6")
def relu6(imp: TFLiteImporter, op: TFOperator) -> None:
    """RELU6 int16x8: onto the output range cut to ``[0, 6]``."""
    _clip(imp, op, ACT_RELU6)


@tflite_op("RELU_N1_TO_1", emits16("RELU_N1_TO_1", ("QuantizedAdd_u16",)),
           check16("RELU_N1_TO_1", check_elementwise16))
@branch("RELU_N1_TO_1")
def relu_n1_to_1(imp: TFLiteImporter, op: TFOperator) -> None:
    """RELU_N1_TO_1 int16x8: onto the output range cut to ``[-1, 1]``."""
    _clip(imp, op, ACT_RELU_N1_TO_1)


# ---- float / int8 edges ----------------------------------------------------------------------------
@tflite_op("QUANTIZE", emits16("QUANTIZE", EDGE16), check16("QUANTIZE", check_edge16))
@branch("QUANTIZE")
def quantize(imp: TFLiteImporter, op: TFOperator) -> None:
    """QUANTIZE to or from int16: float -> int16 in three 8-bit pieces (``nodes.int16_float.quantize16``), int16 ->
    int16 QuantizedAdd_u16 with a zero, int8 -> int16 Convert_8_u16 then that, int16 -> int8
    Convert_u16_8 onto the int8 range."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    if not is_int16(yt):  # int16 -> int8 / uint8
        v = imp.value(op.inputs[0])
        out = imp.qrange(yt)
        y = node3(imp, "Convert_u16_8", v.triple() + list(imp.range_consts(out, f"{yt.name}/to8")), v.shape,
                  f"{yt.name}/to8", out)
    elif xt.dtype == "float32":
        v = imp.value(op.inputs[0])
        src = imp.graph.node(v.data.src_id)  # the float behind the INPUT's Quantize / AutoQuantize
        y = quantize16(imp, src.inputs[0], v.shape, scale_of(yt), yt.name)
    elif is_int16(xt):
        y = requantize16(imp, value16(imp, op.inputs[0]), range16(scale_of(yt)), yt.name)
    else:  # int8 / uint8 -> int16
        y = requantize16(imp, to16(imp, imp.qvalue(op.inputs[0]), yt.name), range16(scale_of(yt)), yt.name)
    imp.set_output(op.outputs[0], y)


@tflite_op("DEQUANTIZE", emits16("DEQUANTIZE", EDGE16), check16("DEQUANTIZE", check_edge16))
@branch("DEQUANTIZE")
def dequantize(imp: TFLiteImporter, op: TFOperator) -> None:
    """DEQUANTIZE of int16: a graph output in three 8-bit pieces (``nodes.int16_float.dequantize16``, float32), an
    inner tensor as the float model's quint8 (Convert_u16_8 over its range)."""
    yt = imp.tensor(op.outputs[0])
    v = imp.value(op.inputs[0])
    if op.outputs[0] in imp.model.outputs:
        imp.set_output(op.outputs[0], Value(dequantize16(imp, v, yt.name), v.shape, "float"))
    else:
        imp.set_output(op.outputs[0], to8(imp, v, yt.name))
