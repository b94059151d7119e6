"""ResizeBilinear_f and ImageTransform_f (hexagon_nn_ops.txt)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

IMG = np.array([[0, 1], [2, 3]], np.float32).reshape(1, 2, 2, 1)


def test_resize_by_hand():
    # 2x2 [[0,1],[2,3]] to 3x3 without align_corners: src = y * 2/3 -> 0, 2/3, 4/3.
    #   rows: y0 = 0 (f 0), y0 = 0 (f 2/3), y0 = 1 (f 1/3, y1 clipped to 1); columns alike.
    #   (0,1): 0 + 2/3 * (1 - 0) = 2/3;  (1,0): 2/3 * 2 = 4/3;
    #   (1,1): weights (1/3*1/3, 1/3*2/3, 2/3*1/3, 2/3*2/3) on (0,1,2,3) = (0 + 2 + 4 + 12)/9 = 2
    (y,) = run_op("ResizeBilinear_f", [IMG, [3, 3]])
    assert y.dtype == np.float32 and y.shape == (1, 3, 3, 1)
    want = [[0, 2 / 3, 1], [4 / 3, 2, 7 / 3], [2, 8 / 3, 3]]
    assert y.ravel().tolist() == pytest.approx(np.ravel(want).tolist(), abs=1e-7)
    # align_corners: src = y * 1/2 -> 0, 0.5, 1: the centre is the mean 1.5, corners are the inputs.
    (y,) = run_op("ResizeBilinear_f", [IMG, [3, 3], 1])
    assert y[0, :, :, 0].tolist() == [[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]


def resize_reference(x: np.ndarray, h_out: int, w_out: int, align: bool) -> np.ndarray:
    """Per-pixel bilinear with TensorFlow's legacy coordinates, in float64."""
    b, h, w, d = x.shape
    out = np.zeros((b, h_out, w_out, d))

    def src(i: int, n_in: int, n_out: int) -> float:
        return i * (n_in - 1) / (n_out - 1) if align and n_out > 1 else i * n_in / n_out

    for i in range(h_out):
        for j in range(w_out):
            sy, sx = src(i, h, h_out), src(j, w, w_out)
            y0, x0 = math.floor(sy), math.floor(sx)
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            fy, fx = sy - y0, sx - x0
            out[:, i, j] = ((1 - fy) * ((1 - fx) * x[:, y0, x0] + fx * x[:, y0, x1])
                            + fy * ((1 - fx) * x[:, y1, x0] + fx * x[:, y1, x1]))
    return out


@pytest.mark.parametrize("size, align", [((7, 5), False), ((7, 5), True), ((2, 3), False), ((1, 1), True)])
def test_resize_matches_reference(size, align):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 4, 3, 2)).astype(np.float32)
    (y,) = run_op("ResizeBilinear_f", [x, list(size), int(align)])
    assert np.allclose(y, resize_reference(x.astype(np.float64), *size, align), rtol=1e-6, atol=1e-6)


def test_image_transform_by_hand():
    row = np.array([2, 4, 6], np.float32).reshape(1, 1, 3, 1)
    # Identity [1,0,0, 0,1,0, 0,0]: the image itself.
    ident = np.array([1, 0, 0, 0, 1, 0, 0, 0], np.float32)
    assert run_op("ImageTransform_f", [row, ident])[0].ravel().tolist() == [2, 4, 6]
    # a2 = 0.5: x' = x + 0.5, the mean of two neighbours; the last pixel's right neighbour is outside (0):
    #   [(2+4)/2, (4+6)/2, (6+0)/2] = [3, 5, 3]
    shift = np.array([1, 0, 0.5, 0, 1, 0, 0, 0], np.float32)
    assert run_op("ImageTransform_f", [row, shift])[0].ravel().tolist() == [3, 5, 3]
    # Projective c0 = 1: k = x + 1, x' = x / (x + 1) -> 0, 1/2, 2/3 on [0, 6, 12]:
    #   [0, 0 + 6/2, 0 + (2/3)*6] = [0, 3, 4]
    proj = np.array([1, 0, 0, 0, 1, 0, 1, 0], np.float32)
    ramp = np.array([0, 6, 12], np.float32).reshape(1, 1, 3, 1)
    assert run_op("ImageTransform_f", [ramp, proj])[0].ravel().tolist() == pytest.approx([0, 3, 4], abs=1e-6)
    # k = 0 gives 0: c0 = -1 makes k = 1 - x zero at x = 1.
    zero_k = np.array([1, 0, 0, 0, 1, 0, -1, 0], np.float32)
    assert run_op("ImageTransform_f", [row, zero_k])[0].ravel()[1] == 0


def transform_reference(img: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per-pixel projective sampling; coordinates in float32 in the documented order, weights in float64."""
    b, h, w, d = img.shape
    out = np.zeros(img.shape)
    f = np.float32
    for n in range(b):
        a0, a1, a2, b0, b1, b2, c0, c1 = (f(v) for v in t[8 * n:8 * n + 8])
        for y in range(h):
            for x in range(w):
                k = c0 * f(x) + c1 * f(y) + f(1)
                if k == 0:
                    continue
                xs, ys = (a0 * f(x) + a1 * f(y) + a2) / k, (b0 * f(x) + b1 * f(y) + b2) / k
                x0, y0 = math.floor(xs), math.floor(ys)
                fx, fy = float(xs - f(x0)), float(ys - f(y0))
                acc = np.zeros(d)
                for yy, wy in ((y0, 1 - fy), (y0 + 1, fy)):
                    for xx, wx in ((x0, 1 - fx), (x0 + 1, fx)):
                        if 0 <= yy < h and 0 <= xx < w:
                            acc += wy * wx * img[n, yy, xx].astype(np.float64)
                out[n, y, x] = acc
    return out


def test_image_transform_matches_reference():
    rng = np.random.default_rng(13)
    img = rng.standard_normal((2, 5, 6, 3)).astype(np.float32)
    t = np.array([0.9, 0.2, 0.7, -0.1, 1.1, -0.4, 0.01, -0.02,
                  1.3, -0.3, -1.5, 0.25, 0.8, 0.6, -0.03, 0.05], np.float32)
    (y,) = run_op("ImageTransform_f", [img, t.reshape(1, 1, 2, 8)])
    assert y.shape == img.shape and y.dtype == np.float32
    assert np.allclose(y, transform_reference(img, t), rtol=1e-6, atol=1e-6)


def test_errors():
    assert_op_error("ResizeBilinear_f", [IMG, [0, 3]], "must be >= 1")
    assert_op_error("ResizeBilinear_f", [IMG, [3, 3, 3]], "expected 2")
    assert_op_error("ResizeBilinear_f", [IMG, [3, 3], math.nan], "align_corners is NaN")
    assert_op_error("ResizeBilinear_f", [np.zeros((1, 0, 2, 1), np.float32), [3, 3]], "no pixels")
    two = np.zeros((2, 2, 2, 1), np.float32)
    assert_op_error("ImageTransform_f", [two, np.ones(8, np.float32)], "need 16 (8 per image)")
    bad = np.array([1, 0, 0, 0, 1, 0, 0, np.inf], np.float32)
    assert_op_error("ImageTransform_f", [IMG, bad], "non-finite")
