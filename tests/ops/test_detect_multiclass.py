"""MultiClassNms_8 against hand cases and a plain loop reference (op text; rules in
ops/kernels/detect_multiclass.py)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4


def run(boxes, scores, thr=0.1, iou=0.5, per_class=10, total=4, rng=(0.0, 1.0)):
    b = np.asarray(boxes, np.float32)
    s = np.asarray(scores, np.uint8)
    return run_op("MultiClassNms_8", [b.reshape(s.shape[0], 1, -1, 4), s.reshape(s.shape[0], 1, s.shape[1], -1),
                                      *rng, thr, iou, per_class, total])


# Boxes (y1, x1, y2, x2): A (0, 0, .5, .5), B (0, .1, .5, .6) (IoU .4*.5 / (.25+.25-.2) = 2/3), C (.6, .6, 1.2, 1)
# (clipped to (.6, .6, 1, 1)).  Scores over [0, 1] for classes 0, 1: A (200, 20), B (180, 190), C (10, 150).
BOXES = [[[0, 0, .5, .5], [0, .1, .5, .6], [.6, .6, 1.2, 1]]]
SCORES = [[[200, 20], [180, 190], [10, 150]]]


def test_by_hand():
    # Records >= 0.1 (code 26 = 0.102): A/0 200, B/0 180, B/1 190, C/1 150 (A/1 20 and C/0 10 are below).
    # By score: A/0 keep; B/1 keep (class 1 empty); B/0 IoU(A) 2/3 > .5 drop; C/1 IoU(B) 0 keep.  Total 3 of 4 slots.
    bx, sc, mn, mx, cl = run(BOXES, SCORES)
    assert bx.shape == (1, 1, 4, 4) and sc.shape == (1, 1, 1, 4) and cl.shape == (1, 1, 1, 4)
    np.testing.assert_allclose(bx.reshape(4, 4), [[0, 0, .5, .5], [0, .1, .5, .6], [.6, .6, 1, 1], [0, 0, 0, 0]],
                               rtol=1e-6)
    assert sc.ravel().tolist() == [200, 190, 150, 0] and cl.ravel().tolist() == [0.0, 1.0, 1.0, 0.0]
    assert (mn.item(), mx.item()) == (0.0, 1.0)
    # IoU threshold 0.7: B/0 survives too (4 records); max total 2 stops after A/0, B/1; max per class 1
    # drops C/1 (class 1 already has B).
    _, sc, _, _, cl = run(BOXES, SCORES, iou=0.7)
    assert sc.ravel().tolist() == [200, 190, 180, 150] and cl.ravel().tolist() == [0, 1, 0, 1]
    _, sc, _, _, _ = run(BOXES, SCORES, total=2)
    assert sc.ravel().tolist() == [200, 190]
    _, sc, _, _, cl = run(BOXES, SCORES, per_class=1)
    assert sc.ravel().tolist() == [200, 190, 0, 0] and cl.ravel().tolist() == [0, 1, 0, 0]


def test_zero_area_box_is_ignored():
    # A box clipped to zero area (entirely below 0) never becomes a record.
    bx, sc, _, _, _ = run([[[-1, -1, -0.5, -0.5], [0, 0, 1, 1]]], [[[250], [100]]], total=2)
    assert sc.ravel().tolist() == [100, 0] and bx[0, 0, 0].tolist() == [0, 0, 1, 1]


def reference(boxes, real, thr, iou_thr, per_class, total):
    boxes = [[min(max(v, 0.0), 1.0) for v in b] for b in boxes]
    area = [(b[2] - b[0]) * (b[3] - b[1]) for b in boxes]
    recs = [(real[i][c], i, c) for i in range(len(boxes)) if area[i] > 0 for c in range(len(real[i]))
            if real[i][c] >= thr]
    recs.sort(key=lambda r: -r[0])                       # stable: box, then class order among equals
    kept, per = [], {}
    for s, i, c in recs:
        if len(kept) == total:
            break
        mine = per.setdefault(c, [])
        if len(mine) == per_class:
            continue
        ok = True
        for j in mine:
            a, b = boxes[i], boxes[j]
            ih = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
            iw = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
            if ih * iw / (area[i] + area[j] - ih * iw) > iou_thr:
                ok = False
                break
        if ok:
            mine.append(i)
            kept.append((i, c, boxes[i]))
    return kept


def test_against_reference():
    rng = np.random.default_rng(17)
    bsz, n, c, total = 2, 12, 4, 9
    yx = rng.uniform(-0.1, 0.9, (bsz, n, 2))
    boxes = np.concatenate([yx, yx + rng.uniform(0.05, 0.5, (bsz, n, 2))], axis=-1).astype(np.float32)
    codes = rng.integers(0, 256, (bsz, n, c)).astype(np.uint8)
    mn, mx = -0.5, 1.5
    bx, sc, _, _, cl = run(boxes, codes, 0.3, 0.35, 3, total, (mn, mx))
    step = (np.float64(np.float32(mx)) - np.float64(np.float32(mn))) / 255
    zero = np.floor(-np.float64(np.float32(mn)) / step + 0.5)
    for b in range(bsz):
        real = ((codes[b].astype(np.float64) - zero) * step).tolist()
        kept = reference(boxes[b].astype(float).tolist(), real, np.float32(0.3), np.float32(0.35), 3, total)
        k = len(kept)
        assert 0 < k <= total
        np.testing.assert_allclose(bx[b, 0, :k], [box for _, _, box in kept], rtol=1e-6)
        assert sc[b, 0, 0, :k].tolist() == [int(codes[b, i, c_]) for i, c_, _ in kept]
        assert cl[b, 0, 0, :k].tolist() == [float(c_) for _, c_, _ in kept]
        assert not bx[b, 0, k:].any() and not sc[b, 0, 0, k:].any() and not cl[b, 0, 0, k:].any()


def test_errors():
    b = f4(np.zeros(12), (1, 1, 3, 4))
    s = np.zeros((1, 1, 3, 2), np.uint8)
    assert_op_error("MultiClassNms_8", [b, s, 0.0, 1.0, 0.1, 0.5, 10, 0], "max total detections is 0")
    assert_op_error("MultiClassNms_8", [b, s, 0.0, 1.0, 0.1, 0.5, -1, 4], "max detections per class is -1")
    two_boxes = f4(np.zeros(8), (1, 1, 2, 4))
    assert_op_error("MultiClassNms_8", [two_boxes, s, 0.0, 1.0, 0.1, 0.5, 10, 4], "boxes have shape")
    assert_op_error("MultiClassNms_8", [b, s, 0.2, 1.0, 0.1, 0.5, 10, 4], "does not contain 0")
    assert_op_error("MultiClassNms_8", [b, s, 0.0, 1.0, float("nan"), 0.5, 10, 4], "score threshold")
