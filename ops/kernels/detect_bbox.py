"""Box_Decoder_f, AxisAlignedBBoxTransform_f, AxisAlignedBBoxTransform_q8q16 (hexagon_nn_ops.txt).

Box_Decoder_f (TF ``faster_rcnn_box_coder`` decode, as hexagon_nn does):
deltas ``[b, 1, n, 4]`` ``(ty, tx, th, tw)``, anchor boxes of the same shape
(or batch 1, shared) ``(ymin, xmin, ymax, xmax)``, 4 scale factors
``(y, x, h, w)``: ``yc = ty / sy * ha + yca``, ``h = exp(th / sh) * ha`` (same
for x, w); the output ``(ymin, xmin, ymax, xmax)`` has the deltas' shape. The exp
is nnlib's ``fast_exp`` (include/float_mathops.h: max. relative error 8.34e-5),
every step in float32 as the device computes it (:func:`decode_boxes_f32`).

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
from hexnn_import.ops.nnlib_f32 import F, fmaf, trunc_i32
from hexnn_import.ops.quant import dequantize_u8, round_away
from hexnn_import.ops.registry import Kernel, KernelContext, register

#: fast_exp's constants as float32: 12102203.0f ~ 2**23 / ln 2 and (float)1065353216 = 127 * 2**23.
_EXP_K, _EXP_BIAS, _HALF = F(12102203.0), F(1065353216.0), F(0.5)
#: Hexagon's float ops give this NaN (all bits set) for any NaN result.
_DEFAULT_NAN = np.uint32(0xFFFFFFFF).view(F)


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
        return (decode_boxes_f32(deltas, anchors, scales),)


def fast_exp(x: np.ndarray) -> np.ndarray:
    """include/float_mathops.h ``fast_exp`` as the v66 build runs it: ``(int32_t)(12102203.0f * x + 1065353216)``
    (one ``sfmpyacc``: :func:`fmaf`; the cast ``convert_sf2w:chop``), then the 16-bit mantissa correction in
    int32 arithmetic (products wrap as ``mpyi``), the sum's bits read as a float32."""
    i = trunc_i32(fmaf(x, _EXP_K, _EXP_BIAS)).astype(np.int64)
    m = (i >> 7) & 0xFFFF
    t = (((((1277 * m) >> 14) + 14825) * m) >> 14) - 79749
    t = _wrap32(t * m) >> 11
    return _wrap32(i + t - 626).astype(np.int32).view(np.float32)


def _wrap32(v: np.ndarray) -> np.ndarray:
    """int32 two's-complement wrap of int64 values (Hexagon ``mpyi`` / ``add``)."""
    return ((v + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31


def decode_boxes_f32(deltas: np.ndarray, anchors: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """op_box_decoder.c box_decoder_execute_f (l. 75-100) in its float32 steps as clang builds it for v66: the
    anchor centre ``y0 + h * 0.5f`` in two roundings, the delta ``boxes / scale`` (``__hexagon_divsf3``, correctly
    rounded), the box centre ``delta * h + centre`` contracted into one fmaf, the size ``fast_exp(delta) * h``, the
    corners ``centre -/+ size * 0.5f``."""
    d = deltas.astype(F)
    a = np.broadcast_to(anchors.astype(F), d.shape)
    s = scales.astype(F)
    with np.errstate(invalid="ignore", over="ignore"):  # fast_exp beyond about +-88: inf / NaN bits, as on the device
        ha = a[..., 2] - a[..., 0]
        wa = a[..., 3] - a[..., 1]
        yc = fmaf(d[..., 0] / s[0], ha, a[..., 0] + ha * _HALF)
        xc = fmaf(d[..., 1] / s[1], wa, a[..., 1] + wa * _HALF)
        h = fast_exp(d[..., 2] / s[2]) * ha * _HALF
        w = fast_exp(d[..., 3] / s[3]) * wa * _HALF
        out = np.stack([yc - h, xc - w, yc + h, xc + w], axis=-1).astype(F)
    return np.where(np.isnan(out), _DEFAULT_NAN, out)    # a NaN out of sfadd / sfsub is the default NaN


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
