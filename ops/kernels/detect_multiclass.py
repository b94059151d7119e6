"""MultiClassNms_8: MobileNet-SSD multi-class NMS on quint8 scores (hexagon_nn_ops.txt).

Per image (boxes ``[B, 1, N, 4]`` float ``{y1, x1, y2, x2}``, scores
``[B, 1, N, C]`` quint8), as hexagon_nn runs it: boxes are clipped to
``[0, 1]`` and a box of zero area is ignored; every (box, class) pair whose
dequantized score is ``>= score threshold`` becomes a record; the records are
sorted by descending score (equal scores: box order, then class order - the
text's "Sort the boxes descendingly by the scores"); walking them, a record
is kept unless its class already holds ``max per class`` boxes or its box's
IoU with a kept box of the same class is ``> iou threshold``; the walk stops
at ``max total`` kept records. Every class counts (there is no background
class here).

Outputs: boxes ``[B, 1, T, 4]`` (the clipped boxes), scores ``[B, 1, 1, T]``
(the input codes; the range passes through), classes ``[B, 1, 1, T]`` (float),
``T = max total``; unused slots are zero (box 0, score code 0, class 0), as
hexagon_nn writes them.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.boxes import box_areas, descending, iou_matrix
from hexnn_import.ops.detect_io import finite_scalar, int_in
from hexnn_import.ops.kernel_io import float_data, range_out, u8_codes
from hexnn_import.ops.quant import dequantize_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register


def multiclass_nms(boxes: np.ndarray, scores: np.ndarray, score_thr: float, iou_thr: float, per_class: int,
                   total: int) -> list[tuple[int, int]]:
    """Kept ``(box, class)`` pairs of one image, in kept order (module docstring)."""
    ok_box = box_areas(boxes) > 0
    rec_box, rec_cls = np.nonzero((scores >= score_thr) & ok_box[:, None])     # box-major, class order
    order = descending(scores[rec_box, rec_cls])
    kept: list[tuple[int, int]] = []
    by_class: dict[int, list[int]] = {}
    for r in order:
        if len(kept) >= total:
            break
        box, cls = int(rec_box[r]), int(rec_cls[r])
        mine = by_class.setdefault(cls, [])
        if len(mine) >= per_class:
            continue
        if mine and (iou_matrix(boxes[box], boxes[mine])[0] > iou_thr).any():
            continue
        mine.append(box)
        kept.append((box, cls))
    return kept


@register("MultiClassNms_8")
class MultiClassNms8(Kernel):
    """Class-aware NMS over all (box, class) records; fixed-size zero-padded outputs."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        b_arr, s_arr, smn_arr, smx_arr, st_arr, it_arr, pc_arr, tot_arr = inputs
        mn, mx = ctx.sane_range(smn_arr, smx_arr, "scores")
        boxes = float_data(ctx, b_arr, "boxes")
        codes = u8_codes(ctx, s_arr, "scores")
        if codes.ndim != 4 or codes.shape[1] != 1 or codes.shape[3] < 1:
            raise ctx.fail(f"scores have shape {list(codes.shape)}, expected [batches, 1, boxes, classes]")
        bsz, _, n, c = codes.shape
        if boxes.shape != (bsz, 1, n, 4):
            raise ctx.fail(f"boxes have shape {list(boxes.shape)}, expected [{bsz}, 1, {n}, 4]")
        score_thr = finite_scalar(ctx, st_arr, "score threshold")
        iou_thr = finite_scalar(ctx, it_arr, "iou threshold")
        per_class = int_in(ctx, pc_arr, "max detections per class", 0)
        total = int_in(ctx, tot_arr, "max total detections", 1)
        clipped = np.clip(boxes.reshape(bsz, n, 4), 0.0, 1.0)
        real = dequantize_u8(codes.reshape(bsz, n, c), mn, mx)
        out_b = np.zeros((bsz, 1, total, 4), dtype=np.float32)
        out_s = np.zeros((bsz, 1, 1, total), dtype=np.uint8)
        out_c = np.zeros((bsz, 1, 1, total), dtype=np.float32)
        for i in range(bsz):
            kept = multiclass_nms(clipped[i], real[i], score_thr, iou_thr, per_class, total)
            if kept:
                kb, kc = np.array(kept).T
                out_b[i, 0, :kb.size] = clipped[i, kb]
                out_s[i, 0, 0, :kb.size] = codes[i, 0, kb, kc]
                out_c[i, 0, 0, :kb.size] = kc
        return (out_b, out_s, *range_out(mn, mx), out_c)
