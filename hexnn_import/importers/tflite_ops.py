"""Handlers mapping quantized TFLite builtins onto hexagon_nn ops.

Each handler appends nodes for one TFLite operator; each checker says why an
operator instance cannot be imported (None when it can). Conv-like layers
become ``Supernode_8x8p32to8`` (SEMANTICS §5) directly: per-channel weights
are expressed as the supernode's channel scales ``k[c] = s_w[c] / max(s_w)``
over one weight range built on ``max(s_w)``, and the int32 bias becomes a
qint32 bias tensor on a power-of-two fraction of the product step.
"""
from __future__ import annotations

import math

import numpy as np
import tflite

from hexnn_import.graph import NNPad, OutputDef, Ref, shape4
from hexnn_import.importers.tflite_import import QUANT_TYPES, TFLiteImporter, tflite_op, to_quint8
from hexnn_import.importers.tflite_reader import TFOperator, TFTensor
from hexnn_import.importers.values import Value
from hexnn_import.ops.quant import scale_zp_to_range

ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 0, 1, 2, 3
PADDING = {tflite.Padding.SAME: NNPad.SAME, tflite.Padding.VALID: NNPad.VALID}
MIN_CHANNEL_SCALE = 1.0 / 2048.0  # SEMANTICS §5: each k[c] in (1/2048, 1]


# ---- checks --------------------------------------------------------------------------
def _per_tensor_q(t: TFTensor) -> bool:
    return t.dtype in QUANT_TYPES and t.quant is not None and not t.quant.per_channel


def _check_activations(imp: TFLiteImporter, op: TFOperator) -> str | None:
    x, y = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    if x.dtype == "float32" or y.dtype == "float32":
        return "float activations are not supported yet"
    if not (_per_tensor_q(x) and _per_tensor_q(y)):
        return f"activations must be per-tensor quantized int8/uint8, got {x.dtype} -> {y.dtype}"
    if x.dtype != y.dtype:
        return f"mixed activation types {x.dtype} -> {y.dtype}"
    act = getattr(op.options, "FusedActivationFunction", lambda: 0)() if op.options is not None else 0
    if act not in (ACT_NONE, ACT_RELU, ACT_RELU6):
        return f"fused activation {act} is not supported yet"
    return None


def _check_conv(imp: TFLiteImporter, op: TFOperator) -> str | None:
    why = _check_activations(imp, op)
    if why:
        return why
    w = imp.tensor(op.inputs[1])
    if w.data is None:
        return "non-constant weights"
    if w.dtype not in QUANT_TYPES or w.quant is None:
        return f"weights of type {w.dtype} without quantization"
    if w.quant.per_channel and (w.quant.axis != 0 or np.any(w.quant.zero_point != 0)):
        return "per-channel weights must be on axis 0 with zero points 0"
    if len(op.inputs) > 2 and op.inputs[2] >= 0 and imp.tensor(op.inputs[2]).data is None:
        return "non-constant bias"
    if op.opname == "CONV_2D":
        o = op.options
        if o is None:
            return "missing Conv2DOptions"
        if o.DilationHFactor() > 1 or o.DilationWFactor() > 1:
            return "dilation > 1 is not supported yet"
    if op.opname == "FULLY_CONNECTED" and op.options is not None and op.options.WeightsFormat() != 0:
        return "shuffled weights format"
    return None


def _same_quant(imp: TFLiteImporter, op: TFOperator) -> str | None:
    why = _check_activations(imp, op)
    if why:
        return why
    a, b = imp.qrange(imp.tensor(op.inputs[0])), imp.qrange(imp.tensor(op.outputs[0]))
    if not np.allclose(a, b, rtol=1e-6, atol=0):
        return "input and output quantization differ (needs Requantize_8to8)"
    return None


# ---- shared emitters -------------------------------------------------------------------
def weight_codes(imp: TFLiteImporter, w: TFTensor, name: str) -> tuple[np.ndarray, tuple[float, float], np.ndarray | None]:
    """quint8 weight codes (source layout), their (min, max), and channel scales (None if per-tensor)."""
    assert w.quant is not None and w.data is not None
    data = w.data
    if not w.quant.per_channel:
        rng = scale_zp_to_range(float(w.quant.scale[0]), int(w.quant.zero_point[0]), w.dtype == "int8")
        return to_quint8(data, w.dtype), rng, None
    s = w.quant.scale.astype(np.float64)
    if np.any(~np.isfinite(s)) or np.any(s <= 0):
        from hexnn_import.errors import ModelFormatError
        raise ModelFormatError(f"{imp.label}: tensor {w.name} has a zero, negative or non-finite scale")
    smax = float(s.max())
    k = s / smax
    small = k <= MIN_CHANNEL_SCALE
    if np.any(small):
        data = data.astype(np.int64).copy()
        for c in np.flatnonzero(small):  # per channel, not per element: a handful at most
            if np.any(data[c] != 0):
                data[c] = np.trunc(data[c] * (k[c] * 1024.0) + np.copysign(0.5, data[c]))
                imp.note(f"{name}: channel {c} scale ratio {k[c]:.3g} below 1/2048; weights rescaled to 1/1024")
                k[c] = 1.0 / 1024.0
            else:
                k[c] = 1.0
        data = data.astype(np.int8)
    rng = scale_zp_to_range(smax, 0, w.dtype == "int8")
    return to_quint8(data, w.dtype), rng, k


