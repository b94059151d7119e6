"""Proposal_q8q16: region proposals from anchors, deltas and scores, with hard NMS
(hexagon_nn_ops.txt; Android NN GENERATE_PROPOSALS as hexagon_nn implements it).

Per image ``b``: anchors (quint16 with their range, ``{x1, y1, x2, y2}``; one
set ``[1, 1, a, 4]`` shared by all images or ``[b, 1, a, 4]``) become centre
form and are shifted to every feature cell, ``xc += w * stride_w``,
``yc += h * stride_h``; proposal ``(h, w, k)`` (raster order) applies its
quint8 deltas ``(dx, dy, dw, dh)`` (depth ``4k..4k+3``): ``xc += dx * aw``,
``w = aw * exp(dw)`` (same for y, h); its corners are clipped to
``[0, image width] x [0, image height]`` - image size ``[b, 1, 1, 2]`` quint16 holds
(width, height), as the text says. Proposals are ordered by descending score
code (equal scores: raster order) and the first ``max proposals`` kept; one
narrower or lower than ``min bbox size`` is dropped; hard NMS then keeps a
proposal unless its IoU (plain extents) with a kept one is ``>= threshold``,
up to ``max rois`` per image.

Outputs (as hexagon_nn, sized to the ``K`` RoIs kept over all images):
scores ``[1, 1, 1, K]`` (the input codes; the score range passes through),
RoIs ``[1, 1, K, 4]`` quint16 over ``[0, 8191.875]`` (step 0.125; corners
rounded half away), and "num boxes" ``[1, 1, 1, K]`` int32 = the image index
of each RoI (the batch-index form QuantizedRoiAlignV2_8 takes).
Computed in float64.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.boxes import descending, greedy_nms
from hexnn_import.ops.detect_io import (BOX_RANGE, dequantize_u16, finite_scalar, int_in, positive_scalar,
                                        quantize_u16, u16_codes)
from hexnn_import.ops.kernel_io import range_out, require_4d, u8_codes
from hexnn_import.ops.quant import dequantize_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register


def proposals(anchors: np.ndarray, deltas: np.ndarray, fh: int, fw: int, stride_h: float, stride_w: float,
              width: float, height: float) -> np.ndarray:
    """Clipped proposal corners ``[fh * fw * a, 4]`` of one image (raster order h, w, anchor)."""
    aw = anchors[:, 2] - anchors[:, 0]
    ah = anchors[:, 3] - anchors[:, 1]
    ax = (anchors[:, 0] + anchors[:, 2]) / 2
    ay = (anchors[:, 1] + anchors[:, 3]) / 2
    xc = ax[None, None, :] + (np.arange(fw) * stride_w)[None, :, None]
    yc = ay[None, None, :] + (np.arange(fh) * stride_h)[:, None, None]
    d = deltas.reshape(fh, fw, -1, 4)
    px = xc + d[..., 0] * aw
    py = yc + d[..., 1] * ah
    pw = aw * np.exp(d[..., 2])
    ph = ah * np.exp(d[..., 3])
    box = np.stack([px - pw / 2, py - ph / 2, px + pw / 2, py + ph / 2], axis=-1).reshape(-1, 4)
    return np.clip(box, 0.0, np.array([width, height, width, height]))


@register("Proposal_q8q16")
class ProposalQ8Q16(Kernel):
    """Generate, filter and NMS region proposals; outputs sized to the kept RoIs."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (s_arr, smn_arr, smx_arr, d_arr, dmn_arr, dmx_arr, a_arr, amn_arr, amx_arr, i_arr, imn_arr, imx_arr,
         sh_arr, sw_arr, mp_arr, mr_arr, thr_arr, ms_arr) = inputs
        smn, smx = ctx.sane_range(smn_arr, smx_arr, "score")
        dmn, dmx = ctx.sane_range(dmn_arr, dmx_arr, "deltas")
        amn, amx = ctx.sane_range(amn_arr, amx_arr, "anchors")
        imn, imx = ctx.sane_range(imn_arr, imx_arr, "image size")
        scores = require_4d(ctx, u8_codes(ctx, s_arr, "score"), "score")
        deltas = require_4d(ctx, u8_codes(ctx, d_arr, "deltas"), "deltas")
        b, fh, fw, a = scores.shape
        if deltas.shape != (b, fh, fw, 4 * a):
            raise ctx.fail(f"deltas have shape {list(deltas.shape)}, expected [{b}, {fh}, {fw}, {4 * a}] "
                           "(4 per anchor)")
        anchors = dequantize_u16(u16_codes(ctx, a_arr, "anchors"), amn, amx).reshape(-1)
        if anchors.size not in (4 * a, 4 * a * b):
            raise ctx.fail(f"anchors hold {anchors.size} values, expected {a} anchors x 4 (shared) or per image")
        anchors = np.broadcast_to(anchors.reshape(-1, a, 4), (b, a, 4))
        size = dequantize_u16(u16_codes(ctx, i_arr, "image size"), imn, imx).reshape(-1)
        if size.size != 2 * b:
            raise ctx.fail(f"image size holds {size.size} values, expected (width, height) for {b} images")
        stride_h, stride_w = positive_scalar(ctx, sh_arr, "stride_h"), positive_scalar(ctx, sw_arr, "stride_w")
        max_prop = int_in(ctx, mp_arr, "max proposal_num", 1)
        max_rois = int_in(ctx, mr_arr, "max_roi_num", 1)
        thr = finite_scalar(ctx, thr_arr, "threshold")
        min_size = finite_scalar(ctx, ms_arr, "min bbox size")
        real_deltas = dequantize_u8(deltas, dmn, dmx)
        out_s, out_r, out_b = [], [], []
        for i in range(b):
            boxes = proposals(anchors[i], real_deltas[i], fh, fw, stride_h, stride_w, size[2 * i], size[2 * i + 1])
            codes = scores[i].reshape(-1)
            top = descending(codes)[:max_prop]
            wide = (boxes[top, 2] - boxes[top, 0] >= min_size) & (boxes[top, 3] - boxes[top, 1] >= min_size)
            kept = greedy_nms(boxes, top[wide], thr, max_rois, inclusive=True)
            out_s.append(codes[kept])
            out_r.append(boxes[kept])
            out_b.append(np.full(kept.size, i, dtype=np.int32))
        k = sum(x.size for x in out_s)
        rois = quantize_u16(np.concatenate(out_r).reshape(k, 4), *BOX_RANGE)
        return (np.concatenate(out_s).astype(np.uint8).reshape(1, 1, 1, k), *range_out(smn, smx),
                rois.reshape(1, 1, k, 4), *range_out(*BOX_RANGE), np.concatenate(out_b).reshape(1, 1, 1, k))
