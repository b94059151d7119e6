"""TFLite builtins the Hexagon delegate accepts that need a decomposition: NEG, SQUARED_DIFFERENCE, RSQRT;
FULLY_CONNECTED with run-time weights and 8-bit tensors without quantization (helpers for tflite/handlers/conv_pool.py).

Source: the TFLite Hexagon delegate's op builders
(``tensorflow/lite/delegates/hexagon/builders/op_factory.cc`` accepts NEG,
SQUARED_DIFFERENCE and RSQRT for int8 / uint8) and their single-op tests
(``builders/tests/neg_test.cc``, ``squared_difference_test.cc``,
``rsqrt_test.cc``), rebuilt in ``tests/importers/test_tflite_delegate_cases.py``.

- NEG: QuantizedNeg_8 (exact on the mirrored range) then Requantize_8to8
  onto the output tensor's range (one rounding).
- SQUARED_DIFFERENCE: ``(a - b) * (a - b)`` on the dequantized operands
  (Dequantize, Sub_f, Mul_f) and one Quantize onto the output range.
- RSQRT: a 256-entry table (``1 / sqrt(x)`` of every input code, rounded
  half away from zero as TFLite rounds, onto the output range) looked up
  with CastUInt8ToInt32 + Gather_8 (SEMANTICS §6: Gather_8 copies codes).
  ``x <= 0`` gives the largest code, as TFLite's int8 kernel does for 0.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from hexnn_import.graph import OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, bias_qint32, dequantize, node3, quantize_float, reshape_value, to_8bit
from hexnn_import.importers.nodes.elementwise import broadcast4, emit_neg
from hexnn_import.importers.nodes.matmul import matmul_op
from hexnn_import.importers.nodes.movement import transpose
from hexnn_import.importers.tflite.common import finish
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.handlers.elementwise import check_arith, rank_reason
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.nodes.values import Value
from hexnn_import.ops.quant import dequantize_u8, step_zero

REQ = ("Requantize_8to8",)
LUT_EMITS = ("CastUInt8ToInt32", "Gather_8")


def _check_quantized(imp: TFLiteImporter, op: TFOperator, positions: tuple[int, ...]) -> str | None:
    """Float32 or per-tensor quantized operands and output of one kind, rank <= 4, and a fixed (quantized or
    calibrated) range for every listed input and the output."""
    why = check_arith(imp, op, positions)
    if why:
        return why
    for i in [op.inputs[p] for p in positions] + [op.outputs[0]]:
        if imp.tensor(i).data is None and imp.act_range(i) is None:
            return (f"tensor {imp.tensor(i).name} has no fixed range (a float model needs calibration "
                    "for this op)")
    return None


# ---- NEG -------------------------------------------------------------------------------------------
@tflite_op("NEG", ("QuantizedNeg_8",) + REQ, lambda imp, op: check_arith(imp, op, (0,)))
def neg(imp: TFLiteImporter, op: TFOperator) -> None:
    """NEG: QuantizedNeg_8 (exact, mirrored range), then Requantize_8to8 onto the output range."""
    name = imp.tensor(op.outputs[0]).name
    finish(imp, op, emit_neg(imp, imp.qvalue(op.inputs[0]), name))


# ---- SQUARED_DIFFERENCE ----------------------------------------------------------------------------
def _check_sqdiff(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Operands and output with fixed (quantized or calibrated) ranges, rank <= 4, shapes that broadcast."""
    why = _check_quantized(imp, op, (0, 1))
    if why:
        return why
    try:
        np.broadcast_shapes(imp.tensor(op.inputs[0]).shape, imp.tensor(op.inputs[1]).shape)
    except ValueError:
        return "operand shapes do not broadcast"
    return None


def emit_squared_difference(b: GraphBuilder, a: Value, c: Value, out: Range, name: str) -> Value:
    """``(a - c)**2`` in float (Dequantize, Sub_f, Mul_f: exact up to float32) quantized once onto ``out``.

    An 8-bit difference would add a rounding as large as the output step
    times ``2 |a - c| * width(a - c) / width(out)`` (measured: 4 codes on
    ``squared_difference_test.cc`` SameShape); TFLite keeps the difference
    with 7 extra bits, so the float path is the faithful one.
    """
    shape = broadcast4(a.shape, c.shape)
    fa, fc = dequantize(b, a, f"{name}/a"), dequantize(b, c, f"{name}/b")
    g = b.graph
    d = g.append("Sub_f", [fa, fc], [OutputDef(shape, "float")], name=f"{name}/diff")
    sq = g.append("Mul_f", [Ref(d.node_id, 0), Ref(d.node_id, 0)], [OutputDef(shape, "float")], name=f"{name}/square")
    return quantize_float(b, Ref(sq.node_id, 0), shape, out, name)


@tflite_op("SQUARED_DIFFERENCE", ("Dequantize", "Sub_f", "Mul_f", "Quantize") + REQ, _check_sqdiff)
def squared_difference(imp: TFLiteImporter, op: TFOperator) -> None:
    """SQUARED_DIFFERENCE: ``(a - b)**2`` in float, one rounding onto the output range (module doc)."""
    name = imp.tensor(op.outputs[0]).name
    out = imp.act_range(op.outputs[0])
    assert out is not None
    y = emit_squared_difference(imp, imp.qvalue(op.inputs[0]), imp.qvalue(op.inputs[1]), out, name)
    finish(imp, op, y)


