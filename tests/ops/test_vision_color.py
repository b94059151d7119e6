"""RgbaToRgb_8, Argb32ToRgb_8, Nv21ToRgb_8 (op texts; NV21 formula in ops/kernels/vision_color.py)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, u8


def test_rgba_argb_by_hand():
    px = u8([10, 20, 30, 40], (1, 1, 1, 4))
    # RGBA (10,20,30,40): mode 0 keeps R,G,B = 10,20,30; mode 1 gives B,G,R = 30,20,10.
    for mode, want in ((0, [10, 20, 30]), (1, [30, 20, 10])):
        q, mn, mx = run_op("RgbaToRgb_8", [px, mode, -1.0, 2.0])
        assert q.dtype == np.uint8 and q.shape == (1, 1, 1, 3) and q.ravel().tolist() == want
        assert (mn.item(), mx.item()) == (-1.0, 2.0)
    # ARGB (A=10, R=20, G=30, B=40): mode 0 -> 20,30,40; mode 1 -> 40,30,20.
    for mode, want in ((0, [20, 30, 40]), (1, [40, 30, 20])):
        q, mn, mx = run_op("Argb32ToRgb_8", [px, mode, 0.0, 255.0])
        assert q.ravel().tolist() == want and (mn.item(), mx.item()) == (0.0, 255.0)


def test_rgba_argb_against_indexing():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (2, 3, 5, 4), dtype=np.uint8)
    assert np.array_equal(run_op("RgbaToRgb_8", [x, 0, 0.0, 1.0])[0], x[..., :3])
    assert np.array_equal(run_op("RgbaToRgb_8", [x, 1, 0.0, 1.0])[0], x[..., 2::-1])
    assert np.array_equal(run_op("Argb32ToRgb_8", [x, 0, 0.0, 1.0])[0], x[..., 1:])
    assert np.array_equal(run_op("Argb32ToRgb_8", [x, 1, 0.0, 1.0])[0], x[..., :0:-1])


def test_nv21_by_hand():
    # 2x2 picture: Y rows [16, 235], [128, 81]; one V,U pair (200, 50) -> D = U-128 = -78, E = V-128 = 72.
    # Y=16:  R = 4096 + 359*72 + 128 = 30072 >> 8 = 117; G = 4096 + 88*78 - 183*72 + 128 = -2088 -> 0;
    #        B = 4096 - 454*78 + 128 = -31188 -> 0
    # Y=235: R = 60160 + 25848 + 128 = 86136 -> clip 65535 >> 8 = 255;
    #        G = 60160 + 6864 - 13176 + 128 = 53976 >> 8 = 210;
    #        B = 60160 - 35412 + 128 = 24876 >> 8 = 97
    # Y=128: R = 32768 + 25976 = 58744 >> 8 = 229; G = 26584 >> 8 = 103; B = -2516 -> 0
    # Y=81:  R = 20736 + 25976 = 46712 >> 8 = 182; G = 14552 >> 8 = 56; B = -14548 -> 0
    nv21 = u8([16, 235, 128, 81, 200, 50], (1, 3, 2, 1))
    q, mn, mx = run_op("Nv21ToRgb_8", [nv21, 0])
    assert q.shape == (1, 2, 2, 3) and q.dtype == np.uint8
    assert q.reshape(4, 3).tolist() == [[117, 0, 0], [255, 210, 97], [229, 103, 0], [182, 56, 0]]
    assert (mn.item(), mx.item()) == (0.0, 255.0)
    q, _, _ = run_op("Nv21ToRgb_8", [nv21, 1])
    assert q.reshape(4, 3).tolist() == [[0, 0, 117], [97, 210, 255], [0, 103, 229], [0, 56, 182]]


def reference_nv21(img: np.ndarray, h: int, w: int) -> np.ndarray:
    """Plain loops over pixels: Y plane then interleaved V,U rows (one pair per 2x2 block)."""
    out = np.zeros((h, w, 3), np.uint8)
    for y in range(h):
        for x in range(w):
            c = int(img[y, x])
            v = int(img[h + y // 2, 2 * (x // 2)]) - 128
            u = int(img[h + y // 2, 2 * (x // 2) + 1]) - 128
            vals = (256 * c + 359 * v + 128, 256 * c - 88 * u - 183 * v + 128, 256 * c + 454 * u + 128)
            out[y, x] = [min(max(t, 0), 65535) // 256 for t in vals]
    return out


def test_nv21_against_loops():
    rng = np.random.default_rng(5)
    h, w = 4, 6
    x = rng.integers(0, 256, (2, h * 3 // 2, w, 1), dtype=np.uint8)
    q, _, _ = run_op("Nv21ToRgb_8", [x, 0])
    for b in range(2):
        assert np.array_equal(q[b], reference_nv21(x[b, :, :, 0], h, w))
    assert np.array_equal(run_op("Nv21ToRgb_8", [x, 1])[0], q[..., ::-1])


@pytest.mark.parametrize("op", ["RgbaToRgb_8", "Argb32ToRgb_8"])
def test_four_to_three_errors(op):
    assert_op_error(op, [np.zeros((1, 1, 1, 3), np.uint8), 0, 0.0, 1.0], "depth must be 4")
    assert_op_error(op, [np.zeros((1, 1, 1, 4), np.uint8), 2, 0.0, 1.0], "mode is 2")
    assert_op_error(op, [np.zeros((1, 1, 1, 4), np.uint8), 0, 1.0, 2.0], "does not contain 0")


def test_nv21_errors():
    assert_op_error("Nv21ToRgb_8", [np.zeros((1, 3, 3, 1), np.uint8), 0], "NV21 image")
    assert_op_error("Nv21ToRgb_8", [np.zeros((1, 4, 2, 1), np.uint8), 0], "multiple of 3")
    assert_op_error("Nv21ToRgb_8", [np.zeros((1, 3, 2, 2), np.uint8), 0], "NV21 image")
    assert_op_error("Nv21ToRgb_8", [np.zeros((1, 3, 2, 1), np.uint8), 5], "mode is 5")
