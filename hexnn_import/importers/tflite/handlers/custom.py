"""MediaPipe's TFLite custom ops: Convolution2DTransposeBias, MaxPoolingWithArgmax2D, MaxUnpooling2D.

Source: MediaPipe ``mediapipe/util/tflite/operations/`` (google-ai-edge/mediapipe):
``transpose_conv_bias.cc``, ``max_pool_argmax.cc``, ``max_unpooling.cc``. The
kernels are float32 only; their options (``custom_options``) are the raw C
structs ``TfLiteTransposeConvParams`` (``padding, stride_width,
stride_height``: int32) and ``TfLitePoolParams`` (``padding, stride_width,
stride_height, filter_width, filter_height, activation``: int32, then the
computed padding), ``padding`` being ``TfLitePadding`` (1 SAME, 2 VALID).

- Convolution2DTransposeBias (inputs: data, weights ``[O, H, W, I]``, bias
  ``[O]``): the scatter transposed convolution plus bias; output
  ``s * (in - 1) + f - p`` with ``p = max(0, f - (in - 1) % s - 1)`` for SAME,
  0 for VALID, ``p // 2`` cropped before. Mapped onto
  ``emit_transpose_conv`` (QuantizedTransposeConv2d_8x8p32to8) with those
  crops of the full output.
- MaxPoolingWithArgmax2D (outputs: values, indices): a max pool whose second
  output is, per window, ``fy * filter_w + fx + 0.1`` of the first maximum
  in scan order (window coordinates, padding included). Values:
  QuantizedMaxPool_8. Indices: the ``filter_h * filter_w`` taps of every
  window are cut out with QuantizedStridedSlice_8, joined on a tap axis
  (QuantizedConcat_8) and reduced with ArgMax_8toInt32 (first maximum on
  ties, as MediaPipe's strict ``>``), then Convert_int32_f and Add_f 0.1.
  Maxima are compared on the quint8 codes (floats that share a code tie).
- MaxUnpooling2D (inputs: values, indices): each value written at its
  window tap, zeros elsewhere; output ``in * filter``. With stride = filter
  (non-overlapping windows, no padding - MediaPipe's use) this is, per tap
  ``t``, ``select(round(index) == t, value, 0)`` (Quantize, QuantizedEqual_8,
  Select_8) joined on depth in tap order and moved into space by
  DepthToSpace_8 (depth ``t * C + c`` = TF's block order).
"""
from __future__ import annotations

import struct

import numpy as np
import tflite

from hexnn_import.graph import OutputDef, Ref, shape4
from hexnn_import.importers.nodes.core import dequantize, node3, quantize_float, reshape_value
from hexnn_import.importers.nodes.elementwise import emit_compare, emit_select
from hexnn_import.importers.nodes.movement import concat, pad, space_to_depth, strided_slice
from hexnn_import.importers.nodes.reduce import emit_arg_extreme
from hexnn_import.importers.nodes.transpose_conv import TRANSPOSE_CONV_EMITS, emit_transpose_conv
from hexnn_import.importers.nodes.activation import quint8_const
from hexnn_import.importers.tflite.common import PADDING, check_io, finish, out_shape
from hexnn_import.importers.tflite.importer import QUANT_TYPES, TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.handlers.conv_pool import weights_of
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.nodes.values import Value

SAME, VALID = 1, 2  # TfLitePadding


def _ints(op: TFOperator, n: int) -> tuple[int, ...] | None:
    """The first ``n`` little-endian int32 fields of the raw options struct (None when too short)."""
    raw = op.custom_options
    return struct.unpack_from(f"<{n}i", raw) if len(raw) >= 4 * n else None


def _tail_pad(n: int, f: int, s: int, same: bool) -> int:
    """MediaPipe's transposed-conv padding ``max(0, f - (n - 1) % s - 1)`` (SAME), 0 (VALID)."""
    return max(0, f - (n - 1) % s - 1) if same else 0


