"""QuantizedRoiAlignV2_8 and QuantizedRoiPool_8_v2 (hexagon_nn_ops.txt).

RoiAlignV2 (Android NN ROI_ALIGN, as hexagon_nn implements it): RoIs
``[1, 1, R, 4]`` of quint16 box codes ``{x1, y1, x2, y2}`` (step 0.125, no
min/max input); a RoI in feature-map units is ``code * 0.125 * scale``; its
size is at least 1; each of the ``ph x pw`` output cells is sampled on a
``sr_h x sr_w`` grid of cell-centred points (a ratio of 0 means
``ceil(roi_size / pooled_size)``); each sample is bilinear (coordinates at
or past the last row/column use that row/column) and the cell value is their
mean. Computed in float64 on dequantized features and quantized onto
``adjust_range(out_exp_min, out_exp_max)`` rounding half away from zero
(hexagon_nn quantizes the bilinear weights to 1/255; the results agree to
that rounding). Errors: a batch index outside the feature batches, or a RoI
with ``x1 > x2``, ``y1 > y2`` or reaching past the feature map.
Output ``[R, ph, pw, d]``.

RoiPoolV2 (Android NN ROI_POOLING): RoIs ``[R, 4, 1, 1]`` quint16 ``{x1, y1, x2, y2}``
dequantized with the roi scale/offset input (``real = (q - offset) * scale``),
divided by the height/width scale ("ratio" of image to feature map, as
hexagon_nn divides) and rounded half away to whole cells; size
``max(end - start + 1, 1)``; cell ``i`` of ``n`` spans
``[floor(i*size/n), ceil((i+1)*size/n))`` from the start, clipped to the map.
Each cell is the max code over its span; an empty span gives the code of
0.0. The range passes through; the layout input is unused (as the text says).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops.detect_io import BOX_STEP, batch_indices, int_in, positive_scalar, u16_codes
from hexnn_import.ops.kernel_io import float_data, range_out, require_4d, u8_codes
from hexnn_import.ops.quant import adjust_range, dequantize_u8, quantize_u8, round_away
from hexnn_import.ops.registry import Kernel, KernelContext, register


def bilinear_axis(pos: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower index, upper index and upper weight of sample positions along an axis of ``size``."""
    lo = np.floor(pos).astype(np.int64)
    frac = pos - lo
    edge = lo >= size - 1
    lo = np.where(edge, size - 1, lo)
    hi = np.where(edge, size - 1, lo + 1)
    return lo, hi, np.where(edge, 0.0, frac)


def sample_positions(start: float, length: float, cells: int, grid: int) -> np.ndarray:
    """Cell-centred sample positions ``[cells, grid]`` along one axis."""
    cell = length / cells
    return start + cell * np.arange(cells)[:, None] + (np.arange(grid)[None, :] + 0.5) * cell / grid


def roi_align_one(fmap: np.ndarray, box: np.ndarray, ph: int, pw: int, sr_h: int, sr_w: int) -> np.ndarray:
    """One RoI ``(x1, y1, x2, y2)`` in map units over ``fmap [H, W, D]`` (float64) -> ``[ph, pw, D]``."""
    h, w = fmap.shape[:2]
    roi_h = max(box[3] - box[1], 1.0)
    roi_w = max(box[2] - box[0], 1.0)
    gh = sr_h if sr_h > 0 else math.ceil(roi_h / ph)
    gw = sr_w if sr_w > 0 else math.ceil(roi_w / pw)
    y0, y1, fy = bilinear_axis(sample_positions(box[1], roi_h, ph, gh), h)   # [ph, gh]
    x0, x1, fx = bilinear_axis(sample_positions(box[0], roi_w, pw, gw), w)   # [pw, gw]
    rows = fmap[y0] * (1 - fy)[..., None, None] + fmap[y1] * fy[..., None, None]          # [ph, gh, W, D]
    vals = rows[:, :, x0] * (1 - fx)[None, None, ..., None] + rows[:, :, x1] * fx[None, None, ..., None]
    return vals.mean(axis=(1, 3))                                                          # [ph, pw, D]


