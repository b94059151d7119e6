"""TFLite conv-like builtins and pools: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, pools, RESHAPE.

Conv-like layers go through :func:`~hexnn_import.importers.nodes.core.emit_conv`:
a ``Supernode_8x8p32to8`` (SEMANTICS §5) when both ranges are fixed, the
float-graph chain (8x8to32 product, bias add, requantize / shrink) when
they are not. Per-channel weights become channel scales
(``weights.layer_weights``); float weights are quantized per output channel.
Dilation is expressed by spreading the kernel taps with zero-valued codes,
which adds exact zeros to every sum (the same arithmetic as a dilated conv).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.errors import ModelFormatError
from hexnn_import.graph import NNPad, shape4
from hexnn_import.importers.nodes import whole_pool
from hexnn_import.importers.nodes.core import emit_conv, node3, reshape_value
from hexnn_import.importers.nodes.dwise_mult import SPREAD_EMITS, emit_depthwise
from hexnn_import.importers.nodes.matmul import MATMUL, MATMUL_REF
from hexnn_import.importers.tflite.common import PADDING, activation_kind, check_fused, check_io, finish, out_shape
from hexnn_import.importers.tflite.importer import QUANT_TYPES, TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.handlers.decomposed import check_runtime_fc, emit_runtime_fc
from hexnn_import.importers.tflite.reader import TFOperator, TFTensor
from hexnn_import.importers.nodes.weights import LayerWeights, dilate, float_layer_weights, layer_weights
from hexnn_import.ops.quant import step_zero

CONV_EMITS = ("Supernode_8x8p32to8", "DepthwiseSupernode_8x8p32to8", "QuantizedConv2d_8x8to32",
              "QuantizedDepthwiseConv2d_8x8to32", "QuantizedChannelScale_32xf", "QuantizedBiasAdd_32p32to32",
              "Requantize_32to8", "QuantizeDownAndShrinkRange_32to8", "QuantizedRelu_8", "QuantizedReluX_8",
              "QuantizedClamp_8", "Requantize_8to8")


# ---- checks --------------------------------------------------------------------------
def _check_conv(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized data, a supported fused activation; constant float32 / int8 / uint8
    weights (per-channel only on the output axis with zero points 0) and bias; no grouped CONV_2D;
    FULLY_CONNECTED: unshuffled weights, or run-time weights with fixed ranges."""
    why = check_io(imp, op) or check_fused(imp, op)
    if why:
        return why
    w = imp.tensor(op.inputs[1])
    if w.data is None and op.opname == "FULLY_CONNECTED":
        return check_runtime_fc(imp, op)
    if w.data is None:
        return "non-constant weights"
    if w.dtype not in QUANT_TYPES and w.dtype != "float32":
        return f"weights of type {w.dtype}"
    if w.dtype in QUANT_TYPES and w.quant is None:
        return f"weights of type {w.dtype} without quantization"
    axis = 3 if op.opname == "DEPTHWISE_CONV_2D" else 0
    if w.quant is not None and w.quant.per_channel and (w.quant.axis != axis or np.any(w.quant.zero_point != 0)):
        return f"per-channel weights must be on axis {axis} with zero points 0"
    if len(op.inputs) > 2 and op.inputs[2] >= 0 and imp.tensor(op.inputs[2]).data is None:
        return "non-constant bias"
    if op.opname in ("CONV_2D", "DEPTHWISE_CONV_2D") and op.options is None:
        return "missing options"
    if op.opname == "FULLY_CONNECTED" and op.options is not None and op.options.WeightsFormat() != 0:
        return "shuffled weights format"
    if op.opname == "CONV_2D" and imp.tensor(op.inputs[0]).shape[-1] != w.shape[-1]:
        return "grouped convolution (input depth differs from the filter's)"
    return None


