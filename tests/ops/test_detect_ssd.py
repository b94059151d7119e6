"""SsdDetectionOutput against hand cases and a plain loop reference of Caffe's DetectionOutput
(op text; rules in ops/kernels/detect_ssd.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4

LOC_RANGE = (-2.0, 1.984375)     # step 1/64, zero 128


def run(loc_codes, conf_codes, prior, num_classes, share=1, background=0, nms=0.45, top_k=-1, eta=1.0, code=0,
        keep=3, encoded=1, conf_thr=0.1, conf_range=(0.0, 1.0)):
    loc = np.asarray(loc_codes, np.uint8)
    conf = np.asarray(conf_codes, np.uint8)
    b = loc.shape[0]
    return run_op("SsdDetectionOutput", [loc.reshape(b, 1, 1, -1), *LOC_RANGE, conf.reshape(b, 1, 1, -1), *conf_range,
                                         num_classes, share, background, nms, top_k, eta, code, f4(prior), keep,
                                         encoded, conf_thr])


P0, P1 = [0.1, 0.1, 0.5, 0.5], [0.15, 0.1, 0.55, 0.5]     # IoU = (.35*.4) / (.16 + .16 - .14) = 0.778


def test_by_hand_corner():
    # CORNER, variance encoded, zero locations (code 128): boxes = priors.  Class 1 confidences 230 (.902), 204 (.8):
    # P1 overlaps P0 by 0.778 > 0.45 -> one detection; the other two of keep_top_k = 3 slots are zeros.
    out = run([[128] * 8], [[0, 230, 0, 204]], P0 + P1, 2)
    bidx, cls, conf, cmn, cmx, x1, y1, x2, y2 = out
    assert bidx.shape == (1, 1, 1, 3) and bidx.ravel().tolist() == [0, 0, 0] and cls.ravel().tolist() == [1, 0, 0]
    assert conf.dtype == np.uint8 and conf.ravel().tolist() == [230, 0, 0] and (cmn.item(), cmx.item()) == (0.0, 1.0)
    np.testing.assert_allclose([x1[0, 0, 0, 0], y1[0, 0, 0, 0], x2[0, 0, 0, 0], y2[0, 0, 0, 0]], P0, rtol=1e-6)
    assert not x1.ravel()[1:].any() and not y2.ravel()[1:].any()
    # NMS threshold 0.8: both survive, by descending score.
    _, cls, conf, *_ = run([[128] * 8], [[0, 230, 0, 204]], P0 + P1, 2, nms=0.8)
    assert cls.ravel().tolist() == [1, 1, 0] and conf.ravel().tolist() == [230, 204, 0]


def test_by_hand_center_size():
    # CENTER_SIZE with variances (0.1, 0.1, 0.2, 0.2): prior P0 centre (.3, .3), size .4.
    # loc (0.5, 0, 1, 0) = codes (160, 128, 192, 128): cx = .3 + .1*.5*.4 = .32, w = exp(.2*1)*.4 = .48856, h = .4
    # -> (.32 - .24428, .1, .32 + .24428, .5).
    out = run([[160, 128, 192, 128]], [[0, 230]], P0 + [0.1, 0.1, 0.2, 0.2], 2, code=1, encoded=0, keep=1)
    w = math.exp(0.2) * 0.4
    got = [out[k].item() for k in (5, 6, 7, 8)]
    np.testing.assert_allclose(got, [0.32 - w / 2, 0.1, 0.32 + w / 2, 0.5], rtol=1e-6)
    # CORNER_SIZE: xmin = .1 + .1*.5*.4 = .12, xmax = .5 + .2*1*.4 = .58; y unchanged.
    out = run([[160, 128, 192, 128]], [[0, 230]], P0 + [0.1, 0.1, 0.2, 0.2], 2, code=2, encoded=0, keep=1)
    np.testing.assert_allclose([out[k].item() for k in (5, 6, 7, 8)], [0.12, 0.1, 0.58, 0.5], rtol=1e-6)


def test_by_hand_eta_and_keep_top_k():
    # Boxes A (0,0,1,1), B (.5,0,1.5,1): IoU = .5/1.5 = 1/3.  Threshold 0.6 keeps both; with eta 0.5 the threshold
    # drops to 0.3 after A is kept, and 1/3 > 0.3 suppresses B.
    prior = [0, 0, 1, 1, .5, 0, 1.5, 1]
    _, _, conf, *_ = run([[128] * 8], [[0, 230, 0, 204]], prior, 2, nms=0.6)
    assert conf.ravel().tolist() == [230, 204, 0]
    _, _, conf, *_ = run([[128] * 8], [[0, 230, 0, 204]], prior, 2, nms=0.6, eta=0.5)
    assert conf.ravel().tolist() == [230, 0, 0]
    # Three classes: class 1 on A (.902), class 2 on B (.941).  Listed by class: class 1 first.  keep_top_k = 1
    # keeps only the best score: class 2.  background label -1 makes class 0 (score .8 on A) count too.
    conf_codes = [[0, 230, 0, 0, 0, 240]]
    _, cls, conf, *_ = run([[128] * 8], conf_codes, prior, 3)
    assert cls.ravel().tolist() == [1, 2, 0] and conf.ravel().tolist() == [230, 240, 0]
    _, cls, conf, *_ = run([[128] * 8], conf_codes, prior, 3, keep=1)
    assert cls.ravel().tolist() == [2] and conf.ravel().tolist() == [240]
    _, cls, conf, *_ = run([[128] * 8], [[204, 230, 0, 0, 0, 240]], prior, 3, background=-1)
    assert cls.ravel().tolist() == [0, 1, 2] and conf.ravel().tolist() == [204, 230, 240]


def decode_ref(loc, prior, var, code):
    px1, py1, px2, py2 = prior
    pw, ph = px2 - px1, py2 - py1
    if code == 0:
        return [p + v * t for p, v, t in zip(prior, var, loc)]
    if code == 2:
        return [px1 + var[0] * loc[0] * pw, py1 + var[1] * loc[1] * ph, px2 + var[2] * loc[2] * pw,
                py2 + var[3] * loc[3] * ph]
    cx, cy = (px1 + px2) / 2 + var[0] * loc[0] * pw, (py1 + py2) / 2 + var[1] * loc[1] * ph
    w, h = math.exp(var[2] * loc[2]) * pw, math.exp(var[3] * loc[3]) * ph
    return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]


def jaccard(a, b):
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return 0.0
    inter = (min(a[2], b[2]) - max(a[0], b[0])) * (min(a[3], b[3]) - max(a[1], b[1]))
    size = lambda r: 0.0 if r[2] < r[0] or r[3] < r[1] else (r[2] - r[0]) * (r[3] - r[1])
    return inter / (size(a) + size(b) - inter)


def caffe_ref(loc, conf, priors, var, code, share, background, nms, top_k, eta, keep, conf_thr):
    """One image of Caffe's DetectionOutput::Forward_cpu, plain Python."""
    num_classes = len(conf[0])
    found = []
    for c in range(num_classes):
        if c == background:
            continue
        boxes = [decode_ref(loc[p][0 if share else c], priors[p], var[p], code) for p in range(len(priors))]
        cand = sorted([p for p in range(len(priors)) if conf[p][c] > conf_thr], key=lambda p: -conf[p][c])
        if top_k > -1:
            cand = cand[:top_k]
        kept, thr = [], nms
        for p in cand:
            if all(jaccard(boxes[p], boxes[k]) <= thr for k in kept):
                kept.append(p)
                if eta < 1 and thr > 0.5:
                    thr *= eta
        found += [(c, p, conf[p][c], boxes[p]) for p in kept]
    if len(found) > keep:
        found = sorted(sorted(found, key=lambda f: -f[2])[:keep], key=lambda f: f[0])
    return found


