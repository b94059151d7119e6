"""TFLite QUANTIZE and DEQUANTIZE at the float / quantized boundary.

In the graph every float activation is already quint8 (builder.py's range
policy), so these builtins are range moves, not type changes:

- QUANTIZE float -> int8/uint8: when the float value came straight from a
  float tensor (the AutoQuantize / Quantize at a graph input), a Quantize
  of that float onto the output range (one rounding, as TFLite); otherwise
  a Requantize_8to8 from its range. A float constant is quantized here.
- QUANTIZE int8/uint8 -> int8/uint8 (requantize, int8 <-> uint8): a
  Requantize_8to8 when the ranges differ; none when only the zero point
  moves by 128 with the type (same real range: the codes are the same).
- DEQUANTIZE of an activation: the same quint8 value, now a float tensor
  (a graph output is dequantized at the OUTPUT). DEQUANTIZE of a constant
  (float16 weights, int8 constants) is folded by the checker: the output
  tensor becomes a float32 constant, so later checkers (conv weights) see it.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.core import node3, requantize_to
from hexnn_import.importers.nodes.activation import quint8_const
from hexnn_import.importers.tflite.common import check_io
from hexnn_import.importers.tflite.importer import TFLiteImporter, is_quantized, tflite_op
from hexnn_import.importers.tflite.handlers.elementwise import rank_reason
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.ops.quant import quantize_u8

FLOAT_SOURCES = ("AutoQuantize", "Quantize")


def _check_quantize(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A float32 or per-tensor quantized input, a per-tensor int8 / uint8 output, rank <= 4."""
    why = rank_reason(imp, op) or check_io(imp, op, same_type=False)
    if why:
        return why
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    if not is_quantized(yt):
        return f"output of type {yt.dtype} (int8/uint8 per-tensor only)"
    if xt.dtype != "float32" and not is_quantized(xt):
        return f"input of type {xt.dtype}"
    return None


@tflite_op("QUANTIZE", ("Quantize", "Requantize_8to8"), _check_quantize)
def quantize(imp: TFLiteImporter, op: TFOperator) -> None:
    """QUANTIZE: Quantize from the source float when there is one, else Requantize_8to8 (module doc)."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    out = imp.qrange(yt)
    if xt.dtype == "float32" and xt.data is not None:
        v = quint8_const(imp, quantize_u8(np.asarray(xt.data, dtype=np.float64), *out), out, yt.name)
    elif xt.dtype == "float32":
        v = imp.value(op.inputs[0])
        src = imp.graph.node(v.data.src_id)
        if src.op in FLOAT_SOURCES and v.data.output_idx == 0:
            refs = [src.inputs[0], *imp.range_consts(out, f"{yt.name}/quantize")]
            v = node3(imp, "Quantize", refs, v.shape, f"{yt.name}/quantize", out)
        else:
            v = requantize_to(imp, v, out, yt.name)
    else:
        v = requantize_to(imp, imp.qvalue(op.inputs[0]), out, yt.name)
    imp.set_output(op.outputs[0], v)


def fold_constant(imp: TFLiteImporter, op: TFOperator) -> bool:
    """Make the output of a DEQUANTIZE of a constant a float32 constant; True when it did."""
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    if xt.data is None:
        return False
    if yt.data is None:
        data = np.asarray(xt.data, dtype=np.float64)
        if xt.quant is not None and xt.quant.scale.size:
            shape = [1] * data.ndim
            if xt.quant.per_channel:
                shape[xt.quant.axis] = -1
            data = (data - xt.quant.zero_point.reshape(shape)) * xt.quant.scale.reshape(shape)
        yt.data = data.astype(np.float32).reshape(yt.shape)
    return True


def _check_dequantize(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A per-tensor quantized input and a float32 output, rank <= 4; a constant float16 / int8 / uint8 / int16
    input folds into float data."""
    why = rank_reason(imp, op)
    if why:
        return why
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    if yt.dtype != "float32":
        return f"output of type {yt.dtype}"
    if xt.data is not None and xt.dtype in ("float16", "int8", "uint8", "int16"):
        if xt.dtype != "float16" and (xt.quant is None or not xt.quant.scale.size):
            return f"constant input of type {xt.dtype} without quantization"
        fold_constant(imp, op)
        return None
    return None if is_quantized(xt) else f"input of type {xt.dtype}"


@tflite_op("DEQUANTIZE", (), _check_dequantize)
def dequantize(imp: TFLiteImporter, op: TFOperator) -> None:
    """DEQUANTIZE: no node (module doc); a folded constant is made a Const by its first reader."""
    if fold_constant(imp, op):
        return
    imp.set_output(op.outputs[0], imp.qvalue(op.inputs[0]))
