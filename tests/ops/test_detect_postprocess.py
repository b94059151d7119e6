"""boxes.detection_postprocess (TFLite TFLite_Detection_PostProcess semantics) and the shared
IoU / NMS helpers, against hand cases and plain loop references."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops.boxes import DetectionParams, detection_postprocess, greedy_nms, iou_matrix, \
    rotated_iou_one_to_many

# Anchors (yc, xc, h, w); zero encodings decode to the anchors themselves:
# A (0,0,1,1), B (0,.1,1,1.1) (IoU with A = .9 / (1 + 1 - .9) = .818), C (.1,.1,.3,.3) (inside both A and B:
# IoU = .04 / 1 = .04 with either).
ANCHORS = np.array([[0.5, 0.5, 1, 1], [0.5, 0.6, 1, 1], [0.2, 0.2, 0.2, 0.2]])
ENC = np.zeros((3, 4))
# Columns: background, class 0, class 1.
SCORES = np.array([[0.0, 0.9, 0.1], [0.0, 0.8, 0.7], [0.0, 0.3, 0.6]])
A, B, C = [0, 0, 1, 1], [0, 0.1, 1, 1.1], [0.1, 0.1, 0.3, 0.3]


def params(**kw):
    base = {"max_detections": 3, "num_classes": 2, "nms_score_threshold": 0.5, "nms_iou_threshold": 0.5}
    base.update(kw)
    return DetectionParams(**base)


def test_fast_nms_by_hand():
    # Best class per anchor: A .9 (0), B .8 (0), C .6 (1).  A kept; B IoU .818 > .5 dropped; C IoU .04 kept.
    boxes, classes, scores, count = detection_postprocess(ENC, SCORES, ANCHORS, params())
    assert count == 2 and boxes.shape == (3, 4)
    np.testing.assert_allclose(boxes, [A, C, [0, 0, 0, 0]], atol=1e-12)
    assert classes.tolist() == [0, 1, 0] and scores.tolist() == [0.9, 0.6, 0.0]
    # Two classes per detection: rows 2i, 2i+1 of kept box i, classes by descending score.
    boxes, classes, scores, count = detection_postprocess(ENC, SCORES, ANCHORS, params(max_classes_per_detection=2))
    assert count == 2 and boxes.shape == (6, 4)
    assert classes.tolist() == [0, 1, 1, 0, 0, 0] and scores.tolist() == [0.9, 0.1, 0.6, 0.3, 0, 0]
    np.testing.assert_allclose(boxes[:4], [A, A, C, C], atol=1e-12)


def test_regular_nms_by_hand():
    # Class 0: A .9, B .8 (>= .5) -> B dropped (IoU .818).  Class 1: B .7, C .6 -> IoU .04, both kept.
    # Merged by score: A/0 .9, B/1 .7, C/1 .6.  max_detections 2 keeps the first two.
    boxes, classes, scores, count = detection_postprocess(ENC, SCORES, ANCHORS, params(use_regular_nms=True))
    assert count == 3 and classes.tolist() == [0, 1, 1] and scores.tolist() == [0.9, 0.7, 0.6]
    np.testing.assert_allclose(boxes, [A, B, C], atol=1e-12)
    _, classes, scores, count = detection_postprocess(ENC, SCORES, ANCHORS, params(use_regular_nms=True,
                                                                                   max_detections=2))
    assert count == 2 and scores.tolist() == [0.9, 0.7]


def test_decoding_by_hand():
    # Anchor (yc .5, xc .5, h 1, w 2); encoding (ty 1, tx -2, th 0, tw 5 ln2) with scales (10, 10, 5, 5):
    # yc = .1*1 + .5 = .6, xc = -.2*2 + .5 = .1, h = 1, w = exp(ln2)*2 = 4 -> (.1, -1.9, 1.1, 2.1).
    enc = np.array([[1.0, -2.0, 0.0, 5 * math.log(2)]])
    boxes, _, _, count = detection_postprocess(enc, np.array([[0.0, 0.9]]), np.array([[0.5, 0.5, 1, 2]]),
                                               params(num_classes=1))
    assert count == 1
    np.testing.assert_allclose(boxes[0], [0.1, -1.9, 1.1, 2.1], atol=1e-12)


def iou_ref(a, b):
    area = lambda r: (r[2] - r[0]) * (r[3] - r[1])
    if area(a) <= 0 or area(b) <= 0:
        return 0.0
    ih = max(min(a[2], b[2]) - max(a[0], b[0]), 0.0)
    iw = max(min(a[3], b[3]) - max(a[1], b[1]), 0.0)
    return ih * iw / (area(a) + area(b) - ih * iw)


def nms_ref(boxes, scores, thr, iou_thr, limit):
    cand = sorted([i for i in range(len(scores)) if scores[i] >= thr], key=lambda i: -scores[i])
    kept = []
    for i in cand:
        if len(kept) >= limit:
            break
        if all(iou_ref(boxes[i], boxes[k]) <= iou_thr for k in kept):
            kept.append(i)
    return kept


def postprocess_ref(enc, scores, anchors, p):
    """TFLite's algorithm in plain loops (decode, fast or regular NMS, zero padding)."""
    boxes = []
    for (ty, tx, th, tw), (ya, xa, ha, wa) in zip(enc, anchors):
        yc, xc = ty / p.y_scale * ha + ya, tx / p.x_scale * wa + xa
        h, w = math.exp(th / p.h_scale) * ha, math.exp(tw / p.w_scale) * wa
        boxes.append([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2])
    off = len(scores[0]) - p.num_classes
    cls = [row[off:] for row in scores]
    rows = []
    if p.use_regular_nms:
        cands = []
        for c in range(p.num_classes):
            for i in nms_ref(boxes, [s[c] for s in cls], p.nms_score_threshold, p.nms_iou_threshold,
                             p.detections_per_class):
                cands.append((cls[i][c], i, c))
        cands = sorted(cands, key=lambda t: -t[0])[:p.max_detections]
        rows = [(boxes[i], c, s) for s, i, c in cands]
        size, count = p.max_detections, len(rows)
        slots = list(range(count))
    else:
        per = min(p.max_classes_per_detection, p.num_classes)
        best = [max(s) for s in cls]
        kept = nms_ref(boxes, best, p.nms_score_threshold, p.nms_iou_threshold, p.max_detections)
        slots = []
        for k, i in enumerate(kept):
            order = sorted(range(p.num_classes), key=lambda c: -cls[i][c])[:per]
            for j, c in enumerate(order):
                rows.append((boxes[i], c, cls[i][c]))
                slots.append(k * p.max_classes_per_detection + j)
        size, count = p.max_detections * p.max_classes_per_detection, len(kept)
    out_b, out_c, out_s = np.zeros((size, 4)), np.zeros(size), np.zeros(size)
    for slot, (b, c, s) in zip(slots, rows):
        out_b[slot], out_c[slot], out_s[slot] = b, c, s
    return out_b, out_c, out_s, count


