"""BoxWithNmsLimit_f and BoxWithNmsLimit_q8q16: per-class (soft) NMS with a detection limit
(hexagon_nn_ops.txt; Caffe2 / Android NN BOX_WITH_NMS_LIMIT as hexagon_nn implements them).

Common rules: class 0 is the background and is skipped (hence the text's
``max_length = (classes - 1) * boxes``); scores ``[1, 1, N, C]`` (width =
boxes, depth = classes); boxes ``[1, 1, N, C * 4]`` - class ``c`` of box ``n`` at
depth ``4c..4c+3`` (``[x1, y1, x2, y2]``); a candidate needs a score above the
score threshold. Hard NMS walks a class's candidates by descending score
(equal scores: lower box first); soft NMS is :func:`~hexnn_import.ops.boxes.soft_nms`.
When an image keeps more than ``detections`` boxes, the highest scores win
(equal scores: lower class, then earlier in the class). Kept boxes are
listed by class, each class in descending score.

BoxWithNmsLimit_f: batch splits are per-image box *counts* (float, summing
to N). IoU uses the Caffe2 ``+1`` pixel convention for upright boxes (as
hexagon_nn); rotated boxes (input 10 = 1, ``[ctr_x, ctr_y, w, h, angle_deg]``
per class, 5 per class) use the exact polygon intersection and ``w * h``
areas. Hard NMS suppresses IoU ``> nms threshold`` and keeps at most
``detections`` per class (when > 0; -1: no limit); soft NMS (input 6 != 0)
uses method / sigma / min score of inputs 7-9 and reports the decayed
scores. Outputs padded to ``max_length`` with zeros (the text): scores
``[1,1,1,L]``, boxes ``[1,1,L,4|5]``, classes ``[1,1,1,L]`` (float), batch splits
``[1,1,1,B]`` (kept counts, float), and with 6 outputs keeps ``[1,1,1,L]`` (box
index within its image) and keeps size ``[1,1,B,C]`` (kept per class; class 0
is 0).

BoxWithNmsLimit_q8q16: scores quint8, boxes quint16 (IoU on the codes, no
``+1``: one code is the same size on both axes), "Batch" = the batch index of
each box (boxes of an image are consecutive). Input 5 selects the NMS kind
(0 hard, 1 linear, 2 Gaussian soft NMS) in the soft-NMS loop with the
device's ``>=`` overlap test, input 8 is the soft-NMS minimum score, and
at most ``detections`` (>= 1) boxes per class and per image are kept. As
hexagon_nn, the outputs are sized to what is kept (``K`` over all images):
scores ``[1,1,1,K]`` (requantized onto the input score range:
``round_away(score / step) + zero``, so an undecayed score keeps its code), boxes
``[1,1,K,4]``, classes ``[1,1,1,K]``, batch index of each kept box
``[1,1,1,K]``; the ranges pass through.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.boxes import descending, greedy_nms, iou_matrix, rotated_iou_one_to_many, soft_nms
from hexnn_import.ops.detect_io import batch_indices, finite_scalar, int_in, u16_codes
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import float_data, range_out, u8_codes
from hexnn_import.ops.quant import dequantize_u8, round_away, sat_u8, step_zero
from hexnn_import.ops.registry import Kernel, KernelContext, register

Kept = list[tuple[int, int, float]]   # (class, box index, score)


def score_box_layout(ctx: KernelContext, scores: np.ndarray, boxes: np.ndarray, dim: int) -> tuple[int, int]:
    """``(N, C)`` after checking scores ``[1,1,N,C]`` and boxes ``[1,1,N,C*dim]``."""
    if scores.ndim != 4 or scores.shape[:2] != (1, 1) or scores.shape[3] < 1:
        raise ctx.fail(f"scores have shape {list(scores.shape)}, expected [1, 1, boxes, classes]")
    n, c = scores.shape[2], scores.shape[3]
    if boxes.shape != (1, 1, n, c * dim):
        raise ctx.fail(f"boxes have shape {list(boxes.shape)}, expected [1, 1, {n}, {c * dim}] "
                       f"({dim} coordinates per class)")
    return n, c


def cap_and_group(kept: Kept, limit: int | None) -> Kept:
    """Keep the ``limit`` best scores (stable), then list by class with scores descending."""
    if limit is not None and len(kept) > limit:
        top = descending(np.array([k[2] for k in kept]))[:limit]
        kept = [kept[i] for i in top]
    order = sorted(range(len(kept)), key=lambda i: (kept[i][0], -kept[i][2]))
    return [kept[i] for i in order]


def nms_image_f(scores: np.ndarray, boxes: np.ndarray, p: dict) -> Kept:
    """BoxWithNmsLimit_f on one image: scores ``[n, C]``, boxes ``[n, C, dim]``."""
    kept: Kept = []
    for c in range(1, scores.shape[1]):
        cand = np.flatnonzero(scores[:, c] > p["score_thr"])
        bx = boxes[cand, c]
        if p["soft"]:
            def iou_with(i: int, js: np.ndarray, bx: np.ndarray = bx) -> np.ndarray:
                return rotated_iou_one_to_many(bx[i], bx[js]) if p["rotated"] else iou_matrix(bx[i], bx[js], True)[0]
            sel, new = soft_nms(iou_with, scores[cand, c], p["method"], p["nms_thr"], p["sigma"], p["min_score"])
            kept += [(c, int(cand[i]), float(new[i])) for i in sel]
        else:
            order = descending(scores[cand, c])
            limit = p["det"] if p["det"] > 0 else None
            sel = greedy_nms(bx, order, p["nms_thr"], limit, plus_one=True, rotated=p["rotated"])
            kept += [(c, int(cand[i]), float(scores[cand[i], c])) for i in sel]
    return cap_and_group(kept, p["det"] if p["det"] > 0 else None)


@register("BoxWithNmsLimit_f")
class BoxWithNmsLimitF(Kernel):
    """Float per-class NMS with per-image counts; outputs padded to (classes - 1) * boxes."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (s_arr, b_arr, split_arr, st_arr, nt_arr, det_arr, soft_arr, meth_arr, sig_arr, ms_arr, rot_arr) = inputs
        if ctx.n_outputs not in (None, 4, 6):
            raise ctx.fail(f"the node declares {ctx.n_outputs} outputs; the op gives 4 or 6")
        rotated = int_in(ctx, rot_arr, "rotated", 0, 1) == 1
        dim = 5 if rotated else 4
        scores = float_data(ctx, s_arr, "scores")
        boxes = float_data(ctx, b_arr, "boxes")
        n, c = score_box_layout(ctx, scores, boxes, dim)
        splits = float_data(ctx, split_arr, "batch splits").reshape(-1)
        if np.any(splits < 0) or np.any(splits != np.trunc(splits)) or splits.sum() != n:
            raise ctx.fail(f"batch splits {splits.tolist()} must be whole counts summing to the {n} boxes")
        p = {"score_thr": finite_scalar(ctx, st_arr, "score threshold"),
             "nms_thr": finite_scalar(ctx, nt_arr, "nms threshold"),
             "det": int_in(ctx, det_arr, "detections per image", -1),
             "soft": int_param(ctx, soft_arr, "soft nms enabled") != 0,
             "method": int_param(ctx, meth_arr, "soft nms method"),
             "sigma": finite_scalar(ctx, sig_arr, "soft nms sigma"),
             "min_score": finite_scalar(ctx, ms_arr, "soft nms min score threshold"), "rotated": rotated}
        if p["soft"] and p["method"] == 2 and p["sigma"] <= 0:
            raise ctx.fail(f"soft nms sigma is {p['sigma']}; Gaussian soft NMS needs sigma > 0")
        sc2, bx3 = scores.reshape(n, c), boxes.reshape(n, c, dim)
        length = (c - 1) * n
        out_s, out_c, out_k = np.zeros(length), np.zeros(length), np.zeros(length, dtype=np.int32)
        out_b = np.zeros((length, dim))
        per_batch = np.zeros(splits.size)
        sizes = np.zeros((splits.size, c), dtype=np.int32)
        pos, start = 0, 0
        for b, count in enumerate(splits.astype(np.int64)):
            kept = nms_image_f(sc2[start:start + count], bx3[start:start + count], p)
            for cls, idx, score in kept:
                out_s[pos], out_c[pos], out_k[pos] = score, cls, idx
                out_b[pos] = bx3[start + idx, cls]
                sizes[b, cls] += 1
                pos += 1
            per_batch[b] = len(kept)
            start += count
        f32 = np.float32
        outs = (out_s.astype(f32).reshape(1, 1, 1, -1), out_b.astype(f32).reshape(1, 1, length, dim),
                out_c.astype(f32).reshape(1, 1, 1, -1), per_batch.astype(f32).reshape(1, 1, 1, -1))
        if ctx.n_outputs == 4:
            return outs
        return outs + (out_k.reshape(1, 1, 1, -1), sizes.reshape(1, 1, splits.size, c))


