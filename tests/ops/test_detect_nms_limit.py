"""BoxWithNmsLimit_f and BoxWithNmsLimit_q8q16 against hand cases and a plain loop reference
(op texts; rules in ops/kernels/detect_nms_limit.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, i4

# Three boxes, class 1 (class 0 is the background): A (0,0,9,9) .9, B (1,1,10,10) .8, C (20,20,29,29) .7.
# +1 convention: areas 10*10 = 100; A.B overlap x 1..9 -> 9 px, y 9 px -> 81; IoU = 81/119 = 0.6807.
BOXES = [[0, 0, 9, 9], [1, 1, 10, 10], [20, 20, 29, 29]]
SCORES = [0.9, 0.8, 0.7]
IOU_AB = 81 / 119


def f_inputs(boxes, scores, splits, score_thr=0.1, nms_thr=0.5, det=-1, soft=0, method=0, sigma=0.5, min_score=0.1,
             rotated=0):
    n, c = len(scores), len(scores[0])
    dim = 5 if rotated else 4
    return [f4(scores, (1, 1, n, c)), f4(boxes, (1, 1, n, c * dim)), f4(splits), score_thr, nms_thr, det, soft,
            method, sigma, min_score, rotated]


def two_class(boxes, scores):
    """Class 0 gets zero boxes and scores; class 1 the given ones."""
    return [[0, 0, 0, 0] + list(b) for b in boxes], [[0.0, s] for s in scores]


def test_f_hard_by_hand():
    # B overlaps A by 0.6807 > 0.5 -> suppressed; kept A, C.  max_length = (2-1)*3 = 3, the last slot zero.
    b, s = two_class(BOXES, SCORES)
    sc, bx, cl, splits, keeps, sizes = run_op("BoxWithNmsLimit_f", f_inputs(b, s, [3]))
    np.testing.assert_allclose(sc.ravel(), [0.9, 0.7, 0.0], rtol=1e-7)
    assert bx.shape == (1, 1, 3, 4) and bx.reshape(3, 4).tolist() == [BOXES[0], BOXES[2], [0, 0, 0, 0]]
    assert cl.ravel().tolist() == [1.0, 1.0, 0.0] and splits.ravel().tolist() == [2.0]
    assert keeps.ravel().tolist() == [0, 2, 0] and sizes.shape == (1, 1, 1, 2) and sizes.ravel().tolist() == [0, 2]
    # With a threshold of 0.7 nothing overlaps enough; with detections = 1 only A survives.
    sc, *_ = run_op("BoxWithNmsLimit_f", f_inputs(b, s, [3], nms_thr=0.7), n_outputs=4)
    np.testing.assert_allclose(sc.ravel(), [0.9, 0.8, 0.7], rtol=1e-7)
    sc, _, _, splits = run_op("BoxWithNmsLimit_f", f_inputs(b, s, [3], det=1), n_outputs=4)
    np.testing.assert_allclose(sc.ravel(), [0.9, 0, 0], rtol=1e-7)
    assert splits.ravel().tolist() == [1.0]


def test_f_soft_linear_by_hand():
    # Linear soft NMS: select A (.9); B's IoU 0.6807 > 0.5 -> .8 * (1 - 0.6807) = 0.25546; C keeps .7.
    # Next C (.7; IoU with B 0), then B (0.25546 >= min score 0.1).  Listed by class, scores descending.
    b, s = two_class(BOXES, SCORES)
    sc, _, _, splits, keeps, _ = run_op("BoxWithNmsLimit_f", f_inputs(b, s, [3], soft=1, method=1))
    np.testing.assert_allclose(sc.ravel(), [0.9, 0.7, 0.8 * (1 - IOU_AB)], rtol=1e-6)
    assert keeps.ravel().tolist() == [0, 2, 1] and splits.ravel().tolist() == [3.0]
    # Gaussian (sigma 0.5): B = .8 * exp(-0.6807^2 / 0.5) = 0.31534.
    sc, *_ = run_op("BoxWithNmsLimit_f", f_inputs(b, s, [3], soft=1, method=2))
    np.testing.assert_allclose(sc.ravel(), [0.9, 0.7, 0.8 * math.exp(-IOU_AB ** 2 / 0.5)], rtol=1e-6)


def test_f_rotated_by_hand():
    # Rotated [cx, cy, w, h, angle]: the same 2x2 square at 0 and 90 degrees overlaps fully (IoU 1) -> suppressed;
    # a square shifted by 1 along x overlaps 2/6 = 0.333 <= 0.5 -> kept.
    boxes = [[0, 0, 0, 0, 0, 0, 0, 2, 2, 0], [0, 0, 0, 0, 0, 0, 0, 2, 2, 90], [0, 0, 0, 0, 0, 1, 0, 2, 2, 0]]
    sc, bx, *_ = run_op("BoxWithNmsLimit_f", f_inputs(boxes, [[0, .9], [0, .8], [0, .7]], [3], rotated=1))
    np.testing.assert_allclose(sc.ravel(), [0.9, 0.7, 0.0], rtol=1e-7)
    assert bx.shape == (1, 1, 3, 5) and bx[0, 0, 1].tolist() == [1, 0, 2, 2, 0]


def iou_ref(a, b, plus):
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    inter = 0.0 if ix < 0 or iy < 0 else (ix + plus) * (iy + plus)
    area = lambda r: (r[2] - r[0] + plus) * (r[3] - r[1] + plus)
    return inter / (area(a) + area(b) - inter)


def nms_class_ref(boxes, scores, score_thr, nms_thr, det, soft, method, sigma, min_score, plus, ge):
    """One class of one image, plain Python: returns [(box index, final score)] in selection order."""
    cands = [j for j in range(len(scores)) if scores[j] > score_thr]
    if not soft:
        cands.sort(key=lambda j: -scores[j])
        kept = []
        for j in cands:
            if det is not None and len(kept) >= det:
                break
            if all(not (iou_ref(boxes[j], boxes[k], plus) > nms_thr) for k in kept):
                kept.append(j)
        return [(j, scores[j]) for j in kept]
    sc = {j: scores[j] for j in cands}
    pending, chosen = list(cands), []
    while pending and (det is None or len(chosen) < det):
        best = None
        for j in pending:
            if sc[j] > 0 and (best is None or sc[j] > sc[best]):
                best = j
        if best is None:
            break
        chosen.append(best)
        pending.remove(best)
        for j in list(pending):
            o = iou_ref(boxes[best], boxes[j], plus)
            over = o >= nms_thr if ge else o > nms_thr
            w = (1 - o if over else 1.0) if method == 1 else math.exp(-o * o / sigma) if method == 2 else \
                (0.0 if over else 1.0)
            sc[j] *= w
            if sc[j] < min_score:
                pending.remove(j)
    return [(j, sc[j]) for j in chosen]


def image_ref(boxes, scores, det, per_class_det, **kw):
    """All classes but 0, then the image cap and the by-class listing: [(class, box, score)]."""
    kept = []
    for c in range(1, len(scores[0])):
        res = nms_class_ref([b[c] for b in boxes], [s[c] for s in scores], det=per_class_det, **kw)
        kept += [(c, j, s) for j, s in res]
    if det is not None and len(kept) > det:
        kept = sorted(kept, key=lambda k: -k[2])[:det]
    return sorted(kept, key=lambda k: (k[0], -k[2]))


def random_case(rng, n, c, scale):
    xy = rng.uniform(0, scale, (n, c, 2))
    wh = rng.uniform(scale / 8, scale / 2, (n, c, 2))
    return np.concatenate([xy, xy + wh], axis=-1), rng.uniform(0, 1, (n, c))


@pytest.mark.parametrize("soft, method, det", [(0, 0, -1), (0, 0, 3), (1, 1, -1), (1, 2, 4), (1, 0, 2)])
def test_f_against_reference(soft, method, det):
    rng = np.random.default_rng(20 + 3 * soft + method)
    n, c, splits = 14, 3, [5, 9]
    boxes, scores = random_case(rng, n, c, 40.0)
    b32, s32 = boxes.astype(np.float32).astype(float), scores.astype(np.float32).astype(float)
    sc, bx, cl, sp, keeps, sizes = run_op("BoxWithNmsLimit_f", f_inputs(b32.reshape(n, -1), s32, splits, 0.2, 0.4, det,
                                                                        soft, method, 0.6, 0.15))
    length = (c - 1) * n
    want_s, want_b, want_c, want_k = np.zeros(length), np.zeros((length, 4)), np.zeros(length), np.zeros(length)
    pos, start, want_sizes = 0, 0, np.zeros((2, c))
    for b, cnt in enumerate(splits):
        kept = image_ref(b32[start:start + cnt].tolist(), s32[start:start + cnt].tolist(), det if det > 0 else None,
                         None if soft or det <= 0 else det, score_thr=np.float32(0.2), nms_thr=np.float32(0.4),
                         soft=soft, method=method, sigma=np.float32(0.6), min_score=np.float32(0.15), plus=1, ge=False)
        assert sp.ravel()[b] == len(kept)
        for cls, j, s in kept:
            want_s[pos], want_b[pos], want_c[pos], want_k[pos] = s, b32[start + j, cls], cls, j
            want_sizes[b, cls] += 1
            pos += 1
        start += cnt
    np.testing.assert_allclose(sc.ravel(), want_s, rtol=1e-6)
    np.testing.assert_allclose(bx.reshape(length, 4), want_b, rtol=1e-6)
    assert cl.ravel().tolist() == want_c.tolist() and keeps.ravel().tolist() == want_k.tolist()
    assert sizes.reshape(2, c).tolist() == want_sizes.tolist()


def q_inputs(scores_q, boxes_q, batch, score_thr=0.1, det=10, kind=0, nms_thr=0.5, sigma=0.5, min_score=0.1,
             srange=(0.0, 1.0), brange=(0.0, 8191.875)):
    n, c = scores_q.shape
    return [scores_q.reshape(1, 1, n, c), boxes_q.reshape(1, 1, n, 4 * c), i4(batch), score_thr, det, kind, nms_thr,
            sigma, min_score, *srange, *brange]


def test_q8q16_by_hand():
    # Codes: class 1 boxes A (0,0,10,10), B (2,0,12,10), C (30,30,40,40); scores 230, 204, 179 over [0, 1]
    # (0.902, 0.8, 0.702).  Plain IoU on codes: A.B = 80 / 120 = 0.667 >= 0.5 -> hard NMS drops B.
    boxes = np.zeros((3, 8), np.uint16)
    boxes[:, 4:] = [[0, 0, 10, 10], [2, 0, 12, 10], [30, 30, 40, 40]]
    scores = np.uint8([[0, 230], [0, 204], [0, 179]])
    sq, bq, cl, bt, smn, smx, bmn, bmx = run_op("BoxWithNmsLimit_q8q16", q_inputs(scores, boxes, [0, 0, 0]))
    assert sq.ravel().tolist() == [230, 179] and sq.shape == (1, 1, 1, 2)
    assert bq.shape == (1, 1, 2, 4) and bq.reshape(2, 4).tolist() == [[0, 0, 10, 10], [30, 30, 40, 40]]
    assert cl.ravel().tolist() == [1, 1] and bt.ravel().tolist() == [0, 0]
    assert (smn.item(), smx.item(), bmn.item(), bmx.item()) == (0.0, 1.0, 0.0, 8191.875)
    # Linear soft NMS: B's score 204/255 = 0.8 * (1 - 2/3) = 0.26667 -> code round(68.0) = 68.
    sq, *_ = run_op("BoxWithNmsLimit_q8q16", q_inputs(scores, boxes, [0, 0, 0], kind=1))
    assert sq.ravel().tolist() == [230, 179, 68]
    # Boxes in two images (batch 0: A, B; batch 1: C) and detections = 1 -> A and C, one per image.
    sq, bq, cl, bt, *_ = run_op("BoxWithNmsLimit_q8q16", q_inputs(scores, boxes, [0, 0, 1], det=1, kind=1))
    assert sq.ravel().tolist() == [230, 179] and bt.ravel().tolist() == [0, 1]
    # Nothing above the threshold: empty outputs.
    sq, bq, cl, bt, *_ = run_op("BoxWithNmsLimit_q8q16", q_inputs(scores, boxes, [0, 0, 0], score_thr=0.95))
    assert sq.shape == (1, 1, 1, 0) and bq.shape == (1, 1, 0, 4) and bt.shape == (1, 1, 1, 0)


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_q8q16_against_reference(kind):
    rng = np.random.default_rng(40 + kind)
    n, c, det = 16, 3, 5
    boxes, _ = random_case(rng, n, c, 300.0)
    bq = np.round(boxes).astype(np.uint16)
    sq = rng.integers(0, 256, (n, c)).astype(np.uint8)
    batch = [0] * 7 + [2] * 9
    smn, smx = -0.2, 1.0
    out = run_op("BoxWithNmsLimit_q8q16", q_inputs(sq, bq.reshape(n, -1), batch, 0.3, det, kind, 0.45, 0.7, 0.2,
                                                   (smn, smx)))
    step = (np.float64(np.float32(smx)) - np.float64(np.float32(smn))) / 255
    zero = math.floor(-np.float64(np.float32(smn)) / step + 0.5)
    real = (sq.astype(np.float64) - zero) * step
    rows = []
    for lo, hi in ((0, 7), (7, 16)):
        kept = image_ref(bq[lo:hi].astype(float).tolist(), real[lo:hi].tolist(), det, det,
                         score_thr=np.float32(0.3), nms_thr=np.float32(0.45), soft=1, method=kind,
                         sigma=np.float32(0.7), min_score=np.float32(0.2), plus=0, ge=True)
        rows += [(batch[lo], cls, lo + j, s) for cls, j, s in kept]
    assert out[0].shape == (1, 1, 1, len(rows))
    want_codes = [min(255, max(0, math.floor(s / step + 0.5) + zero)) for *_, s in rows]
    assert out[0].ravel().tolist() == want_codes
    assert out[1].reshape(-1, 4).tolist() == [bq[j, cls].tolist() for _, cls, j, _ in rows]
    assert out[2].ravel().tolist() == [cls for _, cls, _, _ in rows]
    assert out[3].ravel().tolist() == [b for b, *_ in rows]


def test_errors():
    b, s = two_class(BOXES, SCORES)
    assert_op_error("BoxWithNmsLimit_f", f_inputs(b, s, [2]), "summing to the 3 boxes")
    bad = f_inputs(b, s, [3])
    bad[1] = f4(np.zeros(3 * 6), (1, 1, 3, 6))
    assert_op_error("BoxWithNmsLimit_f", bad, "4 coordinates per class")
    assert_op_error("BoxWithNmsLimit_f", f_inputs(b, s, [3], soft=1, method=2, sigma=0.0), "sigma")
    assert_op_error("BoxWithNmsLimit_f", f_inputs(b, s, [3]), "declares 5 outputs", n_outputs=5)
    scores = np.uint8([[0, 230]])
    boxes = np.zeros((1, 8), np.uint16)
    assert_op_error("BoxWithNmsLimit_q8q16", q_inputs(scores, boxes, [0], det=0), "detections is 0")
    assert_op_error("BoxWithNmsLimit_q8q16", q_inputs(scores, boxes, [0], kind=3), "soft nms is 3")
    assert_op_error("BoxWithNmsLimit_q8q16", q_inputs(scores, boxes, [0, 0]), "2 entries for 1 boxes")
    assert_op_error("BoxWithNmsLimit_q8q16", q_inputs(scores, boxes, [0], srange=(0.5, 1.0)), "does not contain 0")