@pytest.mark.parametrize("regular, per_det", [(False, 1), (False, 3), (True, 1)])
def test_against_loop_reference(regular, per_det):
    rng = np.random.default_rng(60 + per_det + 5 * regular)
    n, c = 40, 4
    anchors = np.concatenate([rng.uniform(0, 1, (n, 2)), rng.uniform(0.1, 0.4, (n, 2))], axis=1)
    enc = rng.normal(0, 1, (n, 4))
    scores = rng.uniform(0, 1, (n, c + 1))
    p = params(max_detections=6, num_classes=c, nms_score_threshold=0.35, nms_iou_threshold=0.3,
               max_classes_per_detection=per_det, detections_per_class=4, use_regular_nms=regular)
    got = detection_postprocess(enc.reshape(1, n, 4), scores.reshape(1, n, -1), anchors, p)
    want = postprocess_ref(enc.tolist(), scores.tolist(), anchors.tolist(), p)
    assert got[3] == want[3] and 0 < got[3]
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_helpers_by_hand():
    # iou_matrix: (0,0,2,2) vs (1,1,3,3): inter 1, union 7; vs itself 1; disjoint 0; +1 convention: (0,0,2,2) vs
    # (2,2,3,3) touch at a corner -> 1 px of 9 + 4 - 1 = 12.
    np.testing.assert_allclose(iou_matrix([[0, 0, 2, 2]], [[1, 1, 3, 3], [0, 0, 2, 2], [5, 5, 6, 6]]), [[1 / 7, 1, 0]])
    np.testing.assert_allclose(iou_matrix([[0, 0, 2, 2]], [[2, 2, 3, 3]], plus_one=True), [[1 / 12]])
    # Rotated: a 2x2 square and itself turned 45 degrees share an octagon of area 8(sqrt2 - 1); turned 90 it is equal.
    oct_area = 8 * (math.sqrt(2) - 1)
    got = rotated_iou_one_to_many([0, 0, 2, 2, 0], np.array([[0, 0, 2, 2, 45], [0, 0, 2, 2, 90], [1, 0, 2, 2, 0]]))
    np.testing.assert_allclose(got, [oct_area / (8 - oct_area), 1.0, 2 / 6], rtol=1e-9)
    # greedy_nms: inclusive (>=) vs strict (>) at IoU exactly 1/3; max_keep stops early.
    boxes = np.array([[0, 0, 2, 2], [1, 0, 3, 2]], float)     # IoU = 2 / 6 = 1/3
    assert greedy_nms(boxes, [0, 1], 1 / 3).tolist() == [0, 1]
    assert greedy_nms(boxes, [0, 1], 1 / 3, inclusive=True).tolist() == [0]
    assert greedy_nms(boxes, [1, 0], 0.9, max_keep=1).tolist() == [1]
