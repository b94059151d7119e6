"""TFLite elementwise binary builtins: ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM, comparisons, SELECT; ADD_N.

Operands broadcast numpy-style after left-padding to 4-D (shape4). A fixed
output range (quantized model, or calibrated float) is written directly
(one rounding); a run-time range uses the data-ranged ops (issue 4: 8p8to32
products + QuantizeDownAndShrinkRange_32to8). Fused activations fold into
the output range (tflite.common.finish).

Booleans: EQUAL / NOT_EQUAL / LESS / GREATER give uint8 0/1 values without
a range (the comparison ops' documented output), which SELECT's Select_8
reads as its condition. A boolean *graph output* leaves the graph as that
uint8 0/1 tensor (GraphIO dtype ``bool``); the Runner hands it back as is
(uint8 0/1, not numpy bool). Float operands are compared after their
quantization: values closer than a step can compare differently from
LiteRT's float comparison, and equal floats compare equal only when both
operands share one grid (equal fixed / calibrated ranges).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.graph import OutputDef, Ref, shape4
from hexnn_import.importers.nodes.builder import calibrated_range
from hexnn_import.importers.nodes.core import Range, dequantize, quantize_float
from hexnn_import.importers.nodes.elementwise import (
    COMPARE_OPS,
    div_supported,
    emit_add,
    emit_compare,
    emit_div,
    emit_minmax,
    emit_mul,
    emit_select,
    emit_sub,
    reshape_plain,
)
from hexnn_import.importers.tflite.common import check_fused, check_io, finish, out_shape
from hexnn_import.importers.tflite.importer import TFLiteImporter, is_quantized, tflite_op
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.nodes.values import Value
from hexnn_import.ops.quant import quantize_u8, step_zero

ACT_EMITS = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8", "Requantize_8to8")
BinaryEmitter = Callable[[TFLiteImporter, Value, Value, "Range | None", str], Value]


# ---- checks shared by the tflite/handlers/* modules of this family -------------------------------------
def rank_reason(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A tensor of rank > 4 (the importer maps ranks <= 4 onto 4-D by left-padding)."""
    for i in list(op.inputs) + list(op.outputs):
        if i >= 0 and len(imp.tensor(i).shape) > 4:
            t = imp.tensor(i)
            return f"tensor {t.name} has rank {len(t.shape)} > 4"
    return None


def operand_reason(imp: TFLiteImporter, op: TFOperator, positions: tuple[int, ...]) -> str | None:
    """Each listed input (constants included) is float32 or per-tensor int8/uint8."""
    for pos in positions:
        if pos >= len(op.inputs) or op.inputs[pos] < 0:
            return f"missing input {pos}"
        t = imp.tensor(op.inputs[pos])
        if t.dtype != "float32" and not is_quantized(t):
            kind = "per-channel " if t.quant is not None and t.quant.per_channel else ""
            return f"operand {t.name} of type {kind}{t.dtype} is not float32 or per-tensor int8/uint8"
    return None


def check_arith(imp: TFLiteImporter, op: TFOperator, positions: tuple[int, ...] = (0, 1)) -> str | None:
    """Float32 or per-tensor quantized operands and output of one kind, rank <= 4, a supported fused activation."""
    return (rank_reason(imp, op) or check_io(imp, op, positions) or operand_reason(imp, op, positions)
            or check_fused(imp, op))


def in4(imp: TFLiteImporter, op: TFOperator, pos: int) -> tuple[int, int, int, int]:
    """The 4-D shape of an operator input."""
    return shape4(imp.tensor(op.inputs[pos]).shape)


# ---- arithmetic ------------------------------------------------------------------------------------
def _binary(imp: TFLiteImporter, op: TFOperator, emit: BinaryEmitter) -> None:
    name = imp.tensor(op.outputs[0]).name
    y = emit(imp, imp.qvalue(op.inputs[0]), imp.qvalue(op.inputs[1]), imp.act_range(op.outputs[0]), name)
    finish(imp, op, y)


@tflite_op("ADD", ("QuantizedAdd_8p8to8", "QuantizedAdd_8p8to32", "QuantizeDownAndShrinkRange_32to8") + ACT_EMITS,
           check_arith)
def add(imp: TFLiteImporter, op: TFOperator) -> None:
    """ADD: QuantizedAdd_8p8to8 onto the output range (exact rounding of the real sum; TFLite's
    fixed-point path can differ by one code at ties), run-time ranges: 8p8to32 + shrink."""
    _binary(imp, op, emit_add)


