"""Replace rules of the layers without weights (lib_nn ``add_elementwise.c``, ``avgpool2d.c``, ``maxpool2d.c``).

ADD -> add_elementwise; a mean over the whole image (MEAN over H, W; AVERAGE_POOL_2D whose window covers the
input) -> conv2d_depthwise of equal weights, else avgpool2d_global; MAX_POOL_2D -> maxpool2d; other
AVERAGE_POOL_2D -> avgpool2d.

Their parameters come from the source quantization here, at Replace
(:func:`hexnn_import.xs3.kernels_add.add_params`,
:func:`hexnn_import.xs3.kernels_pool.global_avg_params`); Legalize has no
weights to lay out. A fused activation the output range does not imply
follows as a ``lookup8`` clamp (:func:`hexnn_import.xs3.replace.activation_clamp`).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from hexnn_import.source_layers import LayerInfo
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.kernels_add import add_params
from hexnn_import.xs3.kernels_pool import check_tflite_avgpool, global_avg_params
from hexnn_import.xs3.replace import INT8_VIEWS, Depthwise, ReplaceRule, XS3Op, ceil4
from hexnn_import.xs3.window import Window, tflite_window

#: the unit weight of a mean as a depthwise conv: 64 keeps 6 more bits through the BSO stage's intermediate
#: 16-bit rounding than 1 would (with 1, about 1% of the outputs of a 3x3 mean land 0.01 past the
#: correct rounding; with 64 none on the bundled and keras models, tests/xs3/test_mean.py)
UNIT = 64


def _int8_reason(layer: LayerInfo, n_inputs: int) -> str | None:
    """Why the layer's activations are not per-tensor int8 (None when they are)."""
    if layer.notes:
        return "; ".join(layer.notes)
    if len(layer.inputs) != n_inputs or not layer.outputs:
        return f"{len(layer.inputs)} activation inputs (the kernel takes {n_inputs})"
    for t in layer.inputs + layer.outputs[:1]:
        if t.dtype not in INT8_VIEWS or t.scale is None:
            return f"{t.name} is {t.dtype}{' per-channel' if t.per_channel else ''}, not per-tensor int8"
        if 0 in tuple(t.shape):
            return f"empty tensor {t.name}"
    return None


class Add(ReplaceRule):
    """ADD of two int8 tensors of the same shape -> add_elementwise (no broadcasting in lib_nn)."""

    name = "add"
    kernel = "add_elementwise"

    def match(self, layer: LayerInfo) -> str | None:
        why = _int8_reason(layer, 2)
        if why:
            return why
        a, b, y = layer.inputs[0], layer.inputs[1], layer.y
        if tuple(a.shape) != tuple(b.shape) or math.prod(a.shape) != math.prod(y.shape):
            return f"{self.kernel}: shapes {list(a.shape)} + {list(b.shape)} -> {list(y.shape)} broadcast"
        return None

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        a, b, y = layer.inputs[0], layer.inputs[1], layer.y
        p = add_params(float(a.scale), a.int8_zero_point, float(b.scale), b.int8_zero_point,  # type: ignore[arg-type]
                       float(y.scale), y.int8_zero_point)  # type: ignore[arg-type]
        return XS3Op(layer, self.kernel, self.name, None, tuple(a.shape), tuple(y.shape),
                     params=tuple(int(v) for v in p.as_array()))


class GlobalMean(ReplaceRule):
    """MEAN over the height and width of an NHWC image -> avgpool2d_global."""

    name = "mean-hw-to-global-avgpool"
    kernel = "avgpool2d_global"

    def match(self, layer: LayerInfo) -> str | None:
        why = _int8_reason(layer, 1)
        if why:
            return why
        x = layer.x
        axes = sorted(a % len(x.shape) for a in layer.attrs.get("axes", ())) if len(x.shape) == 4 else []
        if axes != [1, 2] or x.shape[0] != 1:
            return f"{self.kernel}: only a mean over H and W of one NHWC image (axes {layer.attrs.get('axes')})"
        return None

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        x, y = layer.x, layer.y
        s_in, s_out = float(x.scale), float(y.scale)  # type: ignore[arg-type]
        bias, scale, shift = global_avg_params(s_in, x.int8_zero_point, s_out, y.int8_zero_point,
                                               int(x.shape[1]) * int(x.shape[2]))
        return XS3Op(layer, self.kernel, self.name, None, tuple(x.shape), tuple(y.shape), params=(bias, scale, shift))


