"""ONNX Pow with a constant exponent, Sqrt, Exp and Log (issue 18: "Pow with a constant exponent"; issue 33).

hexagon_nn has no power op. With fixed input and output ranges (QDQ,
QOperator, calibrated float) any exponent is one 256-entry table lookup
(:mod:`nodes.lut`: exactly what onnxruntime computes for DequantizeLinear ->
Pow -> QuantizeLinear). With a run-time range the exponent must have an op
form: 1 is the input itself, an integer up to 8 is repeated
QuantizedMul_8x8to32 (square-and-multiply), 0.5 is QuantizedSqrt_8
(``nodes.activation.emit_sqrt``); any other exponent is refused with that
reason. (The run-time form is also what calibration runs first, so an
exponent without it is refused even when calibration data is given.)

Exp and Log: the table with fixed ranges; with run-time ranges float32 ops
(:mod:`nodes.float_math`: Exp by halvings, a polynomial and squarings, Log by
LRN_f's power form).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.activation import emit_sqrt
from hexnn_import.importers.nodes.elementwise import emit_mul
from hexnn_import.importers.onnx.common import check_data, const_input
from hexnn_import.importers.nodes.float_math import FLOAT_MATH_EMITS, emit_exp_float, emit_log_float
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.nodes.lut import LUT_EMITS, emit_lut
from hexnn_import.importers.onnx.handlers.binary import BINARY_EMITS
from hexnn_import.importers.onnx.reader import ONode

MATH_EMITS = BINARY_EMITS + LUT_EMITS + ("QuantizedSqrt_8", "QuantizedClamp_8", "Sub_f", "Requantize_8to8")
#: exponents with an op form when the ranges are only known at run time (integers: repeated products)
OP_EXPONENTS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 0.5)


def _exponent(imp: OnnxImporter, node: ONode) -> float | None:
    """The constant exponent when it is one value (a scalar or all-equal tensor), else None."""
    e = const_input(imp, node, 1)
    if e is None or e.size == 0 or not np.all(e == e.reshape(-1)[0]):
        return None
    return float(e.reshape(-1)[0])


def _fixed(imp: OnnxImporter, node: ONode) -> bool:
    """Input and output ranges are both known at import (a table lookup can take any function)."""
    return imp.tensors.act_range(node.inputs[0]) is not None and imp.tensors.act_range(node.outputs[0]) is not None


def _check_pow(imp: OnnxImporter, node: ONode) -> str | None:
    """A constant exponent, one value for the whole tensor, that does not broadcast the base; 1, 2 and 0.5
    always, other exponents need fixed ranges (a quantized model or --calibration)."""
    why = check_data(imp, node)
    if why:
        return why
    if not imp.tensors.is_const(node.input(1)):
        return "exponent is not constant"
    e = _exponent(imp, node)
    if e is None:
        return "exponent varies along the tensor"
    if imp.tensors.shape(node.outputs[0]) != imp.tensors.shape(node.inputs[0]):
        return "exponent broadcasts the base to a larger shape"
    if e not in OP_EXPONENTS and not _fixed(imp, node):
        return (f"exponent {e:g} with run-time ranges (hexagon_nn has no power op: exponents 1, 2, 0.5 map to "
                "ops; others need fixed ranges, a quantized model or --calibration)")
    return None


def _power(e: float):  # type: ignore[no-untyped-def]
    def fn(v: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.nan_to_num(np.power(v, e), nan=0.0, posinf=np.finfo(np.float32).max, neginf=0.0)
    return fn


def _integer_power(imp: OnnxImporter, x, n: int, rng, out: str):  # type: ignore[no-untyped-def]
    """``x ** n`` (n >= 1) by square-and-multiply; intermediate products keep run-time ranges."""
    result, base, k = None, x, 0
    while n:
        last = n == 1
        if n & 1:
            result = base if result is None else emit_mul(imp, result, base, rng if last else None,
                                                          out if last else f"{out}/p{k}")
        n >>= 1
        if n:
            base = emit_mul(imp, base, base, None, f"{out}/sq{k}")
        k += 1
    return result


@onnx_op("Pow", MATH_EMITS, _check_pow)
def pow_(imp: OnnxImporter, node: ONode) -> None:
    """Pow(x, e): a table lookup with fixed ranges, else x (e=1), x*x (e=2), QuantizedSqrt_8 (e=0.5)."""
    t = imp.tensors.tensor(node.inputs[0])
    out = node.outputs[0]
    e = _exponent(imp, node)
    assert e is not None
    rng = imp.tensors.act_range(out)
    if t.value.range is not None and rng is not None:
        y = emit_lut(imp, t.value, _power(e), rng, out)
    elif e == 0.5:
        y = emit_sqrt(imp, t.value, out)
    else:
        y = _integer_power(imp, t.value, int(e), rng, out)
    imp.tensors.finish(out, y, t.perm)


@onnx_op("Sqrt", MATH_EMITS, lambda imp, node: check_data(imp, node))
def sqrt(imp: OnnxImporter, node: ONode) -> None:
    """Sqrt: a table lookup with fixed ranges, else QuantizedSqrt_8 (negative inputs become 0)."""
    t = imp.tensors.tensor(node.inputs[0])
    out = node.outputs[0]
    rng = imp.tensors.act_range(out)
    if t.value.range is not None and rng is not None:
        y = emit_lut(imp, t.value, _power(0.5), rng, out)
    else:
        y = emit_sqrt(imp, t.value, out)
    imp.tensors.finish(out, y, t.perm)


def _exp(v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.exp(v)


def _log(v: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf saturates to the lowest code
        return np.nan_to_num(np.log(v), nan=-np.inf)


def _check_exp_log(imp: OnnxImporter, node: ONode) -> str | None:
    """Data as for every op: a 256-entry table with fixed ranges (quantized or calibrated), float32 ops with
    run-time ranges (Exp: halvings, a polynomial, squarings; Log: LRN_f's power form)."""
    return check_data(imp, node)


@onnx_op(("Exp", "Log"), LUT_EMITS + FLOAT_MATH_EMITS, _check_exp_log)
def exp_log(imp: OnnxImporter, node: ONode) -> None:
    """Exp / Log: a table lookup with fixed ranges, else float32 ops onto a run-time range (module doc)."""
    t = imp.tensors.tensor(node.inputs[0])
    out = node.outputs[0]
    rng = imp.tensors.act_range(out)
    if t.value.range is not None and rng is not None:
        y = emit_lut(imp, t.value, _exp if node.op_type == "Exp" else _log, rng, out)
    elif node.op_type == "Exp":
        y = emit_exp_float(imp, t.value, out)
    else:
        y = emit_log_float(imp, t.value, out)
    imp.tensors.finish(out, y, t.perm)
