"""QuantizedRoiAlignV2_8 and QuantizedRoiPool_8_v2 (op texts; rules in ops/kernels/vision_roi.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.quant import adjust_range
from hexnn_import.testing.opcheck import assert_op_error, f4, i4

MAP = np.arange(16, dtype=np.uint8).reshape(1, 4, 4, 1)     # value = 4*y + x


def align(q, rois, bidx, ph, pw, sh=1.0, sw=1.0, rh=1, rw=1, rng=(0.0, 255.0), out=(0.0, 255.0)):
    r = np.asarray(rois, np.uint16).reshape(1, 1, -1, 4)
    return run_op("QuantizedRoiAlignV2_8", [q, *rng, r, i4(bidx), ph, pw, sh, sw, rh, rw, *out])


def test_align_by_hand():
    # Range [0, 255]: step 1, zero 0.  RoI codes (0,0)-(32,32) -> 0..4 map units; 2x2 cells of size 2, one sample
    # each at their centres (1,1), (1,3), (3,1), (3,3): x = 3 is the last column (no interpolation) -> 5, 7, 13, 15.
    q, mn, mx = align(MAP, [0, 0, 32, 32], [0], 2, 2)
    assert q.shape == (1, 2, 2, 1) and q.ravel().tolist() == [5, 7, 13, 15]
    assert (mn.item(), mx.item()) == (0.0, 255.0)
    # RoI (0,0)-(16,16) -> 0..2, one cell, 2x2 samples at 0.5 and 1.5: bilinear means
    # (0+1+4+5)/4 = 2.5, 3.5, 6.5, 7.5 -> average 5.0 -> code 5.
    q, _, _ = align(MAP, [0, 0, 16, 16], [0], 1, 1, rh=2, rw=2)
    assert q.item() == 5
    # Spatial scale 0.5 halves the RoI: codes (0,0)-(64,64) -> 8 * 0.5 = 4 map units, as the first case.
    q, _, _ = align(MAP, [0, 0, 64, 64], [0], 2, 2, sh=0.5, sw=0.5)
    assert q.ravel().tolist() == [5, 7, 13, 15]
    # Output range [0, 510] (step 2): 5 -> 2.5 -> rounds half away to 3; 7 -> 4 (3.5), 13 -> 7 (6.5), 15 -> 8.
    q, mn, mx = align(MAP, [0, 0, 32, 32], [0], 2, 2, out=(0.0, 510.0))
    assert q.ravel().tolist() == [3, 4, 7, 8] and mx.item() == 510.0


def reference_align(fm, box, ph, pw, rh, rw):
    """Loops over cells and samples; fm [H, W, D] float64, box (x1, y1, x2, y2) in map units."""
    h, w, d = fm.shape
    roi_w, roi_h = max(box[2] - box[0], 1.0), max(box[3] - box[1], 1.0)
    gh = rh or math.ceil(roi_h / ph)
    gw = rw or math.ceil(roi_w / pw)
    out = np.zeros((ph, pw, d))
    for i in range(ph):
        for j in range(pw):
            acc = np.zeros(d)
            for a in range(gh):
                for b in range(gw):
                    y = box[1] + i * roi_h / ph + (a + 0.5) * roi_h / ph / gh
                    x = box[0] + j * roi_w / pw + (b + 0.5) * roi_w / pw / gw
                    y0, x0 = math.floor(y), math.floor(x)
                    fy, fx = y - y0, x - x0
                    if y0 >= h - 1:
                        y0, fy = h - 1, 0.0
                    if x0 >= w - 1:
                        x0, fx = w - 1, 0.0
                    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
                    acc += ((1 - fy) * (1 - fx) * fm[y0, x0] + (1 - fy) * fx * fm[y0, x1]
                            + fy * (1 - fx) * fm[y1, x0] + fy * fx * fm[y1, x1])
            out[i, j] = acc / (gh * gw)
    return out


@pytest.mark.parametrize("rh, rw", [(0, 0), (2, 3)])
def test_align_against_loop_reference(rh, rw):
    rng = np.random.default_rng(7)
    q = rng.integers(0, 256, (2, 6, 7, 3), dtype=np.uint8)
    rois = np.array([[0, 0, 80, 64], [12, 20, 100, 78], [40, 8, 44, 20]], np.uint16)
    bidx = [1, 0, 1]
    mn, mx, omn, omx = -1.0, 3.0, -0.5, 2.5
    out, got_mn, got_mx = align(q, rois, bidx, 2, 3, 0.6, 0.5, rh, rw, (mn, mx), (omn, omx))
    # The requested output range is zero-fixed (adjust_range); the kernel reports the range it used.
    omn, omx = adjust_range(np.float32(omn), np.float32(omx))
    assert (got_mn.item(), got_mx.item()) == pytest.approx((omn, omx), rel=1e-6)
    step = (np.float64(np.float32(mx)) - np.float64(np.float32(mn))) / 255
    zero = round(-np.float64(np.float32(mn)) / step)
    ostep = (omx - omn) / 255
    for r in range(3):
        box = rois[r].astype(np.float64) * 0.125 * np.array([0.5, np.float32(0.6), 0.5, np.float32(0.6)])
        want = reference_align((q[bidx[r]].astype(np.float64) - zero) * step, box, 2, 3, rh, rw)
        assert np.all(np.abs(out[r] - np.clip((want - omn) / ostep, 0, 255)) <= 0.5 + 1e-6)


def pool(q, rois, bidx, oh, ow, sh=1.0, sw=1.0, rng=(0.0, 255.0), so=(0.125, 0.0)):
    r = np.asarray(rois, np.uint16).reshape(-1, 4, 1, 1)
    return run_op("QuantizedRoiPool_8_v2", [q, r, i4(bidx), float(oh), float(ow), sh, sw, 0, *rng, f4(so)])


def test_pool_by_hand():
    # RoI codes (0,0)-(24,24) * 0.125 -> cells 0..3, size 4; 2x2 output: spans [0,2) and [2,4):
    # maxima of [[0,1],[4,5]] = 5, then 7, 13, 15.  The range passes through.
    q, mn, mx = pool(MAP, [0, 0, 24, 24], [0], 2, 2, rng=(-1.0, 2.0))
    assert q.shape == (1, 2, 2, 1) and q.ravel().tolist() == [5, 7, 13, 15]
    assert (mn.item(), mx.item()) == (-1.0, 2.0)
    # A scale of 2 divides the coordinates: (0,0)-(48,48) * 0.125 / 2 = 0..3, the same cells.
    q, _, _ = pool(MAP, [0, 0, 48, 48], [0], 2, 2, 2.0, 2.0)
    assert q.ravel().tolist() == [5, 7, 13, 15]
    # Scale/offset (1, 8): codes 9..10 -> 1..2; size 2 in 3 cells: spans [0,1), [0,2), [1,2) from 1 ->
    # rows/cols {1}, {1,2}, {2}.  Row 1 cols: 5, 6, 6; row {1,2}: 9, 10, 10; row 2: 9, 10, 10.
    q, _, _ = pool(MAP, [9, 9, 10, 10], [0], 3, 3, so=(1.0, 8.0))
    assert q.reshape(3, 3).tolist() == [[5, 6, 6], [9, 10, 10], [9, 10, 10]]
    # A RoI past the map (starting at cell 6 of 4) has only empty spans: the code of 0.0 of [-1, 2] is 85.
    q, _, _ = pool(MAP, [48, 48, 56, 56], [0], 2, 2, rng=(-1.0, 2.0))
    assert q.ravel().tolist() == [85] * 4


def reference_pool(fq, x1, y1, x2, y2, oh, ow, zero_code):
    h, w, d = fq.shape
    rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
    out = np.zeros((oh, ow, d), np.uint8)
    for i in range(oh):
        for j in range(ow):
            hs = min(max(math.floor(i * rh / oh) + y1, 0), h)
            he = min(max(math.ceil((i + 1) * rh / oh) + y1, 0), h)
            ws = min(max(math.floor(j * rw / ow) + x1, 0), w)
            we = min(max(math.ceil((j + 1) * rw / ow) + x1, 0), w)
            out[i, j] = zero_code if he <= hs or we <= ws else fq[hs:he, ws:we].max(axis=(0, 1))
    return out


def test_pool_against_loop_reference():
    rng = np.random.default_rng(9)
    q = rng.integers(0, 256, (2, 7, 6, 3), dtype=np.uint8)
    rois = rng.integers(0, 70, (5, 4)).astype(np.uint16)
    bidx = [0, 1, 1, 0, 1]
    out, _, _ = pool(q, rois, bidx, 3, 2, 1.5, 0.75, (-1.0, 2.0), (0.25, 3.0))
    for r in range(5):
        real = (rois[r].astype(np.float64) - 3.0) * 0.25
        x1, y1, x2, y2 = (math.trunc(v + math.copysign(0.5, v)) for v in real / [0.75, 1.5, 0.75, 1.5])
        assert np.array_equal(out[r], reference_pool(q[bidx[r]], x1, y1, x2, y2, 3, 2, 85))


def test_errors():
    assert_op_error("QuantizedRoiAlignV2_8", [MAP, 0.0, 1.0, np.uint16([[[[0, 0, 8, 8]]]]), i4([1]), 1, 1,
                                              1.0, 1.0, 1, 1, 0.0, 1.0], "batch index 1")
    assert_op_error("QuantizedRoiAlignV2_8", [MAP, 0.0, 1.0, np.uint16([[[[0, 0, 40, 8]]]]), i4([0]), 1, 1,
                                              1.0, 1.0, 1, 1, 0.0, 1.0], "inside the 4x4")
    assert_op_error("QuantizedRoiAlignV2_8", [MAP, 0.0, 1.0, np.uint16([[[[0, 0, 8, 8]]]]), i4([0]), 0, 1,
                                              1.0, 1.0, 1, 1, 0.0, 1.0], "pooled height")
    assert_op_error("QuantizedRoiAlignV2_8", [MAP, 0.0, 1.0, np.uint16([[[[0, 0, 8, 8]]]]), i4([0]), 1, 1,
                                              1.0, 1.0, 1, 1, 0.5, 1.0], "does not contain 0")
    r = np.uint16([0, 0, 8, 8]).reshape(1, 4, 1, 1)
    base = [MAP, r, i4([0]), 2.0, 2.0, 1.0, 1.0, 0, 0.0, 1.0, f4([0.125, 0.0])]
    assert_op_error("QuantizedRoiPool_8_v2", base[:3] + [1.5] + base[4:], "whole number")
    assert_op_error("QuantizedRoiPool_8_v2", base[:10] + [f4([0.125])], "scale/offset")
    assert_op_error("QuantizedRoiPool_8_v2", base[:2] + [i4([3])] + base[3:], "batch split")