@pytest.mark.parametrize("code, share, encoded, eta", [(0, 1, 1, 1.0), (1, 0, 0, 0.8), (2, 1, 0, 1.0)])
def test_against_caffe_reference(code, share, encoded, eta):
    rng = np.random.default_rng(50 + code)
    b, p, c, keep = 2, 10, 3, 6
    xy = rng.uniform(0, 0.6, (p, 2))
    priors = np.concatenate([xy, xy + rng.uniform(0.1, 0.4, (p, 2))], axis=1).astype(np.float32)
    var = np.tile(np.float32([0.1, 0.1, 0.2, 0.2]), (p, 1))
    n_loc = 1 if share else c
    loc_q = rng.integers(100, 156, (b, p * n_loc * 4)).astype(np.uint8)
    conf_q = rng.integers(0, 256, (b, p * c)).astype(np.uint8)
    prior_in = priors.ravel().tolist() + ([] if encoded else var.ravel().tolist())
    out = run(loc_q, conf_q, prior_in, c, share, 0, 0.55, 5, eta, code, keep, encoded, 0.3, (0.0, 1.0))
    loc = ((loc_q.astype(np.float64) - 128) / 64).reshape(b, p, n_loc, 4)
    conf = (conf_q.astype(np.float64) / 255).reshape(b, p, c)
    use_var = np.ones((p, 4)) if encoded else var.astype(float)
    rows = []
    for n in range(b):
        rows += [(n, *f) for f in caffe_ref(loc[n].tolist(), conf[n].tolist(), priors.astype(float).tolist(),
                                            use_var.tolist(), code, share, 0, np.float32(0.55), 5, np.float32(eta),
                                            keep, np.float32(0.3))]
    k = len(rows)
    assert 0 < k <= b * keep
    assert out[0].ravel()[:k].tolist() == [r[0] for r in rows] and out[1].ravel()[:k].tolist() == [r[1] for r in rows]
    assert out[2].ravel()[:k].tolist() == [int(conf_q[r[0], r[2] * c + r[1]]) for r in rows]
    got = np.stack([out[i].ravel() for i in (5, 6, 7, 8)], axis=1)
    np.testing.assert_allclose(got[:k], [r[4] for r in rows], rtol=1e-5, atol=1e-6)
    assert not got[k:].any() and not out[2].ravel()[k:].any() and not out[1].ravel()[k:].any()