def _check_pool(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized input and output (a constant input too: a damaged file can give a pool
    an int32 shape tensor), a supported fused activation, an options table."""
    bad = check_io(imp, op)
    if bad is None and activation_kind(imp.tensor(op.inputs[0])) is None:
        t = imp.tensor(op.inputs[0])
        bad = f"input {t.name} of type {t.dtype} is not float32 or per-tensor int8/uint8"
    return bad or check_fused(imp, op) or (None if op.options is not None else "missing options")


# ---- shared pieces ---------------------------------------------------------------------
def weights_of(imp: TFLiteImporter, w: TFTensor, axis: int, name: str) -> LayerWeights:
    """quint8 weights of a conv-like layer from int8/uint8 (per-tensor or per-channel) or float data."""
    assert w.data is not None
    if w.dtype == "float32":
        lw = float_layer_weights(w.data, axis, name)
    else:
        assert w.quant is not None
        codes, scale = tighten_codes(w.data, w.dtype, w.quant.scale, w.quant.zero_point, axis)
        lw = layer_weights(codes, w.dtype, scale, w.quant.zero_point, axis, name)
    for n in lw.notes:
        imp.note(n)
    return lw


def tighten_codes(codes: np.ndarray, dtype: str, scale: np.ndarray, zero_point: np.ndarray,
                  axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 weights with each channel's codes doubled while they fit in [-127, 127] and its
    scale halved as often: the same real weights, on a finer grid.

    The accumulator unit of the conv ops is ``in_step * w_step`` with ``w_step``
    the largest channel scale, and SEMANTICS §5 rounds the bias plus the output
    offset to whole units (``bb``), and the per-channel depthwise chain's
    QuantizedChannelScale_32xf rounds ``acc * k`` onto that grid. Weights whose codes use a fraction of the
    8 bits (hand-set scales such as ``conv_test.cc``'s 2 and 3) make that unit
    as coarse as an output step (measured: 1 code off LiteRT); doubling exact
    codes makes it up to 127 / max|code| times finer at no cost. Converter-made
    weights (``max|code| = 127`` per channel) are unchanged.
    """
    if dtype != "int8" or np.any(np.asarray(zero_point) != 0):
        return codes, scale
    scale = np.asarray(scale, dtype=np.float64).reshape(-1)
    c = np.moveaxis(np.asarray(codes, dtype=np.int64), axis, 0).reshape(scale.size if scale.size > 1 else 1, -1)
    peak = np.abs(c).max(axis=1) if c.size else np.zeros(c.shape[0], np.int64)
    shift = np.where(peak > 0, np.floor(np.log2(127.0 / np.maximum(peak, 1))), 0).astype(np.int64)
    shift = np.maximum(shift, 0)
    if not np.any(shift):
        return codes, scale
    mult = (np.int64(1) << shift).reshape((-1,) + (1,) * (codes.ndim - 1))
    scaled = np.moveaxis(np.moveaxis(np.asarray(codes, dtype=np.int64), axis, 0) * mult, 0, axis)
    return scaled.astype(np.int8), scale / (np.int64(1) << shift)


def bias_real(imp: TFLiteImporter, op: TFOperator, x: TFTensor, w: TFTensor, n_out: int) -> np.ndarray:
    """The layer's bias in real units (zeros when absent), from int32 codes or float data."""
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        return np.zeros(n_out)
    b = imp.tensor(op.inputs[2])
    assert b.data is not None
    data = b.data.astype(np.float64).reshape(-1)
    if data.size != n_out:
        raise ModelFormatError(f"{imp.label}: bias {b.name} has {data.size} values for {n_out} output channels")
    if b.dtype == "float32":
        return data
    if b.quant is not None and b.quant.scale.size:
        scale = np.broadcast_to(b.quant.scale, (n_out,))
        zp = np.broadcast_to(b.quant.zero_point, (n_out,))
    else:  # TFLite's rule: bias scale = input scale * weight scale, zero point 0
        if x.quant is None or w.quant is None:
            raise ModelFormatError(f"{imp.label}: bias {b.name} is integer but has no scale")
        scale = np.broadcast_to(float(x.quant.scale[0]) * w.quant.scale, (n_out,))
        zp = np.zeros(n_out)
    return (data - zp) * scale


def _zero_code(w_range: tuple[float, float]) -> int:
    return step_zero(*w_range)[1]


# ---- builtins ---------------------------------------------------------------------------
@tflite_op("CONV_2D", CONV_EMITS, _check_conv)
def conv_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """CONV_2D: weights [O,H,W,I] -> HWIO; stride, SAME/VALID, dilation; fused activation."""
    xt, wt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    o = op.options
    lw = weights_of(imp, wt, 0, yt.name)
    w = np.ascontiguousarray(lw.codes.transpose(1, 2, 3, 0))
    w = dilate(w, _zero_code(lw.w_range), o.DilationHFactor(), o.DilationWFactor())
    y = emit_conv(imp, yt.name, imp.value(op.inputs[0]), w, lw.w_range, lw.k, bias_real(imp, op, xt, wt, wt.shape[0]),
                  imp.act_range(op.outputs[0]), (o.StrideH(), o.StrideW()), PADDING[o.Padding()], out_shape(imp, op))
    finish(imp, op, y)


@tflite_op("DEPTHWISE_CONV_2D", CONV_EMITS + SPREAD_EMITS, _check_conv)
def depthwise_conv_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """DEPTHWISE_CONV_2D: weights [1,H,W,C*mult] -> [H,W,C,mult] (channel ``c*mult+m``); dilation."""
    xt, wt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    o = op.options
    c_in = xt.shape[-1]
    c_out = wt.shape[-1]
    if c_out % c_in:
        raise ModelFormatError(f"{imp.label}: depthwise conv {yt.name}: {c_out} outputs for {c_in} input channels")
    lw = weights_of(imp, wt, 3, yt.name)
    fh, fw = wt.shape[1], wt.shape[2]
    w = np.ascontiguousarray(lw.codes.reshape(fh, fw, c_in, c_out // c_in))
    w = dilate(w, _zero_code(lw.w_range), o.DilationHFactor(), o.DilationWFactor())
    y = emit_depthwise(imp, yt.name, imp.value(op.inputs[0]), w, lw.w_range, lw.k,
                       bias_real(imp, op, xt, wt, c_out), imp.act_range(op.outputs[0]), (o.StrideH(), o.StrideW()),
                       PADDING[o.Padding()], out_shape(imp, op))
    finish(imp, op, y)


@tflite_op("FULLY_CONNECTED", CONV_EMITS + ("QuantizedReshape", "Transpose_8", MATMUL, MATMUL_REF),
           _check_conv)
def fully_connected(imp: TFLiteImporter, op: TFOperator) -> None:
    """FULLY_CONNECTED as a 1x1 conv over ``[1,1,N,I]`` (rows in the width dimension); keep_num_dims, no bias.
    Weights computed at run time: Transpose_8 + QuantizedMatMul_8x8to32_ref
    (tflite.handlers.decomposed.emit_runtime_fc)."""
    xt, wt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    n_out, n_in = wt.shape
    x = imp.value(op.inputs[0])
    rows = int(np.prod(x.shape)) // n_in
    x = reshape_value(imp, x, (1, 1, rows, n_in), f"{yt.name}/flatten")
    if wt.data is None:  # run-time weights (matmul_test.cc): QuantizedMatMul_8x8to32_ref chain
        y = emit_runtime_fc(imp, op, x, bias_real(imp, op, xt, wt, n_out))
        finish(imp, op, reshape_value(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))
        return
    lw = weights_of(imp, wt, 0, yt.name)
    w = np.ascontiguousarray(lw.codes.T.reshape(1, 1, n_in, n_out))
    y = emit_conv(imp, yt.name, x, w, lw.w_range, lw.k, bias_real(imp, op, xt, wt, n_out),
                  imp.act_range(op.outputs[0]), (1, 1), NNPad.VALID, (1, 1, rows, n_out))
    y = reshape_value(imp, y, shape4(yt.shape), f"{yt.name}/reshape")
    finish(imp, op, y)


def _pool(imp: TFLiteImporter, op: TFOperator, hex_op: str) -> None:
    yt = imp.tensor(op.outputs[0])
    o = op.options
    x = imp.value(op.inputs[0])
    g = imp.graph
    refs = x.triple() + [g.shape_ref((1, o.FilterHeight(), o.FilterWidth(), 1), f"{yt.name}/window"),
                         g.shape_ref((1, o.StrideH(), o.StrideW(), 1), f"{yt.name}/stride")]
    rng = x.range if hex_op != "QuantizedL2Pool_8" else None
    shape = shape4(yt.shape)
    if hex_op == "QuantizedAvgPool_8" and whole_pool.needs_wide_depth(shape):
        wide = whole_pool.widen(imp, x, yt.name)
        refs[:3] = wide.triple()
        y = node3(imp, hex_op, refs, (*shape[:3], wide.shape[3]), yt.name, wide.range, PADDING[o.Padding()])
        y = whole_pool.narrow(imp, y, shape[3], yt.name)
    else:
        y = node3(imp, hex_op, refs, shape, yt.name, rng, PADDING[o.Padding()])
    finish(imp, op, y)


@tflite_op("MAX_POOL_2D", ("QuantizedMaxPool_8", "Requantize_8to8", "QuantizedRelu_8", "QuantizedReluX_8"),
           _check_pool)
def max_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """MAX_POOL_2D -> QuantizedMaxPool_8 (range passes through, SEMANTICS §6)."""
    _pool(imp, op, "QuantizedMaxPool_8")


@tflite_op("AVERAGE_POOL_2D", ("QuantizedAvgPool_8", "QuantizedConcat_8", "QuantizedSlice_8", "Requantize_8to8",
                               "QuantizedRelu_8", "QuantizedReluX_8"), _check_pool)
def average_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """AVERAGE_POOL_2D -> QuantizedAvgPool_8 (in-bounds taps only, as TFLite counts them); a 1x1 output over a
    depth that is not a multiple of 32 pools copies of its channels to one
    (:mod:`~hexnn_import.importers.nodes.whole_pool`)."""
    _pool(imp, op, "QuantizedAvgPool_8")


@tflite_op("L2_POOL_2D", ("QuantizedL2Pool_8", "Requantize_8to8"), _check_pool)
def l2_pool_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """L2_POOL_2D -> QuantizedL2Pool_8 (float models only in TFLite; the range follows the data)."""
    _pool(imp, op, "QuantizedL2Pool_8")


@tflite_op("RESHAPE", ("QuantizedReshape", "Requantize_8to8"), lambda imp, op: check_io(imp, op))
def reshape(imp: TFLiteImporter, op: TFOperator) -> None:
    """RESHAPE -> QuantizedReshape to the output tensor's (static) shape; 8-bit tensors without
    quantization parameters move their codes unchanged (the reader gives them scale 1, zero point 0)."""
    yt = imp.tensor(op.outputs[0])
    finish(imp, op, reshape_value(imp, imp.value(op.inputs[0]), shape4(yt.shape), yt.name))
