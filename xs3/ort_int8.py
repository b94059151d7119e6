"""onnxruntime's arithmetic of the ONNX activations that are one function of the 8-bit code, as lookup8 code
functions (the ONNX twin of :mod:`.litert_int8`).

A QDQ activation (``DequantizeLinear -> Sigmoid / Tanh / HardSigmoid / HardSwish / LeakyRelu ->
QuantizeLinear``) runs in onnxruntime as three float32 kernels, and the QOperator ``QLinearSigmoid`` /
``QLinearLeakyRelu`` (com.microsoft) build their 256-entry table with the same three steps
(``QLinearLookupBase``): ``x = float32(q - z_in) * s_in`` (DequantizeLinear), the function in float32 (the ONNX
operator definitions: ``HardSigmoid = max(0, min(1, alpha x + beta))``, ``HardSwish = x max(0, min(1, x / 6 +
1 / 2))``, ``LeakyRelu = x < 0 ? alpha x : x``, an Add / Sub / Mul / Div of one constant value), then
QuantizeLinear: ``x / s_out`` in float32, rounded half
to even, ``+ z_out``, saturated. Codes are int8 views throughout (a uint8 tensor's codes - 128 with its zero
point - 128: the same values, the same saturation bounds). onnxruntime computes Sigmoid and Tanh with MLAS's
rational approximations (``MlasComputeLogistic`` / ``MlasComputeTanh``), which this does not reproduce: the
per-layer agreement measures where they land on another code.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

F32 = np.float32
Fn = Callable[[np.ndarray], np.ndarray]


def _sigmoid(v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-v) overflows to inf for very negative v: 1 / inf = 0
        return F32(1) / (F32(1) + np.exp(-v))


def hard_sigmoid(alpha: float, beta: float) -> Fn:
    a, b = F32(alpha), F32(beta)
    return lambda v: np.minimum(np.maximum(a * v + b, F32(0)), F32(1))


def hard_swish(v: np.ndarray) -> np.ndarray:
    return v * hard_sigmoid(1.0 / 6.0, 0.5)(v)


def leaky_relu(alpha: float) -> Fn:
    a = F32(alpha)
    return lambda v: np.where(v < 0, a * v, v)


#: the canonical kind -> (its float32 function from the layer's attrs, what the table reproduces)
FUNCTIONS: dict[str, Callable[[dict], Fn]] = {
    "LOGISTIC": lambda attrs: _sigmoid,
    "TANH": lambda attrs: np.tanh,
    "HARD_SIGMOID": lambda attrs: hard_sigmoid(float(attrs.get("alpha", 0.2)), float(attrs.get("beta", 0.5))),
    "HARD_SWISH": lambda attrs: hard_swish,
    "LEAKY_RELU": lambda attrs: leaky_relu(float(attrs.get("alpha", 0.01))),
}


def _with_constant(attrs: dict) -> Fn:
    """``x op c`` (or ``c op x``) in float32, the op of the canonical kind ``attrs["op"]``."""
    c, first, kind = F32(attrs["constant"]), bool(attrs.get("constant_first")), attrs["op"]
    ops = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": np.divide}
    f = ops[kind]
    return (lambda v: f(c, v)) if first else (lambda v: f(v, c))


def float_codes(fn: Fn, s_in: float, z_in: int, s_out: float, z_out: int) -> Fn:
    """The int8 code function ``QuantizeLinear(fn(DequantizeLinear(q)))`` in float32 (module doc)."""
    def codes(q: np.ndarray) -> np.ndarray:
        x = (np.asarray(q, np.int32) - np.int32(z_in)).astype(F32) * F32(s_in)
        with np.errstate(over="ignore", invalid="ignore"):
            y = np.asarray(fn(x), F32) / F32(s_out)
        r = np.nan_to_num(np.rint(y).astype(np.float64), nan=0.0, posinf=1e9, neginf=-1e9) + z_out
        return np.clip(r, -128, 127).astype(np.int8)
    return codes


def ort_code_function(kind: str, attrs: dict, s_in: float, z_in: int, s_out: float, z_out: int) -> Fn | None:
    """onnxruntime's int8 code function of an ONNX activation of canonical ``kind``, or None for another kind."""
    if kind in ("ADD", "SUB", "MUL", "DIV") and "constant" in attrs:
        return float_codes(_with_constant({**attrs, "op": kind}), s_in, z_in, s_out, z_out)
    make = FUNCTIONS.get(kind)
    return None if make is None else float_codes(make(attrs), s_in, z_in, s_out, z_out)
