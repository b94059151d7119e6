"""TFLite elementwise functions of one tensor: ELU, EXP, LOG, ABS, SQUARE, FLOOR, CEIL, ROUND, SIGN, SIN, COS.

hexagon_nn has no quantized op for any of them. Each is one function
``f`` of each element, so:

* fixed input and output ranges (an int8 / uint8 model, or a calibrated
  float one): a 256-entry table (:mod:`nodes.lut`: entry ``c`` is
  ``f((c - zero) * step)`` quantized onto the output range, one rounding;
  CastUInt8ToInt32 + Gather_8). LiteRT's int8 ELU / EXP / LOG build the
  same table (float32, ``std::round``): the two differ only on exact ties;
* a run-time range (a float model without calibration): Dequantize, the
  function in the float32 ops of hexagon_nn_ops.txt (Abs_f, Floor_f,
  Ceil_f, Round_f, Mul_f, Clamp_f; exp, log and sin as
  :mod:`nodes.float_math` builds them), AutoQuantize.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.graph import Ref
from hexnn_import.importers.nodes.core import dequantize, quantize_float
from hexnn_import.importers.nodes.float_math import (
    FLOAT_MATH_EMITS,
    SIN_EMITS,
    emit_log_float,
    exp_f,
    float_node,
    sin_f,
)
from hexnn_import.importers.nodes.lut import LUT_EMITS, emit_lut
from hexnn_import.importers.nodes.values import Value
from hexnn_import.importers.tflite.common import finish
from hexnn_import.importers.tflite.handlers.activation import REQ, check_unary
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.reader import TFOperator

Shape = tuple[int, ...]
#: a float32 body: (builder, dequantized input, shape, name) -> result
FloatBody = Callable[[TFLiteImporter, Ref, Shape, str], Ref]
TableFn = Callable[[np.ndarray], np.ndarray]
UNARY_EMITS = LUT_EMITS + FLOAT_MATH_EMITS + REQ


def _one(op: str) -> FloatBody:
    """The body of one float32 unary op (Abs_f, Floor_f, ...)."""
    return lambda b, x, s, name: float_node(b, op, [x], s, f"{name}/{op}")


def _square(b: TFLiteImporter, x: Ref, s: Shape, name: str) -> Ref:
    return float_node(b, "Mul_f", [x, x], s, f"{name}/square")


def _elu(b: TFLiteImporter, x: Ref, s: Shape, name: str) -> Ref:
    """``relu(x) + (exp(min(x, 0)) - 1)``."""
    neg = float_node(b, "Minimum_f", [x, b.float_const(0.0, f"{name}/zero")], s, f"{name}/negative")
    em1 = float_node(b, "Add_f", [exp_f(b, neg, s, f"{name}/exp"), b.float_const(-1.0, f"{name}/minus_one")], s,
                     f"{name}/expm1")
    return float_node(b, "Add_f", [float_node(b, "Relu_f", [x], s, f"{name}/relu"), em1], s, f"{name}/elu")


def _sign(b: TFLiteImporter, x: Ref, s: Shape, name: str) -> Ref:
    """``clamp(x * 2**60, -1, 1)``: every nonzero dequantized value is at least one step (far above 2**-60)."""
    big = float_node(b, "Mul_f", [x, b.float_const(2.0 ** 60, f"{name}/gain")], s, f"{name}/scaled")
    refs = [big, b.float_const(-1.0, f"{name}/lo"), b.float_const(1.0, f"{name}/hi")]
    return float_node(b, "Clamp_f", refs, s, f"{name}/sign")


def _cos(b: TFLiteImporter, x: Ref, s: Shape, name: str) -> Ref:
    """``sin(x + pi/2)``."""
    shifted = float_node(b, "Add_f", [x, b.float_const(np.pi / 2, f"{name}/quarter")], s, f"{name}/shift")
    return sin_f(b, shifted, s, name)


def _elu_table(v: np.ndarray) -> np.ndarray:
    return np.where(v < 0, np.expm1(np.minimum(v, 0.0)), v)


def _log_table(v: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, log(<0) = nan: the lowest code
        return np.nan_to_num(np.log(v), nan=-np.inf)


def _exp_table(v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.exp(v)


def emit_unary(imp: TFLiteImporter, op: TFOperator, table: TableFn, body: FloatBody | None) -> None:
    """``table`` as a lookup with fixed ranges; else Dequantize, ``body`` in float32 ops, AutoQuantize.

    ``body`` None: LOG's run-time form (:func:`nodes.float_math.emit_log_float`, which first raises the
    input to half its step).
    """
    x = imp.qvalue(op.inputs[0])
    name = imp.tensor(op.outputs[0]).name
    out = imp.act_range(op.outputs[0])
    if x.range is not None and out is not None:
        y: Value = emit_lut(imp, x, table, out, name)
    elif body is None:
        y = emit_log_float(imp, x, name)
    else:
        y = quantize_float(imp, body(imp, dequantize(imp, x, name), x.shape, name), x.shape, out, name)
    finish(imp, op, y)


def _checker(builtin: str, quantized: bool = False) -> Callable[[TFLiteImporter, TFOperator], str | None]:
    """check_unary; a quantized instance only where TFLite defines one (LiteRT's int8 kernels)."""

    def check(imp: TFLiteImporter, op: TFOperator) -> str | None:
        why = check_unary(imp, op)
        if why:
            return why
        dtype = imp.tensor(op.outputs[0]).dtype
        if dtype != "float32" and not (quantized and dtype == "int8"):
            kinds = "float32 and int8" if quantized else "float32"
            return f"{dtype} {builtin} (TFLite defines it for {kinds} only: LiteRT has no {dtype} kernel)"
        return None

    kinds = "a float32 or per-tensor int8" if quantized else "a float32"
    check.__doc__ = f"One input and output, {kinds} tensor of rank <= 4 (what TFLite defines)."
    return check


@tflite_op("ELU", UNARY_EMITS + ("Minimum_f", "Relu_f"), _checker("ELU", quantized=True))
def elu(imp: TFLiteImporter, op: TFOperator) -> None:
    """ELU: x if x > 0 else exp(x) - 1 (module doc)."""
    emit_unary(imp, op, _elu_table, _elu)


@tflite_op("EXP", UNARY_EMITS, _checker("EXP", quantized=True))
def exp(imp: TFLiteImporter, op: TFOperator) -> None:
    """EXP: exp(x); run-time: halvings, a polynomial, squarings (module doc)."""
    emit_unary(imp, op, _exp_table, exp_f)


@tflite_op("LOG", UNARY_EMITS, _checker("LOG", quantized=True))
def log(imp: TFLiteImporter, op: TFOperator) -> None:
    """LOG: log(x), log(0) saturating low; run-time: LRN_f's power form (module doc)."""
    emit_unary(imp, op, _log_table, None)


@tflite_op("ABS", UNARY_EMITS + ("Abs_f",), _checker("ABS", quantized=True))
def abs(imp: TFLiteImporter, op: TFOperator) -> None:
    """ABS: |x| (module doc)."""
    emit_unary(imp, op, np.abs, _one("Abs_f"))


@tflite_op("SQUARE", UNARY_EMITS, _checker("SQUARE"))
def square(imp: TFLiteImporter, op: TFOperator) -> None:
    """SQUARE: x * x (module doc)."""
    emit_unary(imp, op, np.square, _square)


@tflite_op("FLOOR", UNARY_EMITS + ("Floor_f",), _checker("FLOOR"))
def floor(imp: TFLiteImporter, op: TFOperator) -> None:
    """FLOOR: floor(x) (module doc)."""
    emit_unary(imp, op, np.floor, _one("Floor_f"))


@tflite_op("CEIL", UNARY_EMITS + ("Ceil_f",), _checker("CEIL"))
def ceil(imp: TFLiteImporter, op: TFOperator) -> None:
    """CEIL: ceil(x) (module doc)."""
    emit_unary(imp, op, np.ceil, _one("Ceil_f"))


@tflite_op("ROUND", UNARY_EMITS + ("Round_f",), _checker("ROUND"))
def round(imp: TFLiteImporter, op: TFOperator) -> None:
    """ROUND: x rounded half to even (numpy, Round_f and TFLite alike) (module doc)."""
    emit_unary(imp, op, np.round, _one("Round_f"))


@tflite_op("SIGN", UNARY_EMITS + ("Clamp_f",), _checker("SIGN"))
def sign(imp: TFLiteImporter, op: TFOperator) -> None:
    """SIGN: -1, 0 or 1 (module doc)."""
    emit_unary(imp, op, np.sign, _sign)


@tflite_op("SIN", UNARY_EMITS + SIN_EMITS, _checker("SIN"))
def sin(imp: TFLiteImporter, op: TFOperator) -> None:
    """SIN: sin(x); run-time: range reduction by Round_f, a degree-15 polynomial (module doc)."""
    emit_unary(imp, op, np.sin, sin_f)


@tflite_op("COS", UNARY_EMITS + SIN_EMITS, _checker("COS"))
def cos(imp: TFLiteImporter, op: TFOperator) -> None:
    """COS: cos(x) = sin(x + pi/2) (module doc)."""
    emit_unary(imp, op, np.cos, _cos)
