"""TFLite reductions: MEAN, SUM, REDUCE_MAX, REDUCE_MIN (axes, keep_dims), ARG_MAX, ARG_MIN.

Axes are a constant tensor of the source rank r; axis ``a`` (negative
counted from the end) becomes 4-D axis ``a mod r + 4 - r`` (shape4
left-pads). The emitters keep reduced axes with size 1; a QuantizedReshape
(a Reshape for ARG_*'s int32) gives TFLite's output shape, which for
``keep_dims = False`` only drops size-1 axes (same element order).

ARG_MAX / ARG_MIN give int32 indices. An int64 output tensor is computed
as int32 (hexagon_nn has no int64 type) and handed out as such by the
graph; indices of any 4-D tensor fit.
"""
from __future__ import annotations

from hexnn_import.graph import shape4
from hexnn_import.importers.nodes.core import reshape_value
from hexnn_import.importers.nodes.elementwise import reshape_plain
from hexnn_import.importers.nodes.reduce import emit_arg_extreme, emit_mean, emit_reduce_extreme, emit_sum
from hexnn_import.importers.tflite.common import const_ints, finish
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.handlers.elementwise import check_arith, operand_reason, rank_reason
from hexnn_import.importers.tflite.reader import TFOperator

REDUCE_EMITS = ("QuantizedReshape", "Requantize_8to8")


def axes4(imp: TFLiteImporter, op: TFOperator) -> tuple[int, ...] | None:
    """The constant axes (input 1) as distinct 4-D axes, None when not constant or out of range."""
    vals = const_ints(imp, op, 1)
    rank = len(imp.tensor(op.inputs[0]).shape)
    if vals is None or any(not -rank <= int(a) < rank for a in vals.reshape(-1)):
        return None
    return tuple(sorted({int(a) % rank + 4 - rank for a in vals.reshape(-1)}))


def _check_reduce(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """One float32 or per-tensor quantized input and output, rank <= 4, constant axes."""
    why = check_arith(imp, op, (0,))
    if why:
        return why
    if axes4(imp, op) is None:
        return "axes not a constant tensor of valid axes"
    return None


def _reduce(imp: TFLiteImporter, op: TFOperator, kind: str) -> None:
    yt = imp.tensor(op.outputs[0])
    x = imp.qvalue(op.inputs[0])
    axes = axes4(imp, op)
    assert axes is not None
    out = imp.act_range(op.outputs[0])
    if kind == "mean":
        y = emit_mean(imp, x, axes, out, yt.name)
    elif kind == "sum":
        y = emit_sum(imp, x, axes, out, yt.name)
    else:
        y = emit_reduce_extreme(imp, x, axes, kind == "max", yt.name)
    finish(imp, op, reshape_value(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))


@tflite_op("MEAN", ("QuantizedMean_8",) + REDUCE_EMITS, _check_reduce)
def mean(imp: TFLiteImporter, op: TFOperator) -> None:
    """MEAN: QuantizedMean_8 onto the output range (equal ranges: the exact integer
    ``round_half_up(sum / n)``; else float64 rounded half away). TFLite's fixed-point 1/n can
    differ by one code."""
    _reduce(imp, op, "mean")


@tflite_op("SUM", ("QuantizedSum_8to32", "Requantize_32to8", "QuantizeDownAndShrinkRange_32to8") + REDUCE_EMITS,
           _check_reduce)
def sum_(imp: TFLiteImporter, op: TFOperator) -> None:
    """SUM: exact QuantizedSum_8to32, then Requantize_32to8 onto the output range (or shrink)."""
    _reduce(imp, op, "sum")


@tflite_op("REDUCE_MAX", ("QuantizedMaxPool_8", "Dequantize", "Max_f", "Quantize") + REDUCE_EMITS, _check_reduce)
def reduce_max(imp: TFLiteImporter, op: TFOperator) -> None:
    """REDUCE_MAX: over height/width a QuantizedMaxPool_8 with one window; other axes
    Dequantize + Max_f + Quantize on the same range. Exact (codes pass through)."""
    _reduce(imp, op, "max")


@tflite_op("REDUCE_MIN", ("Dequantize", "Min_f", "Quantize") + REDUCE_EMITS, _check_reduce)
def reduce_min(imp: TFLiteImporter, op: TFOperator) -> None:
    """REDUCE_MIN: Dequantize + Min_f + Quantize on the same range (exact)."""
    _reduce(imp, op, "min")


def _check_arg(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A non-constant float32 or per-tensor quantized input of rank <= 4, one constant axis, an int32 / int64
    output."""
    why = rank_reason(imp, op) or operand_reason(imp, op, (0,))  # the output is an index tensor
    if why:
        return why
    if imp.tensor(op.inputs[0]).data is not None:
        return "constant input"
    axes = axes4(imp, op)
    if axes is None or len(axes) != 1:
        return "axis not one constant axis"
    if imp.tensor(op.outputs[0]).dtype not in ("int32", "int64"):
        return f"output of type {imp.tensor(op.outputs[0]).dtype}"
    return None


def _arg(imp: TFLiteImporter, op: TFOperator, take_max: bool) -> None:
    yt = imp.tensor(op.outputs[0])
    axes = axes4(imp, op)
    assert axes is not None
    y = emit_arg_extreme(imp, imp.qvalue(op.inputs[0]), axes[0], take_max, yt.name)
    imp.set_output(op.outputs[0], reshape_plain(imp, y, shape4(yt.shape), yt.name))


@tflite_op("ARG_MAX", ("ArgMax_8toInt32", "Reshape"), _check_arg)
def arg_max(imp: TFLiteImporter, op: TFOperator) -> None:
    """ARG_MAX: ArgMax_8toInt32 on the codes (order-exact; float inputs tie where their quantized
    codes tie); first index on ties, as TFLite."""
    _arg(imp, op, True)


@tflite_op("ARG_MIN", ("ArgMin_8", "Reshape"), _check_arg)
def arg_min(imp: TFLiteImporter, op: TFOperator) -> None:
    """ARG_MIN: ArgMin_8 (int32 indices), as ARG_MAX."""
    _arg(imp, op, False)
