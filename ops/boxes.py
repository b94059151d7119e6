"""Box geometry shared by the detection ops: IoU, greedy NMS, center-size decoding,
and TFLite's Detection_PostProcess as a pure function.

Boxes are rows of 4 corner coordinates ``(lo0, lo1, hi0, hi1)`` - either
``(x1, y1, x2, y2)`` (hexagon_nn's BoxWithNmsLimit, Proposal) or
``(ymin, xmin, ymax, xmax)`` (TFLite, MultiClassNms_8): IoU does not care
which axis comes first as long as both boxes use the same order. Everything
is float64 numpy; the one Python loop is the greedy selection of NMS, which
is sequential by nature and runs once per *kept candidate* (the IoU of a
candidate against all kept boxes is one vector operation).

Conventions (written down because the op documents are silent):

- ``plus_one``: the legacy pixel convention of Caffe2/Detectron (a box from
  x1 to x2 covers ``x2 - x1 + 1`` pixels), used by hexagon_nn's
  BoxWithNmsLimit_f; all other ops use plain extents.
- Two boxes that do not overlap (``min(hi) < max(lo)`` on an axis) have
  intersection 0; a box of zero (or negative) area has IoU 0 with anything,
  as TFLite's ``ComputeIntersectionOverUnion`` does.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import numpy as np


def box_areas(boxes: np.ndarray, plus_one: bool = False) -> np.ndarray:
    """Areas of corner boxes ``[..., 4]``; inverted extents count as 0."""
    p = 1.0 if plus_one else 0.0
    b = np.asarray(boxes, dtype=np.float64)
    return np.maximum(b[..., 2] - b[..., 0] + p, 0.0) * np.maximum(b[..., 3] - b[..., 1] + p, 0.0)


def iou_matrix(a: np.ndarray, b: np.ndarray, plus_one: bool = False) -> np.ndarray:
    """IoU of every box in ``a`` ``[n, 4]`` with every box in ``b`` ``[m, 4]`` -> ``[n, m]``."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)[:, None, :]
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)[None, :, :]
    p = 1.0 if plus_one else 0.0
    extent = []
    for ax in (0, 1):
        lo = np.maximum(a[..., ax], b[..., ax])
        hi = np.minimum(a[..., ax + 2], b[..., ax + 2])
        # Disjoint boxes intersect in nothing, even with the +1 convention.
        extent.append(np.where(hi >= lo, hi - lo + p, 0.0))
    inter = extent[0] * extent[1]
    area_a, area_b = box_areas(a, plus_one), box_areas(b, plus_one)
    union = area_a + area_b - inter
    ok = (area_a > 0) & (area_b > 0) & (union > 0)
    return np.where(ok, inter / np.where(ok, union, 1.0), 0.0)


