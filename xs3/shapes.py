"""The shapes a conv-like layer declares, checked against what its weights and window compute.

Replace and Legalize take the tensor shapes the TFLite file declares (the
window, the BSO channel count, the kernels' reshapes all follow them),
while LiteRT recomputes every shape at ``AllocateTensors``. A damaged file
whose declared output does not follow TFLite's shape rules would export a
kernel for the wrong tensor, so :func:`check_layer_shapes` refuses it
with an :class:`XS3ModelError` naming the layer. The rules are TFLite's
(``tensorflow/lite/kernels/padding.h`` ``ComputeOutSize``, ``conv.cc`` /
``depthwise_conv.cc`` / ``fully_connected.cc`` Prepare): SAME gives
``ceil(in / stride)``, VALID ``ceil((in - k + 1) / stride)`` (dilation 1:
other dilations never reach a kernel, :func:`.replace.source_reason`).
"""
from __future__ import annotations

import math

from hexnn_import.xs3.errors import XS3ModelError
from hexnn_import.source_layers import LayerInfo


def out_size(size: int, k: int, stride: int, same: bool) -> int:
    """TFLite's ComputeOutSize for dilation 1."""
    return -(-size // stride) if same else -(-(size - k + 1) // stride)


def expected_output(layer: LayerInfo) -> tuple[int, ...]:
    """The output shape ``layer``'s input, weights and options give; XS3ModelError when they give none."""
    assert layer.weights is not None
    x, w = tuple(layer.x.shape), tuple(layer.weights.shape)
    where = f"layer {layer.name} ({layer.opname})"
    if layer.opname == "FULLY_CONNECTED":
        if len(w) != 2 or w[1] <= 0:
            raise XS3ModelError(f"{where}: weights of shape {list(w)} are not [outputs, inputs]")
        n = math.prod(x)
        if n % w[1]:
            raise _fc_input_error(where, x, w)
        return (n // w[1], w[0])
    if len(x) != 4 or len(w) != 4:
        raise XS3ModelError(f"{where}: input {list(x)} and weights {list(w)} must both be 4-D")
    if min(layer.stride) < 1:
        raise XS3ModelError(f"{where}: stride {list(layer.stride)} must be at least 1")
    b, h, wd, c = x
    if layer.opname == "DEPTHWISE_CONV_2D":
        c_out = w[3]
        if c * max(layer.depth_multiplier, 1) != c_out:
            raise XS3ModelError(f"{where}: {c} input channels x depth multiplier {layer.depth_multiplier} "
                                f"!= {c_out} weight channels")
    else:
        c_out = w[0]
        if w[3] != c:
            raise XS3ModelError(f"{where}: weights {list(w)} read {w[3]} channels, the input {list(x)} has {c}")
    pads = layer.attrs.get("pads") if layer.pad_begin is not None else None
    if pads is not None:  # explicit padding (ONNX pads: top, left, bottom, right)
        oh = (h + pads[0] + pads[2] - w[1]) // layer.stride[0] + 1
        ow = (wd + pads[1] + pads[3] - w[2]) // layer.stride[1] + 1
    else:
        oh = out_size(h, w[1], layer.stride[0], layer.same_padding)
        ow = out_size(wd, w[2], layer.stride[1], layer.same_padding)
    if oh < 1 or ow < 1:
        raise XS3ModelError(f"{where}: a {w[1]}x{w[2]} window does not fit the {h}x{wd} input (VALID padding)")
    return (b, oh, ow, c_out)


def _fc_input_error(where: str, x: tuple[int, ...], w: tuple[int, ...]) -> XS3ModelError:
    """The error of a fully-connected input whose size is no multiple of the weights' input length."""
    return XS3ModelError(f"{where}: the input {list(x)} ({math.prod(x)} values) is no whole number of rows of "
                         f"{w[1]} inputs (weights {list(w)})")


def check_layer_shapes(layer: LayerInfo) -> None:
    """XS3ModelError naming ``layer`` when its declared output is not what TFLite's rules compute."""
    want = expected_output(layer)
    got = tuple(layer.y.shape)
    same = got == want if layer.opname != "FULLY_CONNECTED" else math.prod(got) == math.prod(want)
    if not same:
        raise XS3ModelError(f"layer {layer.name} ({layer.opname}): the model declares output shape {list(got)}, "
                            f"its input {list(layer.x.shape)} and weights {list(layer.weights.shape)} give "  # type: ignore[union-attr]
                            f"{list(want)} (the file's shapes are inconsistent)")
