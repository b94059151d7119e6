"""Proposal_q8q16 against hand cases and a plain loop reference (op text; rules in
ops/kernels/detect_proposal.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

BOX_MAX = 8191.875      # quint16 [0, 8191.875]: step 0.125, zero 0


def inputs(scores, deltas, anchors, size, stride=(4.0, 4.0), max_prop=100, max_rois=10, thr=0.5, min_size=0.0,
           srange=(0.0, 1.0), drange=(-2.0, 1.984375), arange_=(0.0, BOX_MAX), irange=(0.0, BOX_MAX)):
    return [scores, *srange, deltas, *drange, anchors, *arange_, size, *irange, stride[0], stride[1], max_prop,
            max_rois, thr, min_size]


def hand_case():
    # One anchor (0,0)-(8,8) (codes x8), a 1x2 feature map with stride 4: zero deltas (code 128 of [-2, 1.984375],
    # step 1/64) give proposals (0,0,8,8) and (4,0,12,8).  Scores 200 and 100.  Image (w 100, h 100) = codes 800.
    # IoU = (4*8) / (64 + 64 - 32) = 1/3.
    scores = np.uint8([200, 100]).reshape(1, 1, 2, 1)
    deltas = np.full((1, 1, 2, 4), 128, np.uint8)
    anchors = np.uint16([0, 0, 64, 64]).reshape(1, 1, 1, 4)
    size = np.uint16([800, 800]).reshape(1, 1, 1, 2)
    return scores, deltas, anchors, size


def test_by_hand():
    scores, deltas, anchors, size = hand_case()
    # Threshold 0.3: IoU 1/3 >= 0.3 -> the second is suppressed: one RoI.
    sc, smn, smx, rois, rmn, rmx, bidx = run_op("Proposal_q8q16", inputs(scores, deltas, anchors, size, thr=0.3))
    assert sc.ravel().tolist() == [200] and rois.dtype == np.uint16 and rois.reshape(-1).tolist() == [0, 0, 64, 64]
    assert bidx.ravel().tolist() == [0] and (smn.item(), smx.item()) == (0.0, 1.0)
    assert (rmn.item(), rmx.item()) == (0.0, BOX_MAX)
    # Threshold 0.5: both kept, best first: codes (0,0,64,64), (32,0,96,64).
    sc, _, _, rois, _, _, bidx = run_op("Proposal_q8q16", inputs(scores, deltas, anchors, size, thr=0.5))
    assert sc.ravel().tolist() == [200, 100] and rois.reshape(2, 4).tolist() == [[0, 0, 64, 64], [32, 0, 96, 64]]
    # Image width 10 (code 80) clips the second box's x2 from 12 to 10 -> code 80; max_rois 1 keeps only the best.
    small = np.uint16([80, 800]).reshape(1, 1, 1, 2)
    _, _, _, rois, _, _, _ = run_op("Proposal_q8q16", inputs(scores, deltas, anchors, small))
    assert rois.reshape(2, 4).tolist() == [[0, 0, 64, 64], [32, 0, 80, 64]]
    sc, *_ = run_op("Proposal_q8q16", inputs(scores, deltas, anchors, size, max_rois=1))
    assert sc.ravel().tolist() == [200]
    # max proposals 1: only the best enters NMS.  min size 9 drops both 8-wide boxes: nothing left.
    sc, *_ = run_op("Proposal_q8q16", inputs(scores, deltas, anchors, size, max_prop=1))
    assert sc.ravel().tolist() == [200]
    sc, _, _, rois, _, _, bidx = run_op("Proposal_q8q16", inputs(scores, deltas, anchors, size, min_size=9.0))
    assert sc.shape == (1, 1, 1, 0) and rois.shape == (1, 1, 0, 4) and bidx.shape == (1, 1, 1, 0)


def test_deltas_by_hand():
    # Deltas (dx, dy, dw, dh) = (0.5, -0.25, 0, 0) (codes 160, 112, 128, 128) on the 8x8 anchor at cell (0,0):
    # centre (4 + 0.5*8, 4 - 0.25*8) = (8, 2), size 8x8 -> (4, -2, 12, 6) -> y1 clipped to 0 -> codes (32, 0, 96, 48).
    scores, _, anchors, size = hand_case()
    deltas = np.full((1, 1, 2, 4), 128, np.uint8)
    deltas[0, 0, 0] = [160, 112, 128, 128]
    _, _, _, rois, _, _, _ = run_op("Proposal_q8q16", inputs(scores, deltas, anchors, size, thr=0.9))
    assert rois.reshape(2, 4)[0].tolist() == [32, 0, 96, 48]


def reference(scores, deltas, anchors, size, sh, sw, max_prop, max_rois, thr, min_size, step_d, zero_d):
    """Plain loops over one image; anchors (x1,y1,x2,y2) real, size (width, height) real."""
    fh, fw, a = scores.shape
    props = []
    for y in range(fh):
        for x in range(fw):
            for k in range(a):
                x1, y1, x2, y2 = anchors[k]
                aw, ah = x2 - x1, y2 - y1
                cx, cy = (x1 + x2) / 2 + x * sw, (y1 + y2) / 2 + y * sh
                dx, dy, dw, dh = ((int(v) - zero_d) * step_d for v in deltas[y, x, 4 * k:4 * k + 4])
                cx, cy, w, h = cx + dx * aw, cy + dy * ah, aw * math.exp(dw), ah * math.exp(dh)
                box = [min(max(cx - w / 2, 0), size[0]), min(max(cy - h / 2, 0), size[1]),
                       min(max(cx + w / 2, 0), size[0]), min(max(cy + h / 2, 0), size[1])]
                props.append((int(scores[y, x, k]), box))
    order = sorted(range(len(props)), key=lambda i: -props[i][0])[:max_prop]
    kept = []
    for i in order:
        b = props[i][1]
        if b[2] - b[0] < min_size or b[3] - b[1] < min_size:
            continue
        ok = True
        for j in kept:
            c = props[j][1]
            iw, ih = max(min(b[2], c[2]) - max(b[0], c[0]), 0), max(min(b[3], c[3]) - max(b[1], c[1]), 0)
            union = (b[2] - b[0]) * (b[3] - b[1]) + (c[2] - c[0]) * (c[3] - c[1]) - iw * ih
            if union > 0 and iw * ih / union >= thr:
                ok = False
                break
        if ok:
            kept.append(i)
        if len(kept) == max_rois:
            break
    return [props[i] for i in kept]


def test_against_reference():
    rng = np.random.default_rng(31)
    b, fh, fw, a = 2, 3, 4, 3
    scores = rng.integers(0, 256, (b, fh, fw, a)).astype(np.uint8)
    deltas = rng.integers(96, 160, (b, fh, fw, 4 * a)).astype(np.uint8)
    anchors = np.uint16([[0, 0, 64, 64], [0, 16, 96, 48], [16, 0, 48, 128]])
    size = np.uint16([[200, 160], [120, 240]])          # (width, height) codes over [0, 8191.875 * 2]
    sc, _, _, rois, _, _, bidx = run_op("Proposal_q8q16", inputs(
        scores, deltas, anchors.reshape(1, 1, a, 4), size.reshape(b, 1, 1, 2), (6.0, 5.0), 20, 7, 0.45, 3.0,
        irange=(0.0, 2 * BOX_MAX)))
    step_d, zero_d = 3.984375 / 255, 128
    want = []
    for i in range(b):
        got = reference(scores[i], deltas[i], anchors * 0.125, size[i] * 0.25, 6.0, 5.0, 20, 7, np.float32(0.45), 3.0,
                        step_d, zero_d)
        want += [(i, s, box) for s, box in got]
    assert sc.ravel().tolist() == [s for _, s, _ in want] and bidx.ravel().tolist() == [i for i, _, _ in want]
    want_codes = np.array([[math.floor(v / 0.125 + 0.5) for v in box] for _, _, box in want])
    assert np.array_equal(rois.reshape(-1, 4), want_codes)
    assert 0 < len(want) < b * 7 + 1


@pytest.mark.parametrize("change, fragment", [
    ({"deltas": np.zeros((1, 1, 2, 3), np.uint8)}, "4 per anchor"),
    ({"max_rois": 0}, "max_roi_num is 0"),
    ({"max_prop": 0}, "max proposal_num is 0"),
    ({"size": np.uint16([800]).reshape(1, 1, 1, 1)}, "(width, height)"),
    ({"stride": (0.0, 4.0)}, "stride_h"),
])
def test_errors(change, fragment):
    scores, deltas, anchors, size = hand_case()
    kw = {"deltas": deltas, "size": size}
    kw.update(change)
    d, s = kw.pop("deltas"), kw.pop("size")
    assert_op_error("Proposal_q8q16", inputs(scores, d, anchors, s, **kw), fragment)
