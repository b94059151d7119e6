"""Box_Decoder_f, AxisAlignedBBoxTransform_f, AxisAlignedBBoxTransform_q8q16 (hexagon_nn_ops.txt).

Box_Decoder_f (TF ``faster_rcnn_box_coder`` decode, as hexagon_nn does):
deltas ``[b, 1, n, 4]`` ``(ty, tx, th, tw)``, anchor boxes of the same shape
(or batch 1, shared) ``(ymin, xmin, ymax, xmax)``, 4 scale factors
``(y, x, h, w)``: ``yc = ty / sy * ha + yca``, ``h = exp(th / sh) * ha`` (same
for x, w); the output ``(ymin, xmin, ymax, xmax)`` has the deltas' shape.

AxisAlignedBBoxTransform (Android NN AXIS_ALIGNED_BBOX_TRANSFORM, as
hexagon_nn does): boxes ``[1, 1, R, 4]`` ``{x1, y1, x2, y2}``, deltas
``[1, 1, R, 4C]`` ``(dx, dy, dw, dh)`` per class, "batch splits" = the batch
index of each box (``R`` int32), image info ``[1, 1, B, 2]`` = (height, width)
per batch. Per class: ``w = x2 - x1``, ``xc = (x1 + x2) / 2``,
``xc' = xc + dx * w``, ``w' = exp(dw) * w`` (same for y, h), corners clipped to
``[0, width] x [0, height]``. Output ``[1, 1, R, 4C]``. A box with
``x1 > x2`` or ``y1 > y2`` or a batch index out of range is an error.

The q8q16 variant computes the same in float64: boxes are quint16 box codes
(step 0.125, no min/max input - the output uses the same scale), deltas are
quint8 (with their range), image info is quint16 with its own range; the
clipped corners are rounded half away to box codes. (hexagon_nn works in
integer box codes with table-driven exp; results agree to its rounding.)
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.detect_io import BOX_STEP, U16_MAX, batch_indices, dequantize_u16, u16_codes
from hexnn_import.ops.kernel_io import float_data, require_4d, u8_codes
from hexnn_import.ops.quant import dequantize_u8, round_away
from hexnn_import.ops.registry import Kernel, KernelContext, register


@register("Box_Decoder_f")
class BoxDecoderF(Kernel):
    """Decode center-size deltas against corner anchors with 4 scale factors."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        d_arr, a_arr, s_arr = inputs
        deltas = require_4d(ctx, float_data(ctx, d_arr, "box deltas"), "box deltas")
        anchors = require_4d(ctx, float_data(ctx, a_arr, "anchor boxes"), "anchor boxes")
        scales = float_data(ctx, s_arr, "scale factors").reshape(-1)
        if deltas.shape[3] != 4:
            raise ctx.fail(f"box deltas have shape {list(deltas.shape)}: depth must be 4 (ty, tx, th, tw)")
        if anchors.shape != deltas.shape and anchors.shape != (1,) + deltas.shape[1:]:
            raise ctx.fail(f"anchor boxes have shape {list(anchors.shape)}, expected the deltas' shape "
                           f"{list(deltas.shape)} (or batch 1)")
        if scales.size != 4 or np.any(scales == 0):
            raise ctx.fail(f"scale factors are {scales.tolist()}, expected 4 non-zero values (y, x, h, w)")
        ha = anchors[..., 2] - anchors[..., 0]
        wa = anchors[..., 3] - anchors[..., 1]
        yc = deltas[..., 0] / scales[0] * ha + anchors[..., 0] + ha / 2
        xc = deltas[..., 1] / scales[1] * wa + anchors[..., 1] + wa / 2
        h = np.exp(deltas[..., 2] / scales[2]) * ha
        w = np.exp(deltas[..., 3] / scales[3]) * wa
        out = np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=-1)
        return (out.astype(np.float32),)