def _pool_window(layer: LayerInfo) -> Window:
    kh, kw = layer.attrs.get("filter", (0, 0))
    return tflite_window(layer.x.shape[1:3], layer.y.shape[1:3], (kh, kw), layer.stride,  # type: ignore[arg-type]
                         layer.same_padding)


class MeanAsDepthwise(ReplaceRule):
    """A mean over the whole image (MEAN over H, W; AVERAGE_POOL_2D whose window covers the input) ->
    conv2d_depthwise with equal weights :data:`UNIT` of scale ``1 / (UNIT pixels)`` and a zero bias, whose
    BSO stage (15-bit scales, lib_nn note 5) rescales the sums far more exactly than avgpool2d_global's
    8-bit scale: the first choice; avgpool2d_global when the depthwise kernel cannot take it."""

    name = "global-mean-as-depthwise"
    kernel = "conv2d_depthwise"

    def __init__(self, covers: ReplaceRule):
        self.covers = covers

    def match(self, layer: LayerInfo) -> str | None:
        return self.covers.match(layer)

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        _, h, w, c = layer.x.shape
        y_shape = (1, 1, 1, c)
        synthetic = dataclasses.replace(
            layer, opname="DEPTHWISE_CONV_2D", weights=np.full((1, h, w, c), UNIT, np.int8), w_dtype="int8",
            w_scales=np.array([1.0 / (UNIT * h * w)]), w_zero_points=np.zeros(1, np.int64), w_axis=3,
            bias=np.zeros(c, np.int64), bias_dtype="int32", stride=(1, 1), dilation=(1, 1), same_padding=False,
            pad_begin=None, depth_multiplier=1,
            outputs=[dataclasses.replace(layer.y, shape=y_shape)] + layer.outputs[1:])
        op = Depthwise().rewrite(synthetic)
        op.rule = self.name
        op.y_shape = tuple(op.y_shape)
        op.canonical.append(f"mean of {h}x{w} pixels: weights {UNIT} of scale 1/{UNIT * h * w}, zero bias")
        return op


class AvgPoolCoveringInput(GlobalMean):
    """AVERAGE_POOL_2D whose window covers the whole input (a 1x1 output) -> avgpool2d_global, whose bias and
    scale come from the quantization (more exact than avgpool2d's own 7-bit scale of a window size)."""

    name = "avgpool-covers-input-to-global"

    def match(self, layer: LayerInfo) -> str | None:
        why = _int8_reason(layer, 1)
        if why:
            return why
        x, y = layer.x, layer.y
        covers = len(x.shape) == 4 and tuple(layer.attrs.get("filter", ())) == tuple(x.shape[1:3])
        if not covers or x.shape[0] != 1 or math.prod(y.shape) != x.shape[3]:
            return f"{self.kernel}: the window does not cover the whole input"
        return None


class _Pool(ReplaceRule):
    def match(self, layer: LayerInfo) -> str | None:
        why = _int8_reason(layer, 1)
        if why:
            return why
        x, y = layer.x, layer.y
        if len(x.shape) != 4 or x.shape[0] != 1:
            return f"{self.kernel}: one NHWC image (input {list(x.shape)})"
        try:
            s_in, s_out = float(x.scale), float(y.scale)  # type: ignore[arg-type]
            check_tflite_avgpool(s_in, x.int8_zero_point, s_out, y.int8_zero_point, _pool_window(layer),
                                 tuple(x.shape[1:3]), tuple(y.shape[1:3]), ceil4(x.shape[3]))  # type: ignore[arg-type]
        except XS3Error as exc:
            return str(exc).replace("avgpool2d", self.kernel)
        return None

    def rewrite(self, layer: LayerInfo) -> XS3Op:
        c = int(layer.x.shape[3])
        canonical = [f"channels padded {c} -> {ceil4(c)} around the kernel (padded outputs dropped)"] \
            if c % 4 else []
        return XS3Op(layer, self.kernel, self.name, None, tuple(layer.x.shape), tuple(layer.y.shape),
                     _pool_window(layer), canonical)


class MaxPool(_Pool):
    """MAX_POOL_2D with every window inside the image and equal input / output quantization -> maxpool2d;
    channels not a multiple of 4 (lib_nn asserts one) are padded around the call and cut back."""

    name = "maxpool"
    kernel = "maxpool2d"


class AvgPool(_Pool):
    """AVERAGE_POOL_2D with every window inside the image and equal quantization -> avgpool2d."""

    name = "avgpool"
    kernel = "avgpool2d"