@tflite_op("SUB", ("QuantizedNeg_8", "QuantizedAdd_8p8to8", "QuantizedSub_8p8to32",
                   "QuantizeDownAndShrinkRange_32to8") + ACT_EMITS, check_arith)
def sub(imp: TFLiteImporter, op: TFOperator) -> None:
    """SUB: ``a + neg(b)`` (QuantizedNeg_8 is exact on a mirrored range) onto the output range;
    run-time ranges: QuantizedSub_8p8to32 + shrink."""
    _binary(imp, op, emit_sub)


@tflite_op("MUL", ("QuantizedMul_8x8to32", "Requantize_32to8", "QuantizeDownAndShrinkRange_32to8") + ACT_EMITS,
           check_arith)
def mul(imp: TFLiteImporter, op: TFOperator) -> None:
    """MUL: exact QuantizedMul_8x8to32 then Requantize_32to8 (31-bit gain, round half up) or shrink."""
    _binary(imp, op, emit_mul)


def _check_div(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """As ADD; the dividend has the result's shape and the divisor is a scalar or a per-depth vector
    (QuantizedDiv_8); a constant divisor holds no 0 after quantization."""
    why = check_arith(imp, op)
    if why:
        return why
    if in4(imp, op, 0) != out_shape(imp, op):
        return "dividend smaller than the result (QuantizedDiv_8 broadcasts the divisor only)"
    divisor = imp.tensor(op.inputs[1])
    if divisor.data is not None and divisor.data.size:
        data = np.asarray(divisor.data, dtype=np.float64)
        if divisor.dtype == "float32":  # as qvalue quantizes it
            rng = calibrated_range(min(float(data.min()), 0.0), max(float(data.max()), 0.0))
            hit = quantize_u8(data, *rng) == step_zero(*rng)[1]
        else:
            hit = data == int(divisor.quant.zero_point[0])  # type: ignore[union-attr]
        if np.any(hit):
            return "constant divisor holds 0 (after quantization)"
    return div_supported(in4(imp, op, 0), in4(imp, op, 1))


@tflite_op("DIV", ("QuantizedDiv_8",) + ACT_EMITS, _check_div)
def div(imp: TFLiteImporter, op: TFOperator) -> None:
    """DIV: QuantizedDiv_8 (computed as op_div.c on the device: float32 code tables, ops/kernels/recip_div_device.py;
    TFLite's integer reciprocal can differ by one code). Divisor: a scalar or a per-channel vector only."""
    _binary(imp, op, emit_div)


@tflite_op("MAXIMUM", ("QuantizedMaximum", "Requantize_8to8"), check_arith)
def maximum(imp: TFLiteImporter, op: TFOperator) -> None:
    """MAXIMUM: QuantizedMaximum of the real values onto the output range. TFLite takes the max of
    the raw codes (the converter gives both inputs the output's parameters); equal there."""
    _binary(imp, op, lambda b, a, c, out, name: emit_minmax(b, a, c, out, name, True))


@tflite_op("MINIMUM", ("QuantizedMinimum", "Requantize_8to8"), check_arith)
def minimum(imp: TFLiteImporter, op: TFOperator) -> None:
    """MINIMUM: QuantizedMinimum, as MAXIMUM."""
    _binary(imp, op, lambda b, a, c, out, name: emit_minmax(b, a, c, out, name, False))


# ---- comparisons and select ------------------------------------------------------------------------
def _check_compare(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized operands of one kind, rank <= 4, a bool output."""
    why = rank_reason(imp, op) or check_io(imp, op, (0, 1), outputs=()) or operand_reason(imp, op, (0, 1))
    if why:
        return why
    if imp.tensor(op.outputs[0]).dtype != "bool":
        return f"output of type {imp.tensor(op.outputs[0]).dtype}, expected bool"
    return None


def _compare(relation: str) -> None:
    @tflite_op(relation, (COMPARE_OPS[relation],), _check_compare)
    def handler(imp: TFLiteImporter, op: TFOperator) -> None:
        yt = imp.tensor(op.outputs[0])
        y = emit_compare(imp, relation, imp.qvalue(op.inputs[0]), imp.qvalue(op.inputs[1]), yt.name)
        imp.set_output(op.outputs[0], y)

    handler.__doc__ = (f"{relation}: {COMPARE_OPS[relation]} compares the exact real values of both "
                       "operands -> uint8 0/1 (float inputs are compared after their quantization).")


for _rel in ("EQUAL", "NOT_EQUAL", "LESS", "GREATER"):
    _compare(_rel)


def _cond_value(imp: TFLiteImporter, index: int) -> Value:
    """A bool tensor as a uint8 0/1 value (constants become uint8 Consts)."""
    t = imp.tensor(index)
    if t.data is not None:
        s = shape4(t.shape)
        return Value(imp.graph.const_ref(np.asarray(t.data).astype(np.uint8).reshape(s), t.name), s, "uint8")
    return imp.value(index)


def _cond_shape(imp: TFLiteImporter, op: TFOperator) -> tuple[int, int, int, int]:
    """The condition's 4-D shape; SELECT's rank-1 condition picks along the operands' first axis."""
    ct, xt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1])
    if op.opname == "SELECT" and len(ct.shape) == 1 and len(xt.shape) > 1:
        return shape4((ct.shape[0],) + (1,) * (len(xt.shape) - 1))
    return shape4(ct.shape)