def bias_qint32(imp: TFLiteImporter, bias_real: np.ndarray, prod: float, name: str) -> list[Ref]:
    """[bias, bias_min, bias_max] refs: qint32 codes on step ``prod / 2**m`` (m as fine as int32 allows)."""
    target = bias_real / prod
    peak = float(np.max(np.abs(target))) if target.size else 0.0
    m = 24 if peak == 0 else min(24, math.floor(math.log2((2 ** 31 - 1) / peak)))
    codes = np.clip(np.round(target * 2.0 ** m), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    b_step = prod / 2.0 ** m
    g = imp.graph
    return [g.const_ref(codes.reshape(1, 1, 1, -1), name), imp.float_const(-2.0 ** 31 * b_step, f"{name}/min"),
            imp.float_const(2.0 ** 31 * b_step, f"{name}/max")]


def emit_supernode(imp: TFLiteImporter, name: str, x: Value, w_hwio: np.ndarray, w_range: tuple[float, float],
                   k: np.ndarray | None, bias_real: np.ndarray, out_range: tuple[float, float],
                   stride: tuple[int, int], padding: NNPad, out_shape: tuple[int, int, int, int]) -> Value:
    """Append Supernode_8x8p32to8 (SEMANTICS §5) and return its output value."""
    g = imp.graph
    assert x.range is not None
    prod = (x.range[1] - x.range[0]) / 255.0 * (w_range[1] - w_range[0]) / 255.0
    refs = [x.data, g.const_ref(w_hwio, f"{name}/weights"), x.mn, x.mx,
            imp.float_const(w_range[0], f"{name}/weights/min"), imp.float_const(w_range[1], f"{name}/weights/max"),
            g.shape_ref((1, stride[0], stride[1], 1), f"{name}/stride")]
    refs += bias_qint32(imp, bias_real, prod, f"{name}/bias")
    refs += [imp.float_const(out_range[0], f"{name}/out_min"), imp.float_const(out_range[1], f"{name}/out_max")]
    if k is not None:
        refs.append(g.const_ref(k.astype(np.float32).reshape(1, 1, 1, -1), f"{name}/channel_scale"))
    node = g.append("Supernode_8x8p32to8", refs, [OutputDef(out_shape, "quint8"), OutputDef.scalar(),
                                                 OutputDef.scalar()], padding, name)
    nid = node.node_id
    return Value(Ref(nid, 0), out_shape, "quint8", Ref(nid, 1), Ref(nid, 2), out_range)


def apply_activation(imp: TFLiteImporter, v: Value, act: int, name: str) -> Value:
    """Fused RELU / RELU6 as QuantizedRelu_8 / QuantizedReluX_8 when the range does not already do it."""
    assert v.range is not None
    lo, hi = v.range
    if act == ACT_RELU and lo < 0:
        op, extra = "QuantizedRelu_8", []
    elif act == ACT_RELU6 and (lo < 0 or hi > 6.0):
        op, extra = "QuantizedReluX_8", [imp.float_const(6.0, f"{name}/relu6/x")]
    else:
        return v
    node = imp.graph.append(op, v.triple() + extra, [OutputDef(v.shape, "quint8"), OutputDef.scalar(),
                                                     OutputDef.scalar()], name=f"{name}/{op}")
    nid = node.node_id
    return Value(Ref(nid, 0), v.shape, "quint8", Ref(nid, 1), Ref(nid, 2), v.range)


def reshape_value(imp: TFLiteImporter, v: Value, shape: tuple[int, int, int, int], name: str) -> Value:
    """QuantizedReshape of ``v`` to a 4-D shape (no node when the shape already matches)."""
    if tuple(v.shape) == tuple(shape):
        return v
    target = imp.graph.const_ref(np.asarray(shape, dtype=np.int32).reshape(1, 1, 1, 4), f"{name}/shape")
    node = imp.graph.append("QuantizedReshape", [v.data, target, v.mn, v.mx],
                            [OutputDef(shape, v.etype), OutputDef.scalar(), OutputDef.scalar()], name=name)
    nid = node.node_id
    return Value(Ref(nid, 0), shape, v.etype, Ref(nid, 1), Ref(nid, 2), v.range)


def _bias_real(imp: TFLiteImporter, op: TFOperator, x: TFTensor, w: TFTensor, n_out: int) -> np.ndarray:
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        return np.zeros(n_out)
    b = imp.tensor(op.inputs[2])
    assert b.data is not None and w.quant is not None and x.quant is not None
    if b.dtype == "float32":
        return b.data.astype(np.float64).reshape(-1)
    if b.quant is not None and b.quant.scale.size:
        scale = np.broadcast_to(b.quant.scale, (n_out,))
        zp = np.broadcast_to(b.quant.zero_point, (n_out,))
    else:  # TFLite's rule: bias scale = input scale * weight scale, zero point 0
        scale = np.broadcast_to(float(x.quant.scale[0]) * w.quant.scale, (n_out,))
        zp = np.zeros(n_out)
    return (b.data.astype(np.float64).reshape(-1) - zp) * scale


# ---- builtins ---------------------------------------------------------------------------
@tflite_op("CONV_2D", ("Supernode_8x8p32to8", "QuantizedRelu_8", "QuantizedReluX_8"), _check_conv)
def conv_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """CONV_2D: weights [O,H,W,I] -> HWIO; stride, SAME/VALID; fused RELU/RELU6."""
    xt, wt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    o = op.options
    codes, w_range, k = weight_codes(imp, wt, yt.name)
    w_hwio = np.ascontiguousarray(codes.transpose(1, 2, 3, 0))
    bias = _bias_real(imp, op, xt, wt, wt.shape[0])
    y = emit_supernode(imp, yt.name, imp.value(op.inputs[0]), w_hwio, w_range, k, bias, imp.qrange(yt),
                       (o.StrideH(), o.StrideW()), PADDING[o.Padding()], shape4(yt.shape))
    imp.set_output(op.outputs[0], apply_activation(imp, y, o.FusedActivationFunction(), yt.name))


@tflite_op("FULLY_CONNECTED", ("Supernode_8x8p32to8", "QuantizedReshape", "QuantizedRelu_8", "QuantizedReluX_8"),
           _check_conv)
def fully_connected(imp: TFLiteImporter, op: TFOperator) -> None:
    """FULLY_CONNECTED as a 1x1 Supernode over ``[1,1,N,I]`` (rows in the width dimension)."""
    xt, wt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    n_out, n_in = wt.shape
    x = imp.value(op.inputs[0])
    rows = int(np.prod(x.shape)) // n_in
    x = reshape_value(imp, x, (1, 1, rows, n_in), f"{yt.name}/flatten")
    codes, w_range, k = weight_codes(imp, wt, yt.name)
    w_hwio = np.ascontiguousarray(codes.T.reshape(1, 1, n_in, n_out))
    bias = _bias_real(imp, op, xt, wt, n_out)
    y = emit_supernode(imp, yt.name, x, w_hwio, w_range, k, bias, imp.qrange(yt), (1, 1), NNPad.VALID,
                       (1, 1, rows, n_out))
    act = op.options.FusedActivationFunction() if op.options is not None else ACT_NONE
    y = apply_activation(imp, y, act, yt.name)
    imp.set_output(op.outputs[0], reshape_value(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))


def _pool(imp: TFLiteImporter, op: TFOperator, hex_op: str) -> None:
    yt = imp.tensor(op.outputs[0])
    o = op.options
    x = imp.value(op.inputs[0])
    g = imp.graph
    refs = x.triple() + [g.shape_ref((1, o.FilterHeight(), o.FilterWidth(), 1), f"{yt.name}/window"),
                         g.shape_ref((1, o.StrideH(), o.StrideW(), 1), f"{yt.name}/stride")]
    node = g.append(hex_op, refs, [OutputDef(shape4(yt.shape), "quint8"), OutputDef.scalar(), OutputDef.scalar()],
                    PADDING[o.Padding()], yt.name)
    nid = node.node_id
    y = Value(Ref(nid, 0), shape4(yt.shape), "quint8", Ref(nid, 1), Ref(nid, 2), x.range)
    imp.set_output(op.outputs[0], apply_activation(imp, y, o.FusedActivationFunction(), yt.name))


@tflite_op("MAX_POOL_2D", ("QuantizedMaxPool_8",), _same_quant)
def max_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """MAX_POOL_2D -> QuantizedMaxPool_8 (range passes through, SEMANTICS §6)."""
    _pool(imp, op, "QuantizedMaxPool_8")


@tflite_op("AVERAGE_POOL_2D", ("QuantizedAvgPool_8",), _same_quant)
def average_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """AVERAGE_POOL_2D -> QuantizedAvgPool_8 (in-bounds taps only, as TFLite counts them)."""
    _pool(imp, op, "QuantizedAvgPool_8")


@tflite_op("RESHAPE", ("QuantizedReshape",), _same_quant)
def reshape(imp: TFLiteImporter, op: TFOperator) -> None:
    """RESHAPE -> QuantizedReshape to the output tensor's (static) shape."""
    yt = imp.tensor(op.outputs[0])
    imp.set_output(op.outputs[0], reshape_value(imp, imp.value(op.inputs[0]), shape4(yt.shape), yt.name))