@register("QuantizedRoiAlignV2_8")
class QuantizedRoiAlignV28(Kernel):
    """Bilinear RoI average pooling of a quint8 feature map onto a given output range."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (data, mn_arr, mx_arr, rois_arr, bidx_arr, ph_arr, pw_arr, sh_arr, sw_arr,
         rh_arr, rw_arr, omn_arr, omx_arr) = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "feature")
        out_mn, out_mx = adjust_range(*ctx.sane_range(omn_arr, omx_arr, "output"))
        q = require_4d(ctx, u8_codes(ctx, data, "feature data"), "feature data")
        rois = u16_codes(ctx, rois_arr, "RoIs")
        if rois.ndim != 4 or rois.shape[:2] != (1, 1) or rois.shape[3] != 4:
            raise ctx.fail(f"RoIs have shape {list(rois.shape)}, expected [1, 1, num_rois, 4]")
        n = rois.shape[2]
        bidx = batch_indices(ctx, bidx_arr, "batch index", n, q.shape[0])
        ph, pw = int_in(ctx, ph_arr, "pooled height", 1), int_in(ctx, pw_arr, "pooled width", 1)
        sh = positive_scalar(ctx, sh_arr, "spatial scale height")
        sw = positive_scalar(ctx, sw_arr, "spatial scale width")
        sr_h, sr_w = int_in(ctx, rh_arr, "sampling ratio height", 0), int_in(ctx, rw_arr, "sampling ratio width", 0)
        boxes = rois.reshape(n, 4).astype(np.float64) * BOX_STEP * np.array([sw, sh, sw, sh])
        h, w = q.shape[1:3]
        bad = np.flatnonzero((boxes[:, 0] > boxes[:, 2]) | (boxes[:, 1] > boxes[:, 3])
                             | (boxes[:, 2] > w) | (boxes[:, 3] > h))
        if bad.size:
            b = boxes[bad[0]]
            raise ctx.fail(f"RoI {bad[0]} spans x {b[0]}..{b[2]}, y {b[1]}..{b[3]} in map units: it must be "
                           f"ordered and inside the {h}x{w} feature map")
        fmap = dequantize_u8(q, mn, mx)
        out = np.stack([roi_align_one(fmap[bidx[r]], boxes[r], ph, pw, sr_h, sr_w) for r in range(n)]) \
            if n else np.zeros((0, ph, pw, q.shape[3]))
        return (quantize_u8(out, out_mn, out_mx), *range_out(out_mn, out_mx))


def pool_spans(start: int, size: int, cells: int, limit: int) -> np.ndarray:
    """Membership ``[cells, limit]``: which map rows (or columns) each output cell covers."""
    i = np.arange(cells)
    lo = np.clip(np.floor(i * size / cells).astype(np.int64) + start, 0, limit)
    hi = np.clip(np.ceil((i + 1) * size / cells).astype(np.int64) + start, 0, limit)
    pos = np.arange(limit)[None, :]
    return (pos >= lo[:, None]) & (pos < hi[:, None])


def whole_count(ctx: KernelContext, arr: np.ndarray, what: str) -> int:
    """A float input that must hold a whole number >= 1 (the output height/width)."""
    v = positive_scalar(ctx, arr, what)
    if v != math.floor(v):
        raise ctx.fail(f"{what} is {v}, expected a whole number")
    return int(v)


@register("QuantizedRoiPool_8_v2")
class QuantizedRoiPool8v2(Kernel):
    """Max pooling of a quint8 feature map over quint16 RoIs; the range passes through."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        data, rois_arr, split_arr, oh_arr, ow_arr, sh_arr, sw_arr, _layout, mn_arr, mx_arr, so_arr = inputs
        mn, mx = ctx.sane_range(mn_arr, mx_arr, "input")
        q = require_4d(ctx, u8_codes(ctx, data, "input data"), "input data")
        rois = u16_codes(ctx, rois_arr, "RoIs")
        if rois.size % 4 or rois.ndim == 0:
            raise ctx.fail(f"RoIs have shape {list(rois.shape)}, expected [num_rois, 4, 1, 1]")
        n = rois.size // 4
        bidx = batch_indices(ctx, split_arr, "batch split", n, q.shape[0])
        oh, ow = whole_count(ctx, oh_arr, "output height"), whole_count(ctx, ow_arr, "output width")
        sh, sw = positive_scalar(ctx, sh_arr, "height scale"), positive_scalar(ctx, sw_arr, "width scale")
        so = float_data(ctx, so_arr, "roi scale/offset").reshape(-1)
        if so.size != 2 or so[0] <= 0:
            raise ctx.fail(f"roi scale/offset is {so.tolist()}, expected [scale > 0, offset]")
        real = (rois.reshape(n, 4).astype(np.float64) - so[1]) * so[0]
        cells = round_away(real / np.array([sw, sh, sw, sh])).astype(np.int64)
        zero_code = quantize_u8(np.zeros(1), mn, mx)[0]
        _, h, w, d = q.shape
        out = np.empty((n, oh, ow, d), dtype=np.uint8)
        for r in range(n):
            x1, y1, x2, y2 = (int(v) for v in cells[r])
            rows = pool_spans(y1, max(y2 - y1 + 1, 1), oh, h)          # [oh, H]
            cols = pool_spans(x1, max(x2 - x1 + 1, 1), ow, w)          # [ow, W]
            f = q[bidx[r]]
            by_row = np.where(rows[:, :, None, None], f[None], 0).max(axis=1)                 # [oh, W, D]
            cellmax = np.where(cols[None, :, :, None], by_row[:, None], 0).max(axis=2)          # [oh, ow, D]
            empty = ~rows.any(axis=1)[:, None] | ~cols.any(axis=1)[None, :]
            out[r] = np.where(empty[..., None], zero_code, cellmax)
        return (out, *range_out(mn, mx))
