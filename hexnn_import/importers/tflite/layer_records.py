"""The TFLite importer's record of every operator's source quantization (:mod:`hexnn_import.source_layers`).

Conv-like operators (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) carry
their int8 weights, per-channel scales, int32 bias, geometry and fused
activation exactly as the file stores them (SEMANTICS §8: an XS3 BSO is
computed from these, not from the hexagon graph's quint8 requantized copies);
ADD, MEAN, the pools and PAD carry their options in ``attrs``; the others
only names and shapes, so a lowering report can list every layer.
"""
from __future__ import annotations

import numpy as np
import tflite

from hexnn_import.importers.tflite.reader import TFModel, TFOperator, TFTensor
from hexnn_import.source_layers import ACTIVATIONS, LayerInfo, TensorQ

CONV_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
POOL_OPS = ("AVERAGE_POOL_2D", "MAX_POOL_2D")


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
        layer.source_op = op.opname
        if op.opname in CONV_OPS and ins and outs:
            _conv_params(model, op, layer)
        elif ins and outs:
            _other_params(model, op, layer)
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


def _const(model: TFModel, op: TFOperator, k: int) -> np.ndarray | None:
    i = op.inputs[k] if len(op.inputs) > k else -1
    return None if i < 0 or model.tensors[i].data is None else np.asarray(model.tensors[i].data)


def _other_params(model: TFModel, op: TFOperator, layer: LayerInfo) -> None:
    """ADD's fused activation, the pools' window, MEAN's axes, PAD's paddings, LEAKY_RELU's alpha, GELU's
    approximation, PRELU's constant alpha, an ADD / MUL's constant operand (into ``attrs``)."""
    o = op.options
    if o is not None and hasattr(o, "FusedActivationFunction"):
        act = int(o.FusedActivationFunction())
        layer.activation = ACTIVATIONS.get(act, str(act))
    if op.opname in POOL_OPS and o is not None:
        layer.attrs["filter"] = (int(o.FilterHeight()), int(o.FilterWidth()))
        layer.stride = (int(o.StrideH()), int(o.StrideW()))
        layer.same_padding = int(o.Padding()) == tflite.Padding.SAME
    elif op.opname == "MEAN":
        axes = _const(model, op, 1)
        if axes is None:
            layer.notes.append("non-constant axes")
        else:
            layer.attrs["axes"] = tuple(int(a) for a in axes.reshape(-1))
        layer.attrs["keep_dims"] = bool(o.KeepDims()) if o is not None else False
    elif op.opname == "LEAKY_RELU" and o is not None:
        layer.attrs["alpha"] = float(o.Alpha())
    elif op.opname == "GELU":
        layer.attrs["approximate"] = bool(o.Approximate()) if o is not None else False
    elif op.opname == "PRELU":
        a = model.tensors[op.inputs[1]] if len(op.inputs) > 1 and op.inputs[1] >= 0 else None
        if a is not None and a.data is not None and a.quant is not None and a.quant.scale.size == 1:
            layer.attrs["alpha"] = (np.asarray(a.data), float(a.quant.scale[0]), int(a.quant.zero_point[0]))
    elif op.opname in ("PAD", "PADV2"):
        pads = _const(model, op, 1)
        if pads is None:
            layer.notes.append("non-constant paddings")
        else:
            layer.attrs["paddings"] = pads.astype(np.int64).reshape(-1, 2).tolist()
    if op.opname in ("ADD", "MUL"):  # a constant operand: (position, codes, scale, zero point)
        for k, i in enumerate(op.inputs[:2]):
            t = model.tensors[i] if i >= 0 else None
            if t is not None and t.data is not None and t.quant is not None and t.quant.scale.size == 1:
                layer.attrs["const"] = (k, np.asarray(t.data), float(t.quant.scale[0]), int(t.quant.zero_point[0]))