def _check_select(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A bool condition (SELECT: of the operands' shape or one value per row), float32 or per-tensor quantized
    operands of one kind, rank <= 4, shapes that broadcast."""
    why = rank_reason(imp, op) or check_io(imp, op, (1, 2)) or operand_reason(imp, op, (1, 2))
    if why:
        return why
    c, x = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1])
    if c.dtype != "bool":
        return f"condition of type {c.dtype}, expected bool"
    if op.opname == "SELECT" and tuple(c.shape) != tuple(x.shape) and not (
            len(c.shape) == 1 and len(x.shape) > 1 and c.shape[0] == x.shape[0]):
        return f"SELECT condition of shape {list(c.shape)} for operands {list(x.shape)}"
    try:
        np.broadcast_shapes(_cond_shape(imp, op), in4(imp, op, 1), in4(imp, op, 2), out_shape(imp, op))
    except ValueError:
        return "shapes do not broadcast"
    return None


@tflite_op("SELECT", ("Select_8", "QuantizedTile_8", "Reshape", "Requantize_8to8"), _check_select)
def select(imp: TFLiteImporter, op: TFOperator) -> None:
    """SELECT / SELECT_V2: Select_8 after QuantizedTile_8 broadcasting; X and Y are first moved onto
    the output range. TFLite copies raw codes (the converter gives X, Y and the output one range)."""
    yt = imp.tensor(op.outputs[0])
    cond = reshape_plain(imp, _cond_value(imp, op.inputs[0]), _cond_shape(imp, op), f"{yt.name}/cond")
    y = emit_select(imp, cond, imp.qvalue(op.inputs[1]), imp.qvalue(op.inputs[2]), out_shape(imp, op),
                    imp.act_range(op.outputs[0]), yt.name)
    finish(imp, op, y)


tflite_op("SELECT_V2", ("Select_8", "QuantizedTile_8", "Reshape", "Requantize_8to8"), _check_select)(select)


def _check_add_n(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 inputs and output, rank <= 4, all of the output's shape (TFLite's ADD_N does not broadcast)."""
    why = check_arith(imp, op, tuple(range(len(op.inputs))))
    if why:
        return why
    if imp.tensor(op.outputs[0]).dtype != "float32":
        return "quantized ADD_N (TFLite defines it for float32 and int32 only: LiteRT has no int8 kernel)"
    want = out_shape(imp, op)
    bad = [imp.tensor(i).name for k, i in enumerate(op.inputs) if in4(imp, op, k) != want]
    return f"inputs {bad} not of the output's shape" if bad else None


@tflite_op("ADD_N", ("Dequantize", "AddN_f", "AutoQuantize", "Quantize", "Requantize_8to8"), _check_add_n)
def add_n(imp: TFLiteImporter, op: TFOperator) -> None:
    """ADD_N: Dequantize each input, AddN_f (float32, one shape), then AutoQuantize (Quantize onto a calibrated
    range): one rounding."""
    name, shape = imp.tensor(op.outputs[0]).name, out_shape(imp, op)
    refs = [dequantize(imp, imp.qvalue(i), f"{name}/in{k}") for k, i in enumerate(op.inputs)]
    node = imp.graph.append("AddN_f", refs, [OutputDef(shape, "float")], name=f"{name}/add_n")
    finish(imp, op, quantize_float(imp, Ref(node.node_id, 0), shape, imp.act_range(op.outputs[0]), name))
