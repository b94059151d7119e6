"""Exp and Log of data with run-time ranges, in documented float ops (issue 33, item 4); Sin and LogSoftmax.

hexagon_nn has no exp or log op. With fixed input and output ranges both
are one 256-entry table (:mod:`nodes.lut`). With ranges known only at run
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
from hexnn_import.importers.nodes.core import Range, dequantize, quantize_float
from hexnn_import.importers.nodes.values import Value

FLOAT_MATH_EMITS = ("Dequantize", "Mul_f", "Add_f", "Sub_f", "Maximum_f", "LRN_f", "AutoQuantize", "Quantize")
#: what :func:`sin_f` adds
SIN_EMITS = ("Round_f",)
#: what :func:`emit_log_softmax` emits
LOG_SOFTMAX_EMITS = FLOAT_MATH_EMITS + ("Max_f", "Sum_f")
EXP_HALVINGS = 8
LOG_H = 2.0 ** -9


def _f(b: GraphBuilder, op: str, refs: list[Ref], shape: tuple[int, ...], name: str) -> Ref:
    node = b.graph.append(op, refs, [OutputDef(shape, "float")], name=name)  # type: ignore[arg-type]
    return Ref(node.node_id, 0)


def _scalar(b: GraphBuilder, value: float, name: str) -> Ref:
    return b.float_const(float(value), name)


def float_node(b: GraphBuilder, op: str, refs: list[Ref], shape: tuple[int, ...], name: str) -> Ref:
    """One float32 op of hexagon_nn_ops.txt whose one output has ``shape``."""
    return _f(b, op, refs, shape, name)


def emit_exp_float(b: GraphBuilder, x: Value, name: str) -> Value:
    """``exp(x)`` (module doc) onto a run-time range."""
    return quantize_float(b, exp_f(b, dequantize(b, x, name), x.shape, name), x.shape, None, name)


def exp_f(b: GraphBuilder, x: Ref, s: tuple[int, ...], name: str) -> Ref:
    """``exp`` of a float tensor ``x`` of shape ``s`` in float32 ops (module doc)."""
    y = _f(b, "Mul_f", [x, _scalar(b, 2.0 ** -EXP_HALVINGS, f"{name}/scale")], s, f"{name}/y")
    p = _scalar(b, 1.0 / math.factorial(6), f"{name}/c6")
    for k in range(5, -1, -1):  # Horner: p = p * y + 1/k!
        p = _f(b, "Mul_f", [p, y], s, f"{name}/h{k}")
        p = _f(b, "Add_f", [p, _scalar(b, 1.0 / math.factorial(k), f"{name}/c{k}")], s, f"{name}/p{k}")
    for k in range(EXP_HALVINGS):
        p = _f(b, "Mul_f", [p, p], s, f"{name}/sq{k}")
    return p


def _power(b: GraphBuilder, x: Ref, shape: tuple[int, ...], e: float, name: str) -> Ref:
    """``x ** e`` for ``x > 0`` by LRN_f (module doc). The window Const is read twice: its shape [1,1,1,1] is the
    1x1x1 window, its data the window size as a float (op_lrn_f.c: ``lrn_check`` refuses a size below 1, execute
    divides alpha by it), so it is the float32 1.0."""
    refs = [x, _scalar(b, 1.0, f"{name}/window"), _scalar(b, 0.0, f"{name}/bias"),
            _scalar(b, 1.0, f"{name}/alpha"), _scalar(b, (1.0 - e) / 2.0, f"{name}/beta")]
    return _f(b, "LRN_f", refs, shape, name)


def emit_log_float(b: GraphBuilder, x: Value, name: str) -> Value:
    """``log(x)`` (module doc) onto a run-time range; the input's range may be fixed or run-time."""
    assert x.mn is not None and x.mx is not None
    s = x.shape
    width = _f(b, "Sub_f", [x.mx, x.mn], (1, 1, 1, 1), f"{name}/width")
    floor = _f(b, "Mul_f", [width, _scalar(b, 0.5 / 255.0, f"{name}/half_step")], (1, 1, 1, 1), f"{name}/floor")
    v = _f(b, "Maximum_f", [dequantize(b, x, name), floor], s, f"{name}/positive")
    return quantize_float(b, log_f(b, v, s, name), s, None, name)