def rotated_corners(boxes: np.ndarray) -> np.ndarray:
    """Corners ``[n, 4, 2]`` (counter-clockwise) of ``[ctr_x, ctr_y, w, h, angle_deg]`` boxes."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 5)
    th = np.deg2rad(b[:, 4])
    c, s = np.cos(th), np.sin(th)
    hw, hh = b[:, 2] / 2, b[:, 3] / 2
    local = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64)
    dx = local[None, :, 0] * hw[:, None]
    dy = local[None, :, 1] * hh[:, None]
    x = b[:, 0, None] + c[:, None] * dx - s[:, None] * dy
    y = b[:, 1, None] + s[:, None] * dx + c[:, None] * dy
    return np.stack([x, y], axis=-1)


def _inside(points: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """``points [m, k, 2]`` inside (or on) the convex CCW quads ``poly [m, 4, 2]`` -> ``[m, k]``."""
    edge = np.roll(poly, -1, axis=1) - poly                         # [m, 4, 2]
    rel = points[:, None, :, :] - poly[:, :, None, :]               # [m, 4, k, 2]
    cross = edge[:, :, None, 0] * rel[..., 1] - edge[:, :, None, 1] * rel[..., 0]
    return np.all(cross >= -1e-9, axis=1)


def rotated_iou_one_to_many(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """IoU of one rotated box with each of ``boxes`` ``[m, 5]`` (exact convex intersection).

    The intersection of two convex quads is the convex polygon spanned by the
    corners of each inside the other and the crossings of their edges; those
    points are sorted by angle around their centroid and measured with the
    shoelace formula, all pairs at once.
    """
    others = rotated_corners(boxes)                                  # [m, 4, 2]
    m = others.shape[0]
    one = np.broadcast_to(rotated_corners(box), (m, 4, 2))
    a0, a1 = one, np.roll(one, -1, axis=1)
    b0, b1 = others, np.roll(others, -1, axis=1)
    da = (a1 - a0)[:, :, None, :]                                    # [m, 4, 1, 2]
    db = (b1 - b0)[:, None, :, :]                                    # [m, 1, 4, 2]
    w = b0[:, None, :, :] - a0[:, :, None, :]                        # [m, 4, 4, 2]
    den = da[..., 0] * db[..., 1] - da[..., 1] * db[..., 0]
    safe = np.where(np.abs(den) > 1e-12, den, 1.0)
    t = (w[..., 0] * db[..., 1] - w[..., 1] * db[..., 0]) / safe
    u = (w[..., 0] * da[..., 1] - w[..., 1] * da[..., 0]) / safe
    cross_ok = (np.abs(den) > 1e-12) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
    cross_pts = (a0[:, :, None, :] + t[..., None] * da).reshape(m, 16, 2)
    pts = np.concatenate([one, others, cross_pts], axis=1)           # [m, 24, 2]
    valid = np.concatenate([_inside(one, others), _inside(others, one), cross_ok.reshape(m, 16)], axis=1)
    count = valid.sum(axis=1)
    centre = (pts * valid[..., None]).sum(axis=1) / np.maximum(count, 1)[:, None]
    ang = np.arctan2(pts[..., 1] - centre[:, None, 1], pts[..., 0] - centre[:, None, 0])
    order = np.argsort(np.where(valid, ang, np.inf), axis=1, kind="stable")
    ordered = np.take_along_axis(pts, order[..., None], axis=1)
    # Invalid points (sorted last) repeat the first point: zero-area shoelace terms.
    slot_valid = np.arange(24)[None, :] < count[:, None]
    ordered = np.where(slot_valid[..., None], ordered, ordered[:, :1, :])
    nxt = np.roll(ordered, -1, axis=1)
    inter = 0.5 * np.abs((ordered[..., 0] * nxt[..., 1] - nxt[..., 0] * ordered[..., 1]).sum(axis=1))
    inter = np.where(count >= 3, inter, 0.0)
    one_wh = np.asarray(box, dtype=np.float64).reshape(5)[2:4]
    one_area = float(one_wh[0] * one_wh[1])
    areas = np.asarray(boxes, dtype=np.float64).reshape(-1, 5)[:, 2:4].prod(axis=1)
    union = one_area + areas - inter
    ok = (one_area > 0) & (areas > 0) & (union > 0)
    return np.where(ok, inter / np.where(ok, union, 1.0), 0.0)


def greedy_nms(boxes: np.ndarray, order: np.ndarray, threshold: float, max_keep: int | None = None,
               inclusive: bool = False, plus_one: bool = False, eta: float = 1.0,
               rotated: bool = False) -> np.ndarray:
    """Hard NMS: walk ``order`` (indices into ``boxes``, best first) and keep a candidate
    unless its IoU with a kept box exceeds the threshold (``>=`` when ``inclusive``).

    Stops after ``max_keep`` boxes. ``eta < 1`` is Caffe's adaptive NMS: after
    each kept box, a threshold above 0.5 is multiplied by ``eta`` (the check
    against kept boxes uses the threshold current when the candidate is
    reached, as Caffe's ``ApplyNMSFast``). Returns kept indices in order.
    """
    order = np.asarray(order, dtype=np.int64).reshape(-1)
    b = np.asarray(boxes, dtype=np.float64)
    kept: list[int] = []
    thr = float(threshold)
    for idx in order:
        if max_keep is not None and len(kept) >= max_keep:
            break
        if kept:
            if rotated:
                ov = rotated_iou_one_to_many(b[idx], b[kept])
            else:
                ov = iou_matrix(b[idx], b[kept], plus_one)[0]
            if (ov >= thr).any() if inclusive else (ov > thr).any():
                continue
        kept.append(int(idx))
        if eta < 1.0 and thr > 0.5:
            thr *= eta
    return np.asarray(kept, dtype=np.int64)


def soft_nms(iou_with: Callable[[int, np.ndarray], np.ndarray], scores: np.ndarray, method: int,
             threshold: float, sigma: float, min_score: float, max_keep: int | None = None,
             inclusive: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Soft NMS as hexagon_nn's BoxWithNmsLimit runs it (Bodla et al.).

    Repeatedly select the first candidate with the largest score above 0;
    every still-pending candidate's score is multiplied by a weight of its IoU
    ``o`` with the selected box - method 1 (linear): ``1 - o`` when ``o``
    exceeds the threshold (``>=`` when ``inclusive``) else 1; 2 (Gaussian):
    ``exp(-o*o / sigma)``; any other (hard NMS): 0 when it exceeds else 1 -
    and a candidate whose score falls below ``min_score`` is dropped.
    ``iou_with(i, js)`` gives the IoU of candidate ``i`` with candidates ``js``.
    Returns the selected candidates in selection order and the final scores.
    """
    sc = np.array(scores, dtype=np.float64)
    pending = np.ones(sc.size, dtype=bool)
    chosen: list[int] = []
    while pending.any() and (max_keep is None or len(chosen) < max_keep):
        masked = np.where(pending, sc, 0.0)
        best = int(np.argmax(masked))
        if masked[best] <= 0.0:
            break
        chosen.append(best)
        pending[best] = False
        rest = np.flatnonzero(pending)
        if rest.size == 0:
            break
        o = iou_with(best, rest)
        over = o >= threshold if inclusive else o > threshold
        if method == 1:
            weight = np.where(over, 1.0 - o, 1.0)
        elif method == 2:
            weight = np.exp(-o * o / sigma)
        else:
            weight = np.where(over, 0.0, 1.0)
        sc[rest] *= weight
        pending[rest[sc[rest] < min_score]] = False
    return np.asarray(chosen, dtype=np.int64), sc


def descending(scores: np.ndarray) -> np.ndarray:
    """Indices sorting ``scores`` from largest to smallest; equal scores keep index order."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def decode_center_size(rel: np.ndarray, anchors: np.ndarray, scales: tuple[float, float, float, float]
                       ) -> np.ndarray:
    """TF/TFLite center-size box decoding (``faster_rcnn_box_coder``).

    ``rel [..., 4]`` holds ``(ty, tx, th, tw)``, ``anchors [..., 4]`` hold
    ``(ycenter, xcenter, h, w)``, ``scales`` = ``(y, x, h, w)`` scales; the
    result is ``(ymin, xmin, ymax, xmax)`` with ``yc = ty / y_scale * ha + yca``
    and ``h = exp(th / h_scale) * ha`` (likewise for x, w).
    """
    r = np.asarray(rel, dtype=np.float64)
    a = np.asarray(anchors, dtype=np.float64)
    ys, xs, hs, ws = scales
    yc = r[..., 0] / ys * a[..., 2] + a[..., 0]
    xc = r[..., 1] / xs * a[..., 3] + a[..., 1]
    h = np.exp(r[..., 2] / hs) * a[..., 2]
    w = np.exp(r[..., 3] / ws) * a[..., 3]
    return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=-1)


@dataclass(frozen=True)
class DetectionParams:
    """Options of TFLite's custom op ``TFLite_Detection_PostProcess`` (its flexbuffer keys)."""

    max_detections: int
    num_classes: int
    nms_score_threshold: float
    nms_iou_threshold: float
    max_classes_per_detection: int = 1
    detections_per_class: int = 100
    y_scale: float = 10.0
    x_scale: float = 10.0
    h_scale: float = 5.0
    w_scale: float = 5.0
    use_regular_nms: bool = False


def detection_postprocess(boxes: np.ndarray, scores: np.ndarray, anchors: np.ndarray, params: DetectionParams
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """TFLite ``TFLite_Detection_PostProcess`` on one image, in float64.

    ``boxes [N, 4]`` box encodings ``(ty, tx, th, tw)``, ``scores [N, C + bg]``
    (a leading background column is skipped when there are more columns than
    ``num_classes``), ``anchors [N, 4]`` ``(ycenter, xcenter, h, w)``; a leading
    batch axis of 1 is accepted. Returns ``(boxes [D, 4] (ymin, xmin, ymax, xmax),
    classes [D], scores [D], count)`` with ``D = max_detections *
    max_classes_per_detection`` (fast NMS) or ``max_detections`` (regular NMS);
    rows past ``count`` are zeros.

    Fast NMS: each anchor's best class score enters one class-agnostic NMS
    (at most ``max_detections`` boxes); each kept box then reports its top
    ``max_classes_per_detection`` classes. Regular NMS: NMS per class (at most
    ``detections_per_class`` each), then the best ``max_detections`` overall.
    Scores pass when ``>= nms_score_threshold``; a box is suppressed when its
    IoU with a kept box is ``> nms_iou_threshold``; equal scores keep the lower
    anchor (then the lower class) first, as TFLite's stable sorts do.
    """
    p = params
    enc = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    anc = np.asarray(anchors, dtype=np.float64).reshape(-1, 4)
    sc = np.asarray(scores, dtype=np.float64)
    sc = sc.reshape(-1, sc.shape[-1])
    n = enc.shape[0]
    if anc.shape[0] != n or sc.shape[0] != n:
        raise ValueError(f"{n} box encodings, {anc.shape[0]} anchors and {sc.shape[0]} score rows must agree")
    offset = sc.shape[1] - p.num_classes
    if offset < 0 or p.num_classes < 1:
        raise ValueError(f"scores have {sc.shape[1]} columns, fewer than num_classes {p.num_classes}")
    if p.max_detections < 1 or p.max_classes_per_detection < 1 or p.detections_per_class < 1:
        raise ValueError("max_detections, max_classes_per_detection and detections_per_class must be >= 1")
    cls_scores = sc[:, offset:]
    decoded = decode_center_size(enc, anc, (p.y_scale, p.x_scale, p.h_scale, p.w_scale))
    if p.use_regular_nms:
        out_n = p.max_detections
        cand_anchor, cand_class, cand_score = [], [], []
        for c in range(p.num_classes):
            above = np.flatnonzero(cls_scores[:, c] >= p.nms_score_threshold)
            order = above[descending(cls_scores[above, c])]
            kept = greedy_nms(decoded, order, p.nms_iou_threshold, p.detections_per_class)
            cand_anchor.extend(kept.tolist())
            cand_class.extend([c] * kept.size)
            cand_score.extend(cls_scores[kept, c].tolist())
        top = descending(np.asarray(cand_score))[:out_n]
        rows_anchor = np.asarray(cand_anchor, dtype=np.int64)[top]
        rows_class = np.asarray(cand_class, dtype=np.int64)[top]
        rows_score = np.asarray(cand_score, dtype=np.float64)[top]
        count = int(top.size)
    else:
        per = min(p.max_classes_per_detection, p.num_classes)
        out_n = p.max_detections * p.max_classes_per_detection
        class_order = np.argsort(-cls_scores, axis=1, kind="stable")[:, :per]     # [N, per]
        best = np.take_along_axis(cls_scores, class_order[:, :1], axis=1)[:, 0]
        above = np.flatnonzero(best >= p.nms_score_threshold)
        kept = greedy_nms(decoded, above[descending(best[above])], p.nms_iou_threshold, p.max_detections)
        rows_anchor = np.repeat(kept, per)
        rows_class = class_order[kept].reshape(-1)
        rows_score = cls_scores[rows_anchor, rows_class]
        count = int(kept.size)
        # Kept box i fills rows i*max_classes_per_detection + col (col < per), as TFLite does.
        slots = (np.arange(kept.size)[:, None] * p.max_classes_per_detection + np.arange(per)[None, :]).reshape(-1)
    if p.use_regular_nms:
        slots = np.arange(rows_anchor.size)
    out_boxes = np.zeros((out_n, 4))
    out_classes = np.zeros(out_n)
    out_scores = np.zeros(out_n)
    out_boxes[slots] = decoded[rows_anchor]
    out_classes[slots] = rows_class
    out_scores[slots] = rows_score
    return out_boxes, out_classes, out_scores, count