def transform_boxes(boxes: np.ndarray, deltas: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Apply per-class deltas ``[R, C, 4]`` to boxes ``[R, 4]``; clip to ``limits [R, 2]`` = (height, width)."""
    w = (boxes[:, 2] - boxes[:, 0])[:, None]
    h = (boxes[:, 3] - boxes[:, 1])[:, None]
    xc = ((boxes[:, 0] + boxes[:, 2]) / 2)[:, None] + deltas[..., 0] * w
    yc = ((boxes[:, 1] + boxes[:, 3]) / 2)[:, None] + deltas[..., 1] * h
    nw = np.exp(deltas[..., 2]) * w
    nh = np.exp(deltas[..., 3]) * h
    hi = np.stack([limits[:, 1], limits[:, 0], limits[:, 1], limits[:, 0]], axis=-1)[:, None, :]
    out = np.stack([xc - nw / 2, yc - nh / 2, xc + nw / 2, yc + nh / 2], axis=-1)
    return np.minimum(np.maximum(out, 0.0), hi)


def checked_layout(ctx: KernelContext, boxes: np.ndarray, deltas: np.ndarray, bidx_arr: np.ndarray,
                   info: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boxes ``[R, 4]``, deltas ``[R, C, 4]`` and the per-box (height, width) after the shape checks."""
    if boxes.ndim != 4 or boxes.shape[3] != 4:
        raise ctx.fail(f"boxes have shape {list(boxes.shape)}, expected [1, 1, num_rois, 4]")
    r = boxes.size // 4
    if deltas.ndim != 4 or deltas.shape[3] % 4 or deltas.size != r * deltas.shape[3] or deltas.shape[3] == 0:
        raise ctx.fail(f"deltas have shape {list(deltas.shape)}, expected [1, 1, {r}, 4 * classes]")
    if info.ndim != 4 or info.shape[3] != 2:
        raise ctx.fail(f"image info has shape {list(info.shape)}, expected [1, 1, batches, 2]")
    limits = info.reshape(-1, 2)
    bidx = batch_indices(ctx, bidx_arr, "batch splits", r, limits.shape[0])
    b = boxes.reshape(r, 4).astype(np.float64)
    bad = np.flatnonzero((b[:, 0] > b[:, 2]) | (b[:, 1] > b[:, 3]))
    if bad.size:
        raise ctx.fail(f"box {bad[0]} is {b[bad[0]].tolist()}: x1 must not exceed x2 nor y1 exceed y2")
    return b, deltas.reshape(r, -1, 4), limits[bidx]


@register("AxisAlignedBBoxTransform_f")
class AxisAlignedBBoxTransformF(Kernel):
    """Refine float boxes by per-class deltas, clipped to each batch's image."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        b_arr, d_arr, bidx_arr, i_arr = inputs
        boxes = float_data(ctx, b_arr, "boxes")
        deltas = float_data(ctx, d_arr, "deltas")
        info = float_data(ctx, i_arr, "image info")
        b, d, limits = checked_layout(ctx, boxes, deltas, bidx_arr, info)
        out = transform_boxes(b, d, limits)
        return (out.reshape(1, 1, b.shape[0], -1).astype(np.float32),)


@register("AxisAlignedBBoxTransform_q8q16")
class AxisAlignedBBoxTransformQ8Q16(Kernel):
    """Refine quint16 box codes by quint8 deltas, clipped to quint16 image sizes."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        b_arr, d_arr, bidx_arr, i_arr, dmn_arr, dmx_arr, imn_arr, imx_arr = inputs
        dmn, dmx = ctx.sane_range(dmn_arr, dmx_arr, "deltas")
        imn, imx = ctx.sane_range(imn_arr, imx_arr, "image info")
        boxes = u16_codes(ctx, b_arr, "boxes")
        deltas = dequantize_u8(u8_codes(ctx, d_arr, "deltas"), dmn, dmx)
        info = dequantize_u16(u16_codes(ctx, i_arr, "image info"), imn, imx)
        b, d, limits = checked_layout(ctx, boxes, deltas, bidx_arr, info)
        out = transform_boxes(b * BOX_STEP, d, limits)
        codes = np.clip(round_away(out / BOX_STEP), 0, U16_MAX).astype(np.uint16)
        return (codes.reshape(1, 1, b.shape[0], -1),)
