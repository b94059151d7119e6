"""Replace rules of the activations that are one function of the int8 code: lib_nn ``lookup8`` (nn_operator.c).

HARD_SWISH, LOGISTIC, TANH, ELU, GELU, LEAKY_RELU, RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, a PRELU with one
alpha and an ADD / MUL of one constant value (a rescaling, a hard-sigmoid's ``/ 6``) map each of the 256 int8
input codes to one output code; their ``lookup8`` table is that map, computed as
LiteRT's int8 kernel computes the op (:mod:`.litert_int8`), so the layer is exact wherever LiteRT's arithmetic
is reproduced. A PRELU with an alpha per channel is no function of the code alone: no lib_nn kernel computes
it exactly (lookup8 applies one table to every channel; a depthwise conv would need the sign of the input
before its multiply), and it stays on Hexagon with that reason.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hexnn_import.xs3 import litert_int8 as L
from hexnn_import.xs3.replace import ReplaceRule, XS3Op
from hexnn_import.xs3.ort_int8 import ort_code_function
from hexnn_import.xs3.replace_ops import _int8_reason

from hexnn_import.source_layers import LayerInfo, activation_bounds

Codes = Callable[[np.ndarray], np.ndarray]

#: the clamps of TFLite's RELU family: (low, high) real bounds (None: unbounded)
RELU_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0), "RELU_0_TO_1": (0.0, 1.0)}
#: the functions LiteRT builds a float32 table of (``LUTPopulate``)
LUT_FUNCTIONS: dict[str, Callable[[LayerInfo], Callable[[np.ndarray], np.ndarray]]] = {
    "LOGISTIC": lambda layer: L.sigmoid,
    "TANH": lambda layer: np.tanh,
    "ELU": lambda layer: L.elu,
    "GELU": lambda layer: L.gelu(bool(layer.attrs.get("approximate", False))),
}


def _quant(layer: LayerInfo) -> tuple[float, int, float, int]:
    x, y = layer.x, layer.y
    return float(x.scale), x.int8_zero_point, float(y.scale), y.int8_zero_point  # type: ignore[arg-type]


def code_function(layer: LayerInfo) -> tuple[Codes, str] | str:
    """LiteRT's int8 function of the layer's codes and a note, or why the layer is not one; for an ONNX layer
    (``attrs["arithmetic"] == "onnxruntime"``) onnxruntime's (:mod:`.ort_int8`)."""
    s_in, z_in, s_out, z_out = _quant(layer)
    op = layer.opname
    if layer.attrs.get("arithmetic") == "onnxruntime":
        fn = ort_code_function(op, layer.attrs, s_in, z_in, s_out, z_out)
        if fn is None:
            return f"{layer.source_op or op}: no onnxruntime table of it"
        return fn, f"onnxruntime's float32 {layer.source_op or op} between DequantizeLinear and QuantizeLinear"
    if op == "HARD_SWISH":
        try:
            return L.hard_swish_codes(s_in, z_in, s_out, z_out), "LiteRT's 16-bit fixed-point HardSwish"
        except ValueError as exc:
            return str(exc)
    if op in LUT_FUNCTIONS:
        return L.lut_populate(LUT_FUNCTIONS[op](layer), s_in, z_in, s_out, z_out), "LiteRT's LUTPopulate table"
    if op in RELU_BOUNDS:
        lo, hi = RELU_BOUNDS[op]
        same = np.isclose(s_in, s_out, rtol=1e-6) and z_in == z_out
        return L.relu_codes(s_in, z_in, s_out, z_out, lo, hi), "a clamp" if same else "ReluX: rescale and clamp"
    if op == "LEAKY_RELU":
        if "alpha" not in layer.attrs:
            return "LEAKY_RELU without its alpha option"
        return L.leaky_codes(s_in, z_in, s_out, z_out, float(layer.attrs["alpha"])), "QuantizeLeakyRelu"
    if op == "PRELU":
        return _prelu(layer, s_in, z_in, s_out, z_out)
    if op in ("ADD", "MUL"):
        return _with_constant(layer, s_in, z_in, s_out, z_out)
    return f"{op} is not a per-tensor function of int8"


def _prelu(layer: LayerInfo, s_in: float, z_in: int, s_out: float, z_out: int) -> tuple[Codes, str] | str:
    alpha = layer.attrs.get("alpha")
    if alpha is None:
        return "PRELU: alpha not a constant per-tensor quantized int8 tensor"
    codes, s_a, z_a = alpha
    codes = np.asarray(codes)
    if np.unique(codes).size > 1:
        return (f"PRELU with {codes.size} alphas (one per channel): no lib_nn kernel computes it exactly "
                "(lookup8 applies one table to every channel)")
    a = int(codes.reshape(-1)[0]) - (128 if codes.dtype == np.uint8 else 0)
    z_a8 = int(z_a) - (128 if codes.dtype == np.uint8 else 0)
    return L.prelu_codes(s_in, z_in, float(s_a), z_a8, a, s_out, z_out), "PReLU with one alpha"


def _with_constant(layer: LayerInfo, s_in: float, z_in: int, s_out: float, z_out: int) -> tuple[Codes, str] | str:
    """An ADD / MUL of the activation and one constant value (a scalar, or a tensor of one value)."""
    const = layer.attrs.get("const")
    if const is None:
        return f"lookup8: {layer.opname} has no constant per-tensor quantized operand"
    _, codes, s_c, z_c = const
    codes = np.asarray(codes)
    if codes.size == 0 or np.unique(codes).size > 1:
        return f"lookup8: the constant operand of {layer.opname} holds {np.unique(codes).size} values, not one"
    shift = 128 if codes.dtype == np.uint8 else 0
    c, z_c8 = int(codes.reshape(-1)[0]) - shift, int(z_c) - shift
    lo, hi = activation_bounds(layer.activation, s_out, z_out)
    make = L.add_codes if layer.opname == "ADD" else L.mul_codes
    return make(s_in, z_in, float(s_c), z_c8, c, s_out, z_out, lo, hi), f"{layer.opname} of a constant {c}"


class ActivationAsLookup(ReplaceRule):
    """A per-tensor int8 activation -> lookup8 with LiteRT's table of it (module doc)."""

    name = "activation-to-lookup8"
    kernel = "lookup8"

    def match(self, layer: LayerInfo) -> str | None:
        if layer.opname == "MUL" and len(layer.inputs) == 2:
            a, b = (list(t.shape) for t in layer.inputs)
            return f"MUL of two tensors ({a} x {b}): lib_nn has no element-wise multiply"
        why = _int8_reason(layer, 1)
        if why:
            return why
        if tuple(layer.x.shape) != tuple(layer.y.shape):
            return f"{self.kernel}: input {list(layer.x.shape)} and output {list(layer.y.shape)} differ"
        fn = code_function(layer)
        return fn if isinstance(fn, str) else None

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        fn = code_function(layer)
        assert not isinstance(fn, str)
        codes, note = fn
        shape = tuple(layer.x.shape)
        return XS3Op(layer, self.kernel, self.name, None, shape, shape, table=L.table_of(codes),
                     canonical=[f"{layer.opname} as a 256-entry table ({note})"])