@register("BoxWithNmsLimit_q8q16")
class BoxWithNmsLimitQ8Q16(Kernel):
    """quint8 scores / quint16 boxes per-class soft or hard NMS; outputs sized to the kept boxes."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (s_arr, b_arr, bidx_arr, st_arr, det_arr, kind_arr, nt_arr, sig_arr, ms_arr,
         smn_arr, smx_arr, bmn_arr, bmx_arr) = inputs
        smn, smx = ctx.sane_range(smn_arr, smx_arr, "scores")
        bmn, bmx = ctx.sane_range(bmn_arr, bmx_arr, "boxes")
        codes = u8_codes(ctx, s_arr, "scores")
        boxes = u16_codes(ctx, b_arr, "boxes")
        n, c = score_box_layout(ctx, codes, boxes, 4)
        bidx = batch_indices(ctx, bidx_arr, "batch", n, 2 ** 31 - 1)
        score_thr = finite_scalar(ctx, st_arr, "score threshold")
        det = int_in(ctx, det_arr, "detections", 1)
        kind = int_in(ctx, kind_arr, "soft nms", 0, 2)
        nms_thr = finite_scalar(ctx, nt_arr, "nms threshold")
        sigma = finite_scalar(ctx, sig_arr, "sigma")
        min_score = finite_scalar(ctx, ms_arr, "soft nms score threshold")
        if kind == 2 and sigma <= 0:
            raise ctx.fail(f"sigma is {sigma}; Gaussian soft NMS needs sigma > 0")
        real = dequantize_u8(codes.reshape(n, c), smn, smx)
        bx = boxes.reshape(n, c, 4).astype(np.float64)
        rows: list[tuple[int, int, int, float]] = []    # (batch, class, box, score)
        cuts = np.flatnonzero(np.diff(bidx)) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, n]):
            kept: Kept = []
            for cls in range(1, c):
                cand = lo + np.flatnonzero(real[lo:hi, cls] > score_thr)
                cb = bx[cand, cls]
                sel, new = soft_nms(lambda i, js, cb=cb: iou_matrix(cb[i], cb[js])[0], real[cand, cls], kind,
                                    nms_thr, sigma, min_score, det, inclusive=True)
                kept += [(cls, int(cand[i]), float(new[i])) for i in sel]
            rows += [(int(bidx[lo]), cls, idx, s) for cls, idx, s in cap_and_group(kept, det)]
        k = len(rows)
        sel_b = np.array([r[0] for r in rows], dtype=np.int32)
        sel_c = np.array([r[1] for r in rows], dtype=np.int32)
        sel_i = np.array([r[2] for r in rows], dtype=np.int64)
        # The inverse of the dequantization (q - zero) * step, so an undecayed score keeps its code.
        step, zero = step_zero(smn, smx)
        out_q = sat_u8(round_away(np.array([r[3] for r in rows], dtype=np.float64) / step) + zero)
        out_boxes = boxes.reshape(n, c, 4)[sel_i, sel_c] if k else np.zeros((0, 4), np.uint16)
        return (out_q.reshape(1, 1, 1, k), out_boxes.reshape(1, 1, k, 4), sel_c.reshape(1, 1, 1, k),
                sel_b.reshape(1, 1, 1, k), *range_out(smn, smx), *range_out(bmn, bmx))
