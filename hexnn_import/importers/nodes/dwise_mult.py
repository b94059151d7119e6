"""A depthwise layer with a depth multiplier > 1 in the form hexagon_nn's device computes right (issue 36).

TFLite's DEPTHWISE_CONV_2D with ``depth_multiplier`` m (weights ``[1, fh, fw, cin * m]``) and ONNX's Conv with
``group == cin`` and ``cin * m`` outputs read input channel ``c`` into output channels ``c * m + k``
(``k < m``). hexagon_nn's QuantizedDepthwiseConv2d_8x8to32 takes such a filter (``[fh, fw, cin, m]``), but a
DepthwiseSupernode_8x8p32to8 with it (the importers fuse a quantized layer's declared chain) becomes a
DepthwiseSupernode_8x8p32to8_d32 in prepare.c, whose kernels (op_dwise_snode_8bit.c) walk the output channels
one to one over the input's ("needs shuffling"): on a DSP every such node is wrong or fails to execute
(docs/verification.md, "The device-code cases").

So the importers first replicate the input's channels in that same order, by exact data movement, and then
run a multiplier-1 depthwise layer over the ``cin * m`` channels with the same weight codes
(``[fh, fw, cin, m]`` read row-major is ``[fh, fw, cin * m, 1]``) and the same quantization:

- QuantizedReshape ``[n, H, W, cin]`` -> ``[1, n * H * W, cin, 1]`` (one channel per element);
- QuantizedTile_8 with multiples ``[1, 1, 1, m]`` -> ``[1, n * H * W, cin, m]`` (op_tile.c copies bytes, the
  range passes through; SEMANTICS §6);
- QuantizedReshape -> ``[n, H, W, cin * m]``: element ``(h, w, c * m + k)`` is input ``(h, w, c)``.

Three flat ops whatever m is (a QuantizedConcat_8 of m copies would be made a QuantizedConcat_8_d32 by prepare,
with a Convert_to_d32 per input). Only a declared chain (fixed ranges, per-tensor weights) is rewritten
(:func:`emit_depthwise`, :func:`hexnn_import.importers.nodes.core.declared_chain`): the importers fuse it into
a DepthwiseSupernode, which prepare makes the ``_d32`` node. Any other chain keeps its multiplier: prepare.c does not fuse it
(dwconv_extrachecks: "depth mult") and the device runs op_depthwiseconv.c's reference loop, which walks
``z * filt_batches + mult`` as the source formats do.

Each 8x8to32 product, and so every later value, is the one the multiplier-m layer gives on the engine (the
QDQ digits model of models/real/families with such a layer: all 450 test outputs identical in both forms).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import NNPad
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, declared_chain, emit_conv, reshape_value
from hexnn_import.importers.nodes.movement import tile
from hexnn_import.importers.nodes.values import Value

#: the ops :func:`spread_channels` emits
SPREAD_EMITS = ("QuantizedReshape", "QuantizedTile_8")


def spread_channels(b: GraphBuilder, x: Value, m: int, name: str) -> Value:
    """``x`` ``[n, h, w, c]`` with each channel repeated ``m`` times in place: channel ``c * m + k`` is input
    channel ``c`` (module doc: reshape, tile on depth, reshape); ``x`` itself when m is 1."""
    if m == 1:
        return x
    n, h, w, c = (int(v) for v in x.shape)
    flat = reshape_value(b, x, (1, n * h * w, c, 1), f"{name}/spread/flat")
    return reshape_value(b, tile(b, flat, [1, 1, 1, m], f"{name}/spread"), (n, h, w, c * m), f"{name}/spread/reshape")


def multiplier_one(b: GraphBuilder, x: Value, w: np.ndarray, name: str) -> tuple[Value, np.ndarray]:
    """``(input, weights)`` of the multiplier-1 depthwise layer that computes the depthwise layer of input ``x``
    and weights ``w`` ``[fh, fw, cin, m]`` (module doc); unchanged when m is 1."""
    m = int(w.shape[3])
    if m == 1:
        return x, w
    fh, fw, c = (int(v) for v in w.shape[:3])
    return spread_channels(b, x, m, name), np.ascontiguousarray(w.reshape(fh, fw, c * m, 1))


def emit_depthwise(b: GraphBuilder, name: str, x: Value, w: np.ndarray, w_range: Range, k: np.ndarray | None,
                   bias_real: np.ndarray, out_range: Range | None, stride: tuple[int, int], padding: NNPad,
                   out_shape: tuple[int, int, int, int]) -> Value:
    """A depthwise layer (:func:`~hexnn_import.importers.nodes.core.emit_conv`, weights ``[fh, fw, cin, m]``):
    a chain the importers declare for fusion gets multiplier 1 (:func:`multiplier_one`, module doc); an
    undeclared one keeps its multiplier (prepare does not fuse it: dwconv_extrachecks; the device's reference
    op computes it right)."""
    if declared_chain(x, out_range, k, True):
        x, w = multiplier_one(b, x, w, name)
    return emit_conv(b, name, x, w, w_range, k, bias_real, out_range, stride, padding, out_shape, depthwise=True)