def ssd_inputs(**change):
    """The hand case's 17 inputs with some parameters changed."""
    a = {"nc": 2, "share": 1, "background": 0, "nms": 0.45, "top_k": -1, "eta": 1.0, "code": 0, "keep": 3,
         "encoded": 1, "conf_thr": 0.1, "loc": np.full((1, 1, 1, 8), 128, np.uint8), "prior": P0 + P1}
    a.update(change)
    return [a["loc"], *LOC_RANGE, np.uint8([0, 230, 0, 204]).reshape(1, 1, 1, 4), 0.0, 1.0, a["nc"], a["share"],
            a["background"], a["nms"], a["top_k"], a["eta"], a["code"], f4(a["prior"]), a["keep"], a["encoded"],
            a["conf_thr"]]


@pytest.mark.parametrize("change, fragment", [
    ({"keep": 0}, "keep top k is 0"),
    ({"eta": 0.0}, "nms eta"),
    ({"code": 3}, "code type is 3"),
    ({"background": 2}, "background label id is 2"),
    ({"encoded": 0}, "prior data holds 8"),
    ({"loc": np.full((1, 1, 1, 4), 128, np.uint8)}, "location holds 4"),
    ({"nc": 3}, "confidence holds 4"),
])
def test_errors(change, fragment):
    assert_op_error("SsdDetectionOutput", ssd_inputs(**change), fragment)