def log_f(b: GraphBuilder, v: Ref, s: tuple[int, ...], name: str) -> Ref:
    """``log`` of a positive float tensor ``v`` of shape ``s`` in float32 ops (module doc)."""
    up, down = _power(b, v, s, LOG_H, f"{name}/pow_h"), _power(b, v, s, -LOG_H, f"{name}/pow_minus_h")
    diff = _f(b, "Sub_f", [up, down], s, f"{name}/diff")
    sh = _f(b, "Mul_f", [diff, _scalar(b, 1.0 / (2.0 * LOG_H), f"{name}/inv_2h")], s, f"{name}/sinh")
    cube = _f(b, "Mul_f", [_f(b, "Mul_f", [sh, sh], s, f"{name}/sq"), sh], s, f"{name}/cube")
    corr = _f(b, "Mul_f", [cube, _scalar(b, -LOG_H ** 2 / 6.0, f"{name}/series")], s, f"{name}/correction")
    return _f(b, "Add_f", [sh, corr], s, f"{name}/log")


def log_reference(v: np.ndarray) -> np.ndarray:
    """The float formula of :func:`emit_log_float` in numpy float64 (for its error bound's tests)."""
    sh = (v ** LOG_H - v ** -LOG_H) / (2 * LOG_H)
    return sh - LOG_H ** 2 * sh ** 3 / 6.0


def sin_f(b: GraphBuilder, x: Ref, s: tuple[int, ...], name: str) -> Ref:
    """``sin`` of a float tensor in float32 ops: ``r = x - 2 pi Round_f(x / 2 pi)`` lies in ``[-pi, pi]``, then
    the odd Taylor polynomial of degree 15 in Horner form (truncation below ``pi**17 / 17!`` = 8e-7)."""
    k = _f(b, "Round_f", [_f(b, "Mul_f", [x, _scalar(b, 0.5 / math.pi, f"{name}/inv_2pi")], s, f"{name}/turns")],
           s, f"{name}/k")
    r = _f(b, "Sub_f", [x, _f(b, "Mul_f", [k, _scalar(b, 2 * math.pi, f"{name}/2pi")], s, f"{name}/kpi")], s,
           f"{name}/r")
    r2 = _f(b, "Mul_f", [r, r], s, f"{name}/r2")
    p = _scalar(b, -1.0 / math.factorial(15), f"{name}/c15")
    for n in range(13, 0, -2):  # Horner in r**2: p = p * r**2 + (-1)**((n-1)/2) / n!
        p = _f(b, "Mul_f", [p, r2], s, f"{name}/h{n}")
        c = (-1.0) ** ((n - 1) // 2) / math.factorial(n)
        p = _f(b, "Add_f", [p, _scalar(b, c, f"{name}/c{n}")], s, f"{name}/p{n}")
    return _f(b, "Mul_f", [p, r], s, f"{name}/sin")


def emit_log_softmax(b: GraphBuilder, x: Value, out: Range | None, name: str) -> Value:
    """``log(softmax(x))`` along depth in float32 ops: ``d = x - max(x)`` (Max_f, Sub_f), ``d - log(sum(exp(d)))``
    (:func:`exp_f`, Sum_f, :func:`log_f` of a sum >= 1), then Quantize onto ``out`` (AutoQuantize: run-time)."""
    s = x.shape
    red = (s[0], s[1], s[2], 1)
    xf = dequantize(b, x, name)
    top = _f(b, "Max_f", [xf, b.int_const([3], f"{name}/max_dims")], red, f"{name}/max")
    d = _f(b, "Sub_f", [xf, top], s, f"{name}/shifted")
    total = _f(b, "Sum_f", [exp_f(b, d, s, f"{name}/exp"), b.int_const([3], f"{name}/sum_dims")], red, f"{name}/sum")
    y = _f(b, "Sub_f", [d, log_f(b, total, red, f"{name}/log_sum")], s, f"{name}/log_softmax")
    return quantize_float(b, y, s, out, name)
