"""HeatmapMaxKP_f and QuantizedHeatmapMaxKP_8 (op texts; peak solve in ops/kernels/vision_heatmap.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.quant import adjust_range
from hexnn_import.testing.opcheck import assert_op_error, f4


def rect(vals, dtype=np.float32):
    return np.asarray(vals, dtype=dtype).reshape(1, 1, -1, 4)


def test_float_by_hand():
    # Peak 1.0 at (1,1) of a 3x3 map, 0.5 to its right: window [[0,0,0],[0,1,.5],[0,0,0]].
    # B = (0.5 - 0, 0 - 0) = (0.5, 0); A00 = 2 - 0.5 = 1.5, A11 = 2, A01 = 0, det = 3 (accepted).
    # dx = A11*B0 / (2 det) = 1/6, dy = 0; peak = 1 + (dx*B0)/4 = 1 + 1/48.
    # Rectangle (0,0)-(30,30): x = 30/3 * (1 + 0.5 + 1/6) = 16.667, y = 10 * 1.5 = 15.
    x = np.zeros((1, 3, 3, 1), np.float32)
    x[0, 1, 1, 0], x[0, 1, 2, 0] = 1.0, 0.5
    pk, xy = run_op("HeatmapMaxKP_f", [x, rect([0, 0, 30, 30]), 0])
    assert pk.shape == (1, 1, 1, 1) and xy.shape == (1, 1, 1, 2)
    np.testing.assert_allclose(pk.ravel(), [1 + 1 / 48], rtol=1e-6)
    np.testing.assert_allclose(xy.ravel(), [10 * (1.5 + 1 / 6), 15.0], rtol=1e-6)


def test_float_corner_peak_mirrors_the_window():
    # 2x2 map [[4,1],[1,0]]: the peak is at (0,0); the missing row/column above/left mirror row/col 1,
    # so the window is [[0,1,0],[1,4,1],[0,1,0]]: B = 0, offsets 0, peak 4.
    # Rectangle (0,0)-(10,20): x = 10/2 * 0.5 = 2.5, y = 20/2 * 0.5 = 5.  NCHW gives the same.
    hm = np.array([[4, 1], [1, 0]], np.float32)
    pk, xy = run_op("HeatmapMaxKP_f", [hm.reshape(1, 2, 2, 1), rect([0, 0, 10, 20]), 0])
    assert pk.item() == 4.0 and xy.ravel().tolist() == [2.5, 5.0]
    pk, xy = run_op("HeatmapMaxKP_f", [hm.reshape(1, 1, 2, 2), rect([0, 0, 10, 20]), 1])
    assert pk.item() == 4.0 and xy.ravel().tolist() == [2.5, 5.0]


def test_float_refused_and_clipped_solves_by_hand():
    # Refused: window [[0,.9,0],[.9,1,1],[0,1,1]] (first max at (1,1)): A00 = A11 = 0.1, A01 = -0.25*(0 - (0 - 1))
    # = -0.25, det = 0.01 - 0.0625 < 0 -> no offset, peak = f11 = 1; x = y = 10 * 1.5 = 15.
    hm = np.array([[0, .9, 0], [.9, 1, 1], [0, 1, 1]], np.float32).reshape(1, 3, 3, 1)
    pk, xy = run_op("HeatmapMaxKP_f", [hm, rect([0, 0, 30, 30]), 0])
    assert pk.item() == 1.0 and xy.ravel().tolist() == [15.0, 15.0]
    # Clipped: window [[.76,.8,0],[.8,1,1],[0,1,0]]: B = (0.2, 0.2), A00 = A11 = 0.2,
    # A01 = -0.25*((.76 - 0) - (0 - 0)) = -0.19, det = 0.04 - 0.0361 = 0.0039;
    # dxV = dyV = 0.2*0.2 + 0.19*0.2 = 0.078 > 1.5*2*det = 0.0117 -> dx = dy = 1.5 (clipped);
    # peak = 1 + 0.5*2*1.5*(0.2 - 1.5*0.2 + 1.5*0.19) = 1 + 1.5*0.185 = 1.2775; x = y = 10 * (1.5 + 1.5) = 30.
    hm = np.array([[.76, .8, 0], [.8, 1, 1], [0, 1, 0]], np.float32).reshape(1, 3, 3, 1)
    pk, xy = run_op("HeatmapMaxKP_f", [hm, rect([0, 0, 30, 30]), 0])
    np.testing.assert_allclose(pk.ravel(), [1.2775], rtol=1e-5)
    np.testing.assert_allclose(xy.ravel(), [30.0, 30.0], rtol=1e-6)


def test_quantized_by_hand():
    # Codes [[0,0,0],[0,255,128],[0,0,0]] over [0, 1]: values 1 and 128/255 = 0.50196.
    # B0 = 0.50196, A00 = 2 - 0.50196 = 1.49804, A11 = 2, det = 2.99608; dx = 2*0.50196/(2*2.99608) = 0.16754;
    # peak = 1 + 0.16754*0.50196/4 = 1.021025.  Output range: [0, max(0, 1.021025, 2/255)] (already zero-exact),
    # the peak is its top: code 255.  Rectangle codes (0,0)-(240,240): x = 80 * (1.5 + 0.16754) = 133.40 -> 133,
    # y = 80 * 1.5 = 120.
    q = np.zeros((1, 3, 3, 1), np.uint8)
    q[0, 1, 1, 0], q[0, 1, 2, 0] = 255, 128
    pk, mn, mx, xy = run_op("QuantizedHeatmapMaxKP_8", [q, 0.0, 1.0, rect([0, 0, 240, 240], np.uint16), 0])
    assert pk.ravel().tolist() == [255] and mn.item() == 0.0
    assert mx.item() == pytest.approx(1.021025, abs=1e-5)
    assert xy.dtype == np.uint16 and xy.ravel().tolist() == [133, 120]


def reference_peak(hm: np.ndarray, box, w_len_min=1.0):
    """Loop reference for one [H, W] map: first argmax, mirrored window, the documented solve."""
    h, w = hm.shape
    k = int(np.argmax(hm))
    iy, ix = divmod(k, w)
    rows = [iy - 1 if iy > 0 else iy + 1, iy, iy + 1 if iy + 1 < h else iy - 1]
    cols = [ix - 1 if ix > 0 else ix + 1, ix, ix + 1 if ix + 1 < w else ix - 1]
    f = [[float(hm[r, c]) for c in cols] for r in rows]
    b0, b1 = f[1][2] - f[1][0], f[2][1] - f[0][1]
    a00, a11 = 2 * f[1][1] - f[1][2] - f[1][0], 2 * f[1][1] - f[2][1] - f[0][1]
    a01 = -0.25 * ((f[0][0] - f[0][2]) - (f[2][0] - f[2][2]))
    det = a00 * a11 - a01 * a01
    dx = dy = 0.0
    peak = f[1][1]
    if a00 * a11 > 0 and det >= 1e-5 + 1e-5 * a00 * a11:
        dxv, dyv = a11 * b0 - a01 * b1, a00 * b1 - a01 * b0
        if max(abs(dxv), abs(dyv)) <= 3.0 * det:
            dx, dy = dxv / (2 * det), dyv / (2 * det)
            peak += (dx * b0 + dy * b1) / 4
        else:
            s = 1.5 / max(abs(dxv), abs(dyv))
            dx, dy = dxv * s, dyv * s
            peak += 0.5 * (dx * (b0 - dx * a00 - dy * a01) + dy * (b1 - dx * a01 - dy * a11))
    x0, y0, x1, y1 = (float(v) for v in box)
    xs = max(x1 - x0, w_len_min) / w * (ix + 0.5 + dx)
    ys = max(y1 - y0, w_len_min) / h * (iy + 0.5 + dy)
    return peak, x0, xs, y0, ys


def test_float_against_loop_reference():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(3, 5, 6, 4)).astype(np.float32)
    boxes = rng.uniform(0, 50, (3, 4)).astype(np.float32)
    boxes[:, 2:] += boxes[:, :2]
    pk, xy = run_op("HeatmapMaxKP_f", [x, boxes.reshape(3, 1, 1, 4), 0])
    assert pk.shape == (3, 1, 1, 4) and xy.shape == (3, 1, 4, 2)
    for b in range(3):
        for m in range(4):
            peak, x0, xs, y0, ys = reference_peak(x[b, :, :, m], boxes[b])
            np.testing.assert_allclose(pk[b, 0, 0, m], peak, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(xy[b, 0, m], [x0 + xs, y0 + ys], rtol=1e-6)


def test_quantized_against_loop_reference():
    rng = np.random.default_rng(6)
    q = rng.integers(0, 256, (2, 4, 5, 3), dtype=np.uint8)
    boxes = np.array([[8, 16, 400, 200], [100, 100, 100, 300]], np.uint16)   # second: zero width -> 1
    mn, mx = -1.0, 2.0
    pk, omn, omx, xy = run_op("QuantizedHeatmapMaxKP_8", [q.transpose(0, 3, 1, 2).copy(), mn, mx,
                                                         boxes.reshape(1, 1, 2, 4), 1])
    step = (np.float64(np.float32(mx)) - np.float64(np.float32(mn))) / 255
    zero = round(-np.float64(np.float32(mn)) / step)
    refs = [[reference_peak((q[b, :, :, m].astype(np.float64) - zero) * step, boxes[b]) for m in range(3)]
            for b in range(2)]
    peaks = [r[0] for row in refs for r in row]
    lo, hi = adjust_range(min(0.0, min(peaks)), max(0.0, max(peaks), min(0.0, min(peaks)) + 2 * step))
    assert (omn.item(), omx.item()) == pytest.approx((lo, hi), rel=1e-6)
    ostep = (hi - lo) / 255
    for b in range(2):
        for m in range(3):
            peak, x0, xs, y0, ys = refs[b][m]
            assert abs(int(pk[0, 0, b, m]) - (peak - lo) / ostep) <= 0.5 + 1e-6
            assert xy[0, b, m].tolist() == [int(x0 + math.floor(xs + 0.5)), int(y0 + math.floor(ys + 0.5))]


def test_errors():
    x = np.zeros((1, 1, 4, 2), np.float32)
    assert_op_error("HeatmapMaxKP_f", [x, rect([0, 0, 1, 1]), 0], "at least 2x2")
    assert_op_error("HeatmapMaxKP_f", [np.zeros((2, 2, 2, 1), np.float32), rect([0, 0, 1, 1]), 0], "rectangles")
    assert_op_error("HeatmapMaxKP_f", [np.full((1, 2, 2, 1), np.nan, np.float32), rect([0, 0, 1, 1]), 0], "NaN")
    q = np.zeros((1, 2, 2, 1), np.uint8)
    assert_op_error("QuantizedHeatmapMaxKP_8", [q, 1.0, 2.0, rect([0, 0, 1, 1], np.uint16), 0], "does not contain 0")
    assert_op_error("QuantizedHeatmapMaxKP_8", [q, 0.0, 1.0, f4([0, 0, -1, 1], (1, 1, 1, 4)), 0], "code range")
