"""A depthwise layer with a depth multiplier > 1 in the form hexagon_nn's device computes right (issue 36).

TFLite's DEPTHWISE_CONV_2D with ``depth_multiplier`` m (weights ``[1, fh, fw, cin * m]``) and ONNX's Conv with
``group == cin`` and ``cin * m`` outputs read input channel ``c`` into output channels ``c * m + k``
(``k < m``). hexagon_nn's QuantizedDepthwiseConv2d_8x8to32 takes such a filter (``[fh, fw, cin, m]``), but
prepare.c makes it a DepthwiseSupernode_8x8p32to8_d32 whose kernels (op_dwise_snode_8bit.c) walk the output
channels one to one over the input's ("needs shuffling"): every multiplier-m node is wrong on a real DSP
(docs/verification.md, "The device-code cases").

So the importers first replicate the input's channels in that same order, by exact data movement, and then
run a multiplier-1 depthwise layer over the ``cin * m`` channels with the same weight codes
(``[fh, fw, cin, m]`` read row-major is ``[fh, fw, cin * m, 1]``) and the same quantization:

- QuantizedReshape ``[1, H, W, cin]`` -> ``[1, H * W, cin, 1]`` (one channel per element);
- QuantizedConcat_8 of m copies on the depth axis -> ``[1, H * W, cin, m]``: every input has the same range
  (the same min / max refs), so the merged range is that range and the op copies codes (SEMANTICS §6);
- QuantizedReshape -> ``[1, H, W, cin * m]``: element ``(h, w, c * m + k)`` is input ``(h, w, c)``.

Each 8x8to32 product, and so every later value, is the one the multiplier-m layer gives on the engine.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import node3, reshape_value
from hexnn_import.importers.nodes.values import Value

#: the ops :func:`spread_channels` emits
SPREAD_EMITS = ("QuantizedReshape", "QuantizedConcat_8")


def spread_channels(b: GraphBuilder, x: Value, m: int, name: str) -> Value:
    """``x`` ``[n, h, w, c]`` with each channel repeated ``m`` times in place: channel ``c * m + k`` is input
    channel ``c`` (module doc: reshape, concat of ``m`` copies on depth, reshape); ``x`` itself when m is 1."""
    if m == 1:
        return x
    n, h, w, c = (int(v) for v in x.shape)
    flat = reshape_value(b, x, (1, n * h * w, c, 1), f"{name}/spread/flat")
    refs = [b.int_const(3, f"{name}/spread/dim")] + [flat.data] * m + [flat.mn] * m + [flat.mx] * m
    y = node3(b, "QuantizedConcat_8", refs, (1, n * h * w, c, m),  # type: ignore[arg-type]
              f"{name}/spread", flat.range)
    return reshape_value(b, y, (n, h, w, c * m), f"{name}/spread/reshape")


def multiplier_one(b: GraphBuilder, x: Value, w: np.ndarray, name: str) -> tuple[Value, np.ndarray]:
    """``(input, weights)`` of the multiplier-1 depthwise layer that computes the depthwise layer of input ``x``
    and weights ``w`` ``[fh, fw, cin, m]`` (module doc); unchanged when m is 1."""
    m = int(w.shape[3])
    if m == 1:
        return x, w
    fh, fw, c = (int(v) for v in w.shape[:3])
    return spread_channels(b, x, m, name), np.ascontiguousarray(w.reshape(fh, fw, c * m, 1))