# ---- RSQRT -----------------------------------------------------------------------------------------
def table_codes(fn: Callable[[np.ndarray], np.ndarray], in_range: Range, out_range: Range) -> np.ndarray:
    """The 256 output codes of ``fn`` for every input code, rounded half away from zero (TFLite's
    ``TfLiteRound``), saturated; NaN / +inf give the top code, -inf the bottom one."""
    real = dequantize_u8(np.arange(256, dtype=np.uint8), *in_range).astype(np.float64)
    step, zero = step_zero(*out_range)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.asarray(fn(real), dtype=np.float64) / step
    q = np.where(np.isnan(q), np.inf, q)
    q = np.sign(q) * np.floor(np.abs(q) + 0.5) + zero
    return np.clip(q, 0, 255).astype(np.uint8)


def emit_table(b: GraphBuilder, x: Value, table: np.ndarray, out_range: Range, name: str) -> Value:
    """Look the codes of ``x`` up in a 256-entry quint8 table on ``out_range`` (CastUInt8ToInt32 + Gather_8)."""
    g = b.graph
    cast = g.append("CastUInt8ToInt32", [x.data], [OutputDef(x.shape, "int32")], name=f"{name}/codes")
    refs = [Ref(cast.node_id, 0), g.const_ref(table.reshape(1, 1, 1, 256), f"{name}/table"),
            *b.range_consts(out_range, f"{name}/table"), b.int_const(3, f"{name}/index_dim"),
            b.int_const(4, f"{name}/index_rank")]
    return node3(b, "Gather_8", refs, x.shape, f"{name}/lookup", out_range)


def rsqrt_fn(v: np.ndarray) -> np.ndarray:
    """``1 / sqrt(v)``, +inf for ``v <= 0`` (TFLite's int8 kernel maps 0 to the largest code)."""
    return np.where(v > 0, 1.0 / np.sqrt(np.maximum(v, 1e-300)), np.inf)


@tflite_op("RSQRT", LUT_EMITS + REQ, lambda imp, op: _check_quantized(imp, op, (0,)) or rank_reason(imp, op))
def rsqrt(imp: TFLiteImporter, op: TFOperator) -> None:
    """RSQRT: a table of ``1/sqrt(x)`` onto the output range (one rounding; module doc)."""
    name = imp.tensor(op.outputs[0]).name
    x = imp.qvalue(op.inputs[0])
    out = imp.act_range(op.outputs[0])
    assert x.range is not None and out is not None
    y = emit_table(imp, x, table_codes(rsqrt_fn, x.range, out), out, name)
    finish(imp, op, y)


# ---- FULLY_CONNECTED with run-time weights -----------------------------------------------------------
def check_runtime_fc(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """FULLY_CONNECTED whose weights are computed at run time (``matmul_test.cc``): per-tensor
    quantized input, weights and output with fixed ranges, a constant bias (or none)."""
    why = _check_quantized(imp, op, (0, 1))
    if why:
        return f"non-constant weights: {why}"
    w = imp.tensor(op.inputs[1])
    if len(w.shape) != 2:
        return f"non-constant weights of rank {len(w.shape)} (expected [units, input size])"
    if len(op.inputs) > 2 and op.inputs[2] >= 0 and imp.tensor(op.inputs[2]).data is None:
        return "non-constant bias"
    if op.options is not None and op.options.WeightsFormat() != 0:
        return "shuffled weights format"
    return None


def emit_runtime_fc(imp: TFLiteImporter, op: TFOperator, x: Value, bias_real: np.ndarray) -> Value:
    """``x [1,1,rows,I] @ W.T`` for run-time weights ``W [O, I]`` onto the output range.

    Transpose_8 turns W into ``[1,1,I,O]``; QuantizedMatMul_8x8to32_ref (a B computed at run time:
    nodes.matmul.matmul_op) gives the exact sums (SEMANTICS §3); the bias is added as qint32 on a power-of-two
    fraction of the product step (QuantizedBiasAdd_32p32to32, exact for
    TFLite's int32 bias on ``input scale * weight scale``); Requantize_32to8
    rounds once onto the output range, where TFLite applies its fixed-point
    multiplier (the two roundings can differ by one code at ties).
    """
    yt = imp.tensor(op.outputs[0])
    w = imp.qvalue(op.inputs[1])
    n_out, n_in = imp.tensor(op.inputs[1]).shape
    w = transpose(imp, reshape_value(imp, w, (1, 1, n_out, n_in), f"{yt.name}/weights"), [0, 1, 3, 2],
                  f"{yt.name}/weights_t")
    shape = (1, 1, x.shape[2], n_out)
    refs = [x.data, w.data, x.mn, x.mx, w.mn, w.mx]
    acc = node3(imp, matmul_op(imp, w), refs, shape, f"{yt.name}/matmul", None,  # type: ignore[arg-type]
                etype="qint32")
    if np.any(bias_real):
        assert x.range is not None and w.range is not None
        prod = (x.range[1] - x.range[0]) / 255.0 * (w.range[1] - w.range[0]) / 255.0
        refs = acc.triple()
        b = bias_qint32(imp, bias_real, prod, f"{yt.name}/bias")
        acc = node3(imp, "QuantizedBiasAdd_32p32to32", [refs[0], b[0], refs[1], refs[2], b[1], b[2]], shape,
                    f"{yt.name}/bias_add", None, etype="qint32")
    return to_8bit(imp, acc, imp.act_range(op.outputs[0]), yt.name)


