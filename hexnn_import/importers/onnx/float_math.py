"""Exp and Log of data with run-time ranges, in documented float ops (issue 33, item 4).

hexagon_nn has no exp or log op. With fixed input and output ranges both
are one 256-entry table (:mod:`onnx.lut`). With ranges known only at run
time (a float model without ``--calibration``, and the first import that
calibration runs) the table cannot be built at import, so the value is
dequantized and computed in float32 ops of hexagon_nn_ops.txt, then
AutoQuantize'd:

* Exp: ``exp(x) = exp(x / 2**n) ** (2**n)`` with n = 8; ``exp(y)`` by its
  Taylor polynomial of degree 6 (Horner: Mul_f, Add_f), whose relative
  truncation error is below ``|y|**7 / 7!`` (3e-14 at |x| = 10, 1.3e-7 at
  |x| = 88.7, where float32 overflows), then n squarings (Mul_f); the
  squarings multiply the relative error by ``2**n`` and each adds one float32
  rounding: about ``2**n * 2**-24`` (1.5e-5) in all, far below an 8-bit step.
* Log: LRN_f with a 1x1x1 window, ``bias = 0``, ``alpha = 1`` computes
  ``x / (x**2)**beta = x**(1 - 2 beta)`` (its formula in
  hexagon_nn_ops.txt); ``beta = (1 - h) / 2`` gives ``x**h``, ``(1 + h) / 2``
  gives ``x**-h``. ``S = (x**h - x**-h) / (2h) = sinh(h ln x) / h``, and
  ``h ln x = asinh(h S) = z - z**3 / 6 + 3 z**5 / 40 - ...`` (``z = h S``);
  one series step ``ln x ~ S - h**2 S**3 / 6`` leaves a relative error below
  the next term, ``3/40 (h ln x)**4`` (for h = 2**-9: 8.6e-7 at |ln x| = 15,
  1.4e-5 at 30), plus the float32 roundings of ``x**h`` magnified by
  ``1 / 2h`` (about 1.5e-5 absolute).
  The input is first raised to half its run-time step (Maximum_f):
  quantized, nothing smaller than that is distinguishable from 0, whose
  logarithm would be ``-inf`` (the table form saturates to the output
  range's minimum instead).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.graph import OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import dequantize, quantize_float
from hexnn_import.importers.nodes.values import Value

FLOAT_MATH_EMITS = ("Dequantize", "Mul_f", "Add_f", "Sub_f", "Maximum_f", "LRN_f", "AutoQuantize", "Quantize")
EXP_HALVINGS = 8
LOG_H = 2.0 ** -9


def _f(b: GraphBuilder, op: str, refs: list[Ref], shape: tuple[int, ...], name: str) -> Ref:
    node = b.graph.append(op, refs, [OutputDef(shape, "float")], name=name)  # type: ignore[arg-type]
    return Ref(node.node_id, 0)


def _scalar(b: GraphBuilder, value: float, name: str) -> Ref:
    return b.float_const(float(value), name)


def emit_exp_float(b: GraphBuilder, x: Value, name: str) -> Value:
    """``exp(x)`` (module doc) onto a run-time range."""
    s = x.shape
    y = _f(b, "Mul_f", [dequantize(b, x, name), _scalar(b, 2.0 ** -EXP_HALVINGS, f"{name}/scale")], s, f"{name}/y")
    p = _scalar(b, 1.0 / math.factorial(6), f"{name}/c6")
    for k in range(5, -1, -1):  # Horner: p = p * y + 1/k!
        p = _f(b, "Mul_f", [p, y], s, f"{name}/h{k}")
        p = _f(b, "Add_f", [p, _scalar(b, 1.0 / math.factorial(k), f"{name}/c{k}")], s, f"{name}/p{k}")
    for k in range(EXP_HALVINGS):
        p = _f(b, "Mul_f", [p, p], s, f"{name}/sq{k}")
    return quantize_float(b, p, s, None, name)


def _power(b: GraphBuilder, x: Ref, shape: tuple[int, ...], e: float, name: str) -> Ref:
    """``x ** e`` for ``x > 0`` by LRN_f (module doc)."""
    refs = [x, b.graph.shape_ref((1, 1, 1, 1), f"{name}/window"), _scalar(b, 0.0, f"{name}/bias"),
            _scalar(b, 1.0, f"{name}/alpha"), _scalar(b, (1.0 - e) / 2.0, f"{name}/beta")]
    return _f(b, "LRN_f", refs, shape, name)


def emit_log_float(b: GraphBuilder, x: Value, name: str) -> Value:
    """``log(x)`` (module doc) onto a run-time range; the input's range may be fixed or run-time."""
    assert x.mn is not None and x.mx is not None
    s = x.shape
    width = _f(b, "Sub_f", [x.mx, x.mn], (1, 1, 1, 1), f"{name}/width")
    floor = _f(b, "Mul_f", [width, _scalar(b, 0.5 / 255.0, f"{name}/half_step")], (1, 1, 1, 1), f"{name}/floor")
    v = _f(b, "Maximum_f", [dequantize(b, x, name), floor], s, f"{name}/positive")
    up, down = _power(b, v, s, LOG_H, f"{name}/pow_h"), _power(b, v, s, -LOG_H, f"{name}/pow_minus_h")
    diff = _f(b, "Sub_f", [up, down], s, f"{name}/diff")
    sh = _f(b, "Mul_f", [diff, _scalar(b, 1.0 / (2.0 * LOG_H), f"{name}/inv_2h")], s, f"{name}/sinh")
    cube = _f(b, "Mul_f", [_f(b, "Mul_f", [sh, sh], s, f"{name}/sq"), sh], s, f"{name}/cube")
    corr = _f(b, "Mul_f", [cube, _scalar(b, -LOG_H ** 2 / 6.0, f"{name}/series")], s, f"{name}/correction")
    return quantize_float(b, _f(b, "Add_f", [sh, corr], s, f"{name}/log"), s, None, name)


def log_reference(v: np.ndarray) -> np.ndarray:
    """The float formula of :func:`emit_log_float` in numpy float64 (for its error bound's tests)."""
    sh = (v ** LOG_H - v ** -LOG_H) / (2 * LOG_H)
    return sh - LOG_H ** 2 * sh ** 3 / 6.0
