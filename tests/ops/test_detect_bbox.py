"""Box_Decoder_f, AxisAlignedBBoxTransform_f / _q8q16 (op texts; formulas in ops/kernels/detect_bbox.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, i4

LN2 = math.log(2.0)


def test_box_decoder_by_hand():
    # Anchor (ymin, xmin, ymax, xmax) = (0, 0, 10, 20): ha = 10, wa = 20, centre (5, 10).
    # Deltas (1, -0.5, 0, 5 ln2) with scales (10, 10, 5, 5): yc = 0.1*10 + 5 = 6, xc = -0.05*20 + 10 = 9,
    # h = exp(0)*10 = 10, w = exp(ln2)*20 = 40 -> (6-5, 9-20, 6+5, 9+20) = (1, -11, 11, 29).
    (out,) = run_op("Box_Decoder_f", [f4([1, -0.5, 0, 5 * LN2], (1, 1, 1, 4)), f4([0, 0, 10, 20], (1, 1, 1, 4)),
                                      f4([10, 10, 5, 5])])
    assert out.dtype == np.float32 and out.shape == (1, 1, 1, 4)
    # nnlib's fast_exp is within 8.34e-5 of exp (include/float_mathops.h): the corners within 1e-4 of the size
    np.testing.assert_allclose(out.ravel(), [1, -11, 11, 29], rtol=0, atol=1e-4 * 40)


def _fast_exp_by_hand(x: float) -> float:
    """include/float_mathops.h fast_exp in Python ints (the float32 sum 12102203 x + 2**30 - 2**23 rounded by
    numpy once, as one fmaf: exact in float64 for these x)."""
    i = int(np.float32(12102203.0 * x + 1065353216.0))
    m = (i >> 7) & 0xFFFF
    i += ((((((1277 * m) >> 14) + 14825) * m >> 14) - 79749) * m >> 11) - 626
    return float(np.int32(i).view(np.float32))


def test_box_decoder_fast_exp_bits():
    # exp(0): i = 0x3F800000, m = 0, so the bits are 1.0f's less 626: the size is 10 * that, the centre exact.
    one = float(np.uint32(0x3F800000 - 626).view(np.float32))
    (out,) = run_op("Box_Decoder_f", [f4([0, 0, 0, 4], (1, 1, 1, 4)), f4([0, 0, 10, 20], (1, 1, 1, 4)),
                                      f4([1, 1, 1, 8])])
    half_h = np.float32(np.float32(one) * np.float32(10)) * np.float32(0.5)
    half_w = np.float32(np.float32(_fast_exp_by_hand(0.5)) * np.float32(20)) * np.float32(0.5)
    want = np.float32([5 - half_h, 10 - half_w, 5 + half_h, 10 + half_w])
    assert out.ravel().tobytes() == want.tobytes()
    assert abs(_fast_exp_by_hand(0.5) / math.exp(0.5) - 1) < 8.34e-5


def test_box_decoder_against_loops():
    rng = np.random.default_rng(1)
    d = rng.normal(size=(2, 1, 5, 4)).astype(np.float32)
    a = rng.uniform(0, 1, (1, 1, 5, 4)).astype(np.float32)
    a[..., 2:] += a[..., :2]
    s = np.float32([10, 10, 5, 5])
    (out,) = run_op("Box_Decoder_f", [d, a, f4(s)])       # one anchor set shared by both batches
    for b in range(2):
        for i in range(5):
            y0, x0, y1, x1 = (float(v) for v in a[0, 0, i])
            ty, tx, th, tw = (float(v) for v in d[b, 0, i])
            yc = ty / 10 * (y1 - y0) + (y0 + y1) / 2
            xc = tx / 10 * (x1 - x0) + (x0 + x1) / 2
            h, w = math.exp(th / 5) * (y1 - y0), math.exp(tw / 5) * (x1 - x0)
            want = [yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2]
            np.testing.assert_allclose(out[b, 0, i], want, rtol=1e-6, atol=1e-4 * max(h, w))  # fast_exp


def test_axis_aligned_f_by_hand():
    # Box (10, 20, 30, 60): w 20, h 40, centre (20, 40).  Class 0 deltas (0.5, -0.25, ln2, 0):
    # xc = 20 + 10 = 30, yc = 40 - 10 = 30, w = 40, h = 40 -> (10, 10, 50, 50); image (h 45, w 100) clips y2 to 45.
    # Class 1 deltas 0 -> (10, 20, 30, 60) -> y2 clipped to 45.
    (out,) = run_op("AxisAlignedBBoxTransform_f", [f4([10, 20, 30, 60], (1, 1, 1, 4)),
                                                   f4([0.5, -0.25, LN2, 0, 0, 0, 0, 0], (1, 1, 1, 8)),
                                                   i4([0]), f4([45, 100], (1, 1, 1, 2))])
    assert out.shape == (1, 1, 1, 8)
    np.testing.assert_allclose(out.ravel(), [10, 10, 50, 45, 10, 20, 30, 45], rtol=1e-6)


def test_axis_aligned_q8q16_by_hand():
    # Box codes (80, 160, 240, 480) * 0.125 = (10, 20, 30, 60).  Deltas over [-2, 1.984375]: step 1/64, zero 128;
    # codes (160, 112, 128, 160) = (0.5, -0.25, 0, 0.5).  xc = 20 + 0.5*20 = 30, yc = 40 - 0.25*40 = 30,
    # w = 20, h = 40*e^0.5 = 65.949 -> x 20..40, y -2.97..62.97 -> clipped to 0..45 (image info codes
    # (360, 800) over [0, 8191.875]: step 0.125 -> height 45, width 100).  Codes: (160, 0, 320, 360).
    boxes = np.uint16([80, 160, 240, 480]).reshape(1, 1, 1, 4)
    deltas = np.uint8([160, 112, 128, 160]).reshape(1, 1, 1, 4)
    info = np.uint16([360, 800]).reshape(1, 1, 1, 2)
    (out,) = run_op("AxisAlignedBBoxTransform_q8q16", [boxes, deltas, i4([0]), info, -2.0, 1.984375,
                                                      0.0, 8191.875])
    assert out.dtype == np.uint16 and out.ravel().tolist() == [160, 0, 320, 360]
    # The same image size in codes of another range (step 1: [0, 65535]) gives the same boxes.
    info2 = np.uint16([45, 100]).reshape(1, 1, 1, 2)
    (out2,) = run_op("AxisAlignedBBoxTransform_q8q16", [boxes, deltas, i4([0]), info2,
                                                       -2.0, 1.984375, 0.0, 65535.0])
    assert out2.ravel().tolist() == [160, 0, 320, 360]


def reference_transform(box, d, height, width):
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    xc, yc = (x1 + x2) / 2 + d[0] * w, (y1 + y2) / 2 + d[1] * h
    nw, nh = math.exp(d[2]) * w, math.exp(d[3]) * h
    corners = [xc - nw / 2, yc - nh / 2, xc + nw / 2, yc + nh / 2]
    limits = [width, height, width, height]
    return [min(max(c, 0.0), lim) for c, lim in zip(corners, limits)]


def test_axis_aligned_against_loops():
    rng = np.random.default_rng(3)
    r, c = 6, 3
    boxes = rng.uniform(0, 50, (r, 4))
    boxes[:, 2:] += boxes[:, :2]
    deltas = rng.normal(0, 0.5, (r, 4 * c))
    bidx = rng.integers(0, 2, r)
    info = np.array([[60.0, 80.0], [70.0, 40.0]])
    (out,) = run_op("AxisAlignedBBoxTransform_f", [f4(boxes, (1, 1, r, 4)), f4(deltas, (1, 1, r, 4 * c)),
                                                   i4(bidx), f4(info, (1, 1, 2, 2))])
    b32, d32 = boxes.astype(np.float32).astype(float), deltas.astype(np.float32).astype(float)
    for i in range(r):
        for k in range(c):
            want = reference_transform(b32[i], d32[i, 4 * k:4 * k + 4], *info[bidx[i]])
            np.testing.assert_allclose(out[0, 0, i, 4 * k:4 * k + 4], want, rtol=1e-5, atol=1e-5)
    # q8q16: the same arithmetic on dequantized values, rounded half away to 0.125 codes.
    codes = rng.integers(0, 400, (r, 4)).astype(np.uint16)
    codes[:, 2:] += codes[:, :2]
    dq = rng.integers(0, 256, (r, 4 * c)).astype(np.uint8)
    iq = np.uint16([[480, 640], [560, 320]])
    (outq,) = run_op("AxisAlignedBBoxTransform_q8q16", [codes.reshape(1, 1, r, 4), dq.reshape(1, 1, r, -1), i4(bidx),
                                                       iq.reshape(1, 1, 2, 2), -1.0, 1.0, 0.0, 8191.875])
    step = 2.0 / 255
    zero = round(1.0 / step)
    for i in range(r):
        for k in range(c):
            d = [(int(v) - zero) * step for v in dq[i, 4 * k:4 * k + 4]]
            want = reference_transform(codes[i] * 0.125, d, iq[bidx[i], 0] * 0.125, iq[bidx[i], 1] * 0.125)
            assert np.all(np.abs(outq[0, 0, i, 4 * k:4 * k + 4] - np.array(want) / 0.125) <= 0.5 + 1e-6)


@pytest.mark.parametrize("boxes, deltas, bidx, fragment", [
    ([30, 20, 10, 60], [0] * 4, [0], "x1 must not exceed x2"),
    ([10, 20, 30, 60], [0] * 4, [1], "batch index 1"),
    ([10, 20, 30, 60], [0] * 6, [0], "4 * classes"),
])
def test_axis_aligned_errors(boxes, deltas, bidx, fragment):
    assert_op_error("AxisAlignedBBoxTransform_f", [f4(boxes, (1, 1, 1, 4)), f4(deltas, (1, 1, 1, len(deltas))),
                                                   i4(bidx), f4([45, 100], (1, 1, 1, 2))], fragment)


def test_decoder_errors():
    d = f4([0, 0, 0, 0], (1, 1, 1, 4))
    assert_op_error("Box_Decoder_f", [d, f4([0, 0, 1, 1, 0, 0, 1, 1], (1, 1, 2, 4)), f4([1, 1, 1, 1])], "anchor boxes")
    assert_op_error("Box_Decoder_f", [d, d, f4([1, 0, 1, 1])], "scale factors")
    assert_op_error("Box_Decoder_f", [f4([0, 0, 0], (1, 1, 1, 3)), d, f4([1, 1, 1, 1])], "depth must be 4")
    q_in = [np.uint16([[[[0, 0, 8, 8]]]]), np.uint8([[[[0, 0, 0, 0]]]]), i4([0]), np.uint16([[[[8, 8]]]])]
    assert_op_error("AxisAlignedBBoxTransform_q8q16", q_in + [0.5, 1.0, 0.0, 1.0], "does not contain 0")
