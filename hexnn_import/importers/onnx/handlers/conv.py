"""ONNX Conv and ConvTranspose (float weights or QDQ weights), BatchNormalization folded when planned.

The input is taken in NHWC (a Transpose_8 only when its producer left it in
the ONNX order, e.g. a graph input); the output is NHWC. Geometry, groups
and padding: :mod:`onnx.conv_layer`; weights: :mod:`onnx.weights`.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.transpose_conv import TRANSPOSE_CONV_EMITS
from hexnn_import.importers.onnx.common import check_data, need_const
from hexnn_import.importers.onnx.conv_layer import CONV_EMITS, conv_layer, transpose_conv_layer, window_problem
from hexnn_import.importers.onnx.fuse import bn_affine, layer_out
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import NHWC
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.onnx.weights import bias_of, layer_weights_of, weight_source


def check_conv_like(imp: OnnxImporter, node: ONode, transposed: bool = False) -> str | None:
    """2-D convolution, or 1-D on [N, C, L] (done as 2-D with H = 1), with constant weights and bias;
    groups dividing the channels."""
    why = check_data(imp, node, (0,)) or weight_source(imp, node.input(1)) or need_const(imp, node, (2,))
    if why:
        return why
    x, w = imp.tensors.shape(node.inputs[0]), imp.tensors.const(node.inputs[1]).shape
    if len(x) != 4 or len(w) != 4:
        return f"convolution over {len(x) - 2} spatial dimensions (1-D and 2-D are supported)"
    group = int(node.attr("group", 1))
    if group < 1 or x[1] % group:
        return f"group {group} does not divide the {x[1]} input channels"
    if not transposed and w[1] * group != x[1]:
        return f"weights {list(w)} do not match {x[1]} input channels in {group} groups"
    why = window_problem(node, (x[2], x[3]), (w[2], w[3]), transposed)
    if why:
        return why
    if transposed:
        if w[0] != x[1]:
            return f"weights {list(w)} do not match {x[1]} input channels"
        if any(int(d) != 1 for d in node.attr("dilations") or []) and group != 1:
            return "dilated grouped ConvTranspose"
    return None


@onnx_op("Conv", CONV_EMITS, lambda imp, node: check_conv_like(imp, node))
def conv(imp: OnnxImporter, node: ONode) -> None:
    """Conv: group 1 / depthwise / grouped, dilation, pads (explicit, asymmetric, auto_pad); a fused
    BatchNormalization / clipping activation writes under their output name (onnx.fuse)."""
    bn = imp.plan.bn.get(node.index)
    out = layer_out(imp.plan, node)
    n_out = imp.tensors.const(node.inputs[1]).shape[0]
    bias = bias_of(imp, node.input(2), n_out, out)
    if bn is not None:
        a, c = bn_affine(imp, bn)
        lw = layer_weights_of(imp, node.inputs[1], 0, out, real_fn=lambda w: w * a.reshape(-1, 1, 1, 1))
        bias = bias * a + c
    else:
        lw = layer_weights_of(imp, node.inputs[1], 0, out)
    y = conv_layer(imp, node, imp.tensors.value(node.inputs[0], NHWC), lw, bias, out, imp.tensors.act_range(out))
    imp.tensors.finish(out, y, NHWC)


@onnx_op("ConvTranspose", CONV_EMITS + TRANSPOSE_CONV_EMITS,
         lambda imp, node: check_conv_like(imp, node, transposed=True))
def conv_transpose(imp: OnnxImporter, node: ONode) -> None:
    """ConvTranspose: strides, pads / output_padding / output_shape / auto_pad, groups, dilation."""
    out = node.outputs[0]
    w = imp.tensors.const(node.inputs[1])
    group = int(node.attr("group", 1))
    bias = bias_of(imp, node.input(2), w.shape[1] * group, out)
    lw = layer_weights_of(imp, node.inputs[1], 1, out)
    y = transpose_conv_layer(imp, node, imp.tensors.value(node.inputs[0], NHWC), lw, np.asarray(bias), out,
                             imp.tensors.act_range(out))
    imp.tensors.finish(out, y, NHWC)
