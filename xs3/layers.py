"""The source side of the lowering: every TFLite operator as a :class:`LayerInfo`.

Conv-like operators (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) carry
their int8 weights, per-channel scales, int32 bias, geometry and fused
activation exactly as the file stores them, because the BSO is computed
from the TFLite quantization (SEMANTICS §8), not from the hexagon graph's
quint8 requantized copies. Other operators only carry names and shapes, so
the manifest can list every layer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import tflite

from hexnn_import.importers.tflite_reader import TFModel, TFOperator, TFTensor

CONV_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


@dataclass
class TensorQ:
    """One tensor's name, index, shape, dtype and per-tensor (scale, zero point), None when absent."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    scale: float | None
    zero_point: int | None
    per_channel: bool = False


@dataclass
class LayerInfo:
    """One TFLite operator; conv-like ones add weights, bias and geometry."""

    index: int
    opname: str
    inputs: list[TensorQ]
    outputs: list[TensorQ]
    weights: np.ndarray | None = None  # raw int8 codes in TFLite layout
    w_dtype: str = ""
    w_scales: np.ndarray | None = None
    w_zero_points: np.ndarray | None = None
    w_axis: int = 0
    bias: np.ndarray | None = None  # int32 codes (zeros when the op has none)
    bias_dtype: str = "int32"
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    same_padding: bool = False
    activation: str = "NONE"
    depth_multiplier: int = 1
    consumers: list[str] = field(default_factory=list)  # op names reading the first output
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The layer's name: its first output tensor's (the importer names its node so too)."""
        return self.outputs[0].name if self.outputs else f"op{self.index}"

    @property
    def x(self) -> TensorQ:
        return self.inputs[0]

    @property
    def y(self) -> TensorQ:
        return self.outputs[0]


def tensor_q(t: TFTensor) -> TensorQ:
    """A tensor's summary; per-tensor quantization only fills scale / zero point."""
    q = t.quant
    if q is None or q.scale.size == 0:
        return TensorQ(t.index, t.name, tuple(t.shape), t.dtype, None, None)
    if q.per_channel:
        return TensorQ(t.index, t.name, tuple(t.shape), t.dtype, None, None, per_channel=True)
    return TensorQ(t.index, t.name, tuple(t.shape), t.dtype, float(q.scale[0]), int(q.zero_point[0]))


def read_layers(model: TFModel) -> list[LayerInfo]:
    """Every operator of the model in order, conv-like ones with their parameters."""
    out = []
    readers: dict[int, list[str]] = {}
    for op in model.operators:
        for i in op.inputs:
            readers.setdefault(i, []).append(op.opname)
    for i in model.outputs:
        readers.setdefault(i, []).append("GRAPH_OUTPUT")
    for op in model.operators:
        ins = [tensor_q(model.tensors[i]) for i in op.inputs if i >= 0 and model.tensors[i].data is None]
        outs = [tensor_q(model.tensors[i]) for i in op.outputs]
        layer = LayerInfo(op.index, op.opname, ins, outs)
        if op.outputs:
            layer.consumers = readers.get(op.outputs[0], [])
        if op.opname in CONV_OPS and ins and outs:
            _conv_params(model, op, layer)
        out.append(layer)
    return out


def _conv_params(model: TFModel, op: TFOperator, layer: LayerInfo) -> None:
    w = model.tensors[op.inputs[1]] if len(op.inputs) > 1 and op.inputs[1] >= 0 else None
    if w is None or w.data is None:
        layer.notes.append("non-constant weights")
        return
    layer.weights, layer.w_dtype = np.asarray(w.data), w.dtype
    if w.quant is not None and w.quant.scale.size:
        layer.w_scales = np.asarray(w.quant.scale, dtype=np.float64)
        layer.w_zero_points = np.asarray(w.quant.zero_point, dtype=np.int64)
        layer.w_axis = int(w.quant.axis)
    n_out = int(w.shape[3] if op.opname == "DEPTHWISE_CONV_2D" else w.shape[0])
    b = model.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
    if b is None:
        layer.bias = np.zeros(n_out, dtype=np.int64)
    elif b.data is None:
        layer.notes.append("non-constant bias")
    else:
        layer.bias, layer.bias_dtype = np.asarray(b.data).astype(np.int64).reshape(-1), b.dtype
    o = op.options
    if o is None:
        layer.notes.append("missing options")
        return
    layer.activation = ACTIVATIONS.get(int(o.FusedActivationFunction()), str(int(o.FusedActivationFunction())))
    if op.opname in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        layer.stride = (int(o.StrideH()), int(o.StrideW()))
        layer.dilation = (int(o.DilationHFactor()), int(o.DilationWFactor()))
        layer.same_padding = int(o.Padding()) == tflite.Padding.SAME
    if op.opname == "DEPTHWISE_CONV_2D":
        c_in = layer.x.shape[-1]
        layer.depth_multiplier = n_out // c_in if c_in else 0
    if op.opname == "FULLY_CONNECTED" and int(o.WeightsFormat()) != 0:
        layer.notes.append("shuffled weights format")


def activation_bounds(act: str, scale: float, zero_point: int, qmin: int = -128, qmax: int = 127) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized: the int clamp a fused activation applies."""
    def q(v: float) -> int:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            r = float(np.float32(v) / np.float32(scale))
        if not math.isfinite(r):  # a scale so small that 6 / scale overflows float32: beyond any int8 bound
            return qmax + 1 if r > 0 else qmin - 1 if r < 0 else int(zero_point)
        return int(zero_point) + int(np.sign(r) * np.floor(abs(r) + 0.5))

    if act == "RELU":
        return max(qmin, q(0.0)), qmax
    if act == "RELU6":
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if act == "RELU_N1_TO_1":
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    return qmin, qmax