# ---- Convolution2DTransposeBias ---------------------------------------------------------------------
def _check_tconv(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """MediaPipe's TfLiteTransposeConvParams (SAME / VALID, strides >= 1); 4-D data, constant weights
    (per-channel only on axis 0 with zero points 0) and float32 / int32 bias; the output shape MediaPipe
    computes."""
    opts = _ints(op, 3)
    if opts is None or opts[0] not in (SAME, VALID) or min(opts[1:]) < 1:
        return f"custom options {op.custom_options.hex()} are not a TfLiteTransposeConvParams (padding, strides)"
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        return "expected 3 inputs (data, weights, bias) and 1 output"
    why = check_io(imp, op, (0,))
    if why:
        return why
    x, w, bias, y = (imp.tensor(i) for i in (*op.inputs, op.outputs[0]))
    if w.data is None or bias.data is None:
        return "non-constant weights or bias"
    if w.dtype not in QUANT_TYPES and w.dtype != "float32" or bias.dtype not in ("float32", "int32"):
        return f"weights of type {w.dtype}, bias of type {bias.dtype}"
    if w.quant is not None and w.quant.per_channel and (w.quant.axis != 0 or np.any(w.quant.zero_point != 0)):
        return "per-channel weights must be on axis 0 with zero points 0"
    if len(x.shape) != 4 or len(w.shape) != 4 or x.shape[3] != w.shape[3] or bias.data.size != w.shape[0]:
        return f"shapes data {list(x.shape)}, weights {list(w.shape)}, bias {list(bias.shape)} do not fit"
    _, sw, sh = opts
    same = opts[0] == SAME
    want = (x.shape[0], sh * (x.shape[1] - 1) + w.shape[1] - _tail_pad(x.shape[1], w.shape[1], sh, same),
            sw * (x.shape[2] - 1) + w.shape[2] - _tail_pad(x.shape[2], w.shape[2], sw, same), w.shape[0])
    if tuple(y.shape) != want:
        return f"output shape {list(y.shape)} differs from MediaPipe's {list(want)}"
    return None


def _bias(imp: TFLiteImporter, op: TFOperator) -> np.ndarray:
    """The bias in real units: float data, or int32 on its scale (input scale * weight scale if none)."""
    x, w, b = (imp.tensor(i) for i in op.inputs)
    data = np.asarray(b.data, dtype=np.float64).reshape(-1)
    if b.dtype == "float32":
        return data
    if b.quant is not None and b.quant.scale.size:
        return data * np.broadcast_to(b.quant.scale, data.shape)
    assert x.quant is not None and w.quant is not None
    return data * np.broadcast_to(float(x.quant.scale[0]) * w.quant.scale, data.shape)


@tflite_op("CUSTOM:Convolution2DTransposeBias", TRANSPOSE_CONV_EMITS, _check_tconv)
def convolution_2d_transpose_bias(imp: TFLiteImporter, op: TFOperator) -> None:
    """MediaPipe's transposed conv with bias -> QuantizedTransposeConv2d_8x8p32to8 (module doc)."""
    xt, wt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    padding, sw, sh = _ints(op, 3)  # type: ignore[misc]
    same = padding == SAME
    crops = []
    for n, f, s in ((xt.shape[1], wt.shape[1], sh), (xt.shape[2], wt.shape[2], sw)):
        p = _tail_pad(n, f, s, same)
        crops += [p // 2, p - p // 2]
    lw = weights_of(imp, wt, 0, yt.name)
    y = emit_transpose_conv(imp, yt.name, imp.qvalue(op.inputs[0]), lw.codes, lw.w_range, lw.k, _bias(imp, op),
                            imp.act_range(op.outputs[0]), (sh, sw), (crops[0], crops[1], crops[2], crops[3]),
                            out_shape(imp, op))
    finish(imp, op, y)


# ---- MaxPoolingWithArgmax2D ---------------------------------------------------------------------------
def _pool_opts(op: TFOperator) -> tuple[int, int, int, int, int, int] | None:
    """``(padding, stride_w, stride_h, filter_w, filter_h, activation)`` of a raw TfLitePoolParams."""
    opts = _ints(op, 6)
    if opts is None or opts[0] not in (SAME, VALID) or min(opts[1:5]) < 1:
        return None
    return opts  # type: ignore[return-value]


def _pool_geometry(n: int, f: int, s: int, same: bool) -> tuple[int, int]:
    """``(out, pad_before)`` of TFLite's windowed output (``ComputePadding``)."""
    out = (n + s - 1) // s if same else (n - f + s) // s
    return out, max(((out - 1) * s + f - n) // 2, 0)


def _check_argmax_pool(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A 4-D float32 or per-tensor quantized input, no fused activation, float32 indices; no SAME padding
    before the first window."""
    opts = _pool_opts(op)
    if opts is None:
        return f"custom options {op.custom_options.hex()} are not a TfLitePoolParams"
    if opts[5] != 0:
        return f"fused activation {opts[5]}"
    if len(op.inputs) != 1 or len(op.outputs) != 2:
        return "expected 1 input and 2 outputs (values, indices)"
    why = check_io(imp, op, (0,), (0,))
    if why:
        return why
    x = imp.tensor(op.inputs[0])
    if len(x.shape) != 4:
        return f"input of rank {len(x.shape)}"
    if imp.tensor(op.outputs[1]).dtype != "float32":
        return f"indices of type {imp.tensor(op.outputs[1]).dtype} (MediaPipe writes float32)"
    _, sw, sh, fw, fh, _ = opts
    same = opts[0] == SAME
    (oh, top), (ow, left) = _pool_geometry(x.shape[1], fh, sh, same), _pool_geometry(x.shape[2], fw, sw, same)
    if top or left:
        return ("SAME padding before the windows (a padded tap could precede the first valid one in scan "
                "order)")
    if tuple(imp.tensor(op.outputs[0]).shape) != (x.shape[0], oh, ow, x.shape[3]):
        return "output shape differs from the pooled shape"
    return None


def _window_taps(imp: TFLiteImporter, x: Value, fh: int, fw: int, sh: int, sw: int, oh: int, ow: int,
                 name: str) -> Value:
    """Every window's taps on a new last axis: ``[1, b*oh*ow, C, fh*fw]`` (tap ``fy * fw + fx``)."""
    b, h, w, c = x.shape
    need_h, need_w = (oh - 1) * sh + fh, (ow - 1) * sw + fw
    if need_h > h or need_w > w:  # bottom / right padding: taps after every valid one never win ties
        x = pad(imp, x, [(0, 0), (0, max(0, need_h - h)), (0, max(0, need_w - w)), (0, 0)], -np.inf,
                f"{name}/pad")
    taps = []
    for fy in range(fh):
        for fx in range(fw):
            t = strided_slice(imp, x, [0, fy, fx, 0], [1, sh, sw, 1], [b, oh, ow, c], f"{name}/tap{fy}_{fx}")
            taps.append(reshape_value(imp, t, (1, b * oh * ow, c, 1), f"{name}/tap{fy}_{fx}/flat"))
    return concat(imp, taps, 3, (1, b * oh * ow, c, fh * fw), None, f"{name}/taps")


@tflite_op("CUSTOM:MaxPoolingWithArgmax2D", ("QuantizedMaxPool_8", "QuantizedStridedSlice_8", "QuantizedPad_V2_8",
                                             "QuantizedPad_8", "QuantizedReshape", "QuantizedConcat_8",
                                             "ArgMax_8toInt32", "Reshape", "Convert_int32_f", "Add_f",
                                             "Requantize_8to8"), _check_argmax_pool)
def max_pooling_with_argmax_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """MediaPipe's max pool with argmax indices (module doc)."""
    padding, sw, sh, fw, fh, _ = _pool_opts(op)  # type: ignore[misc]
    yt, it = imp.tensor(op.outputs[0]), imp.tensor(op.outputs[1])
    x = imp.qvalue(op.inputs[0])
    g = imp.graph
    refs = x.triple() + [g.shape_ref((1, fh, fw, 1), f"{yt.name}/window"),
                         g.shape_ref((1, sh, sw, 1), f"{yt.name}/stride")]
    mode = PADDING[tflite.Padding.SAME if padding == SAME else tflite.Padding.VALID]
    y = node3(imp, "QuantizedMaxPool_8", refs, shape4(yt.shape), yt.name, x.range, mode)
    finish(imp, op, y)
    b, oh, ow, c = shape4(yt.shape)
    taps = _window_taps(imp, x, fh, fw, sh, sw, oh, ow, it.name)
    idx = emit_arg_extreme(imp, taps, 3, True, f"{it.name}/argmax")
    flat = g.append("Reshape", [idx.data, imp.int_const([b, oh, ow, c], f"{it.name}/shape")],
                    [OutputDef((b, oh, ow, c), "int32")], name=f"{it.name}/reshape")
    as_float = g.append("Convert_int32_f", [Ref(flat.node_id, 0)], [OutputDef((b, oh, ow, c), "float")],
                        name=f"{it.name}/float")
    tenth = g.const_ref(np.full((1, 1, 1, 1), 0.1, np.float32), f"{it.name}/tenth")
    out = g.append("Add_f", [Ref(as_float.node_id, 0), tenth], [OutputDef((b, oh, ow, c), "float")],
                   name=f"{it.name}/plus_tenth")
    imp.set_output(op.outputs[1], Value(Ref(out.node_id, 0), (b, oh, ow, c), "float"))


# ---- MaxUnpooling2D ----------------------------------------------------------------------------------
def _check_unpool(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Non-overlapping windows (stride = filter, square), no fused activation; float32 indices of the values'
    4-D shape; output = input times the filter."""
    opts = _pool_opts(op)
    if opts is None:
        return f"custom options {op.custom_options.hex()} are not a TfLitePoolParams"
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        return "expected 2 inputs (values, indices) and 1 output"
    why = check_io(imp, op, (0,), (0,))
    if why:
        return why
    _, sw, sh, fw, fh, act = opts
    if act != 0:
        return f"fused activation {act}"
    if not (sw == fw == sh == fh):
        return f"stride {sh}x{sw} and filter {fh}x{fw}: only square non-overlapping windows (stride = filter)"
    x, ind, y = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    if ind.dtype != "float32" or tuple(ind.shape) != tuple(x.shape) or len(x.shape) != 4:
        return f"indices {ind.dtype}{list(ind.shape)} for values {list(x.shape)} (float32 of the same 4-D shape)"
    if tuple(y.shape) != (x.shape[0], x.shape[1] * fh, x.shape[2] * fw, x.shape[3]):
        return f"output shape {list(y.shape)} is not the input's times the filter"
    return None


def _index_codes(imp: TFLiteImporter, op: TFOperator, name: str) -> Value:
    """The indices as quint8 codes on ``[0, 255]`` (code = round(index), MediaPipe truncates ``idx + 0.1``)."""
    v = imp.value(op.inputs[1])
    if v.quantized:  # a float tensor the importer keeps as quint8 (e.g. a graph input)
        ref = dequantize(imp, v, f"{name}/indices")
    else:
        ref = v.data
    return quantize_float(imp, ref, v.shape, (0.0, 255.0), f"{name}/indices")


@tflite_op("CUSTOM:MaxUnpooling2D", ("Quantize", "Dequantize", "QuantizedEqual_8", "Select_8", "QuantizedConcat_8",
                                     "DepthToSpace_8", "Requantize_8to8"), _check_unpool)
def max_unpooling_2d(imp: TFLiteImporter, op: TFOperator) -> None:
    """MediaPipe's max unpooling, stride = filter (module doc)."""
    _, _, _, f, _, _ = _pool_opts(op)  # type: ignore[misc]
    yt = imp.tensor(op.outputs[0])
    x = imp.qvalue(op.inputs[0])
    codes = _index_codes(imp, op, yt.name)
    # 0.0 on a zero-width range: Select_8's output range (the union) is then the values' own, codes copied
    zero = quint8_const(imp, np.zeros((1, 1, 1, 1)), (0.0, 0.0), f"{yt.name}/zero")
    parts = []
    for t in range(f * f):
        tc = quint8_const(imp, np.full((1, 1, 1, 1), t), (0.0, 255.0), f"{yt.name}/tap{t}")
        hit = emit_compare(imp, "EQUAL", codes, tc, f"{yt.name}/tap{t}")
        parts.append(emit_select(imp, hit, x, zero, x.shape, None, f"{yt.name}/tap{t}"))
    b, h, w, c = x.shape
    joined = concat(imp, parts, 3, (b, h, w, c * f * f), None, f"{yt.name}/taps")
    finish(imp, op, space_to_depth(imp, joined, f, f"{yt.name}/depth_to_space", inverse=True))

