"""MaxPool_f, AvgPool_f, L2Pool_f (hexagon_nn_ops.txt; SEMANTICS.md §3 geometry; float32 C loops)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error as check_op_error, geometry

X4 = np.array([[1, 9, 2, 3],
               [4, 5, 6, 7],
               [8, 0, 10, 11],
               [12, 13, 14, 15]], np.float32).reshape(1, 4, 4, 1)
X3 = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)


def win(fh: int, fw: int) -> np.ndarray:
    """A "shape" input: only its shape [1, fh, fw, 1] is read."""
    return np.zeros((1, fh, fw, 1), np.int32)


def pool(op: str, x: np.ndarray, fh: int, fw: int, sh: int, sw: int, padding: int) -> np.ndarray:
    (y,) = run_op(op, [x, win(fh, fw), win(sh, sw)], padding=padding)
    assert y.dtype == np.float32
    return y


def assert_op_error(op: str, inputs: list, padding: int, *fragments: str) -> None:
    """``opcheck.assert_op_error`` at a padding mode (given positionally here)."""
    check_op_error(op, inputs, *fragments, padding=padding)

def test_maxpool_by_hand():
    # 3x3 window, stride 2 on 4x4, SAME: out = ceil(4/2) = 2, pad = (2-1)*2 + 3 - 4 = 1, after.
    # Windows rows/cols {0-2, 2-3}: (0,0) {1,9,2,4,5,6,8,0,10} -> 10; (0,1) {2,3,6,7,10,11} -> 11;
    # (1,0) {8,0,10,12,13,14} -> 14; (1,1) {10,11,14,15} -> 15
    assert pool("MaxPool_f", X4, 3, 3, 2, 2, PAD_SAME).ravel().tolist() == [10, 11, 14, 15]
    # SAME_CAFFE puts the pad before: windows {0-1, 1-3}: 9, 9, 13, 15
    assert pool("MaxPool_f", X4, 3, 3, 2, 2, PAD_SAME_CAFFE).ravel().tolist() == [9, 9, 13, 15]
    # Negative values: padding never wins (only in-bounds taps count): max of [-3, -1] is -1.
    neg = np.array([-3, -1], np.float32).reshape(1, 1, 2, 1)
    assert pool("MaxPool_f", neg, 1, 3, 1, 1, PAD_SAME).ravel().tolist() == [-1, -1]


def test_maxpool_nan_by_hand():
    # C's `if (x > max) max = x` from -Inf: a NaN tap never wins; a window of NaNs gives -Inf.
    x = np.array([np.nan, 2, np.nan, np.nan], np.float32).reshape(1, 1, 4, 1)
    assert pool("MaxPool_f", x, 1, 2, 1, 2, PAD_VALID).ravel().tolist() == [2, -math.inf]


def test_avgpool_by_hand():
    # 2x2 window, stride 2 on 3x3 (0..8), SAME: out 2, pad 1 after. In-bounds taps only:
    #   (0,0) {0,1,3,4} / 4 = 2;  (0,1) {2,5} / 2 = 3.5;  (1,0) {6,7} / 2 = 6.5;  (1,1) {8} / 1 = 8
    assert pool("AvgPool_f", X3, 2, 2, 2, 2, PAD_SAME).ravel().tolist() == [2, 3.5, 6.5, 8]
    # float32 accumulation in tap order: 1 + 2**-24 -> 1 (tie to even), + 2**-24 -> 1, + 0 -> 1; / 4 = 0.25.
    # (A float64 sum would give (1 + 2**-23) / 4, a different float32.)
    e = 2.0 ** -24
    x = np.array([1, e, e, 0], np.float32).reshape(1, 2, 2, 1)
    assert pool("AvgPool_f", x, 2, 2, 2, 2, PAD_VALID).item() == 0.25


def test_l2pool_by_hand():
    # VALID 2x2 on [[3,4],[0,0]]: sqrt((9 + 16 + 0 + 0) / 4) = sqrt(6.25) = 2.5
    x = np.array([3, 4, 0, 0], np.float32).reshape(1, 2, 2, 1)
    assert pool("L2Pool_f", x, 2, 2, 1, 1, PAD_VALID).ravel().tolist() == [2.5]
    # SAME 2x2 stride 2 on 3x3 (0..8): (1,1) has one tap, 8 -> sqrt(64/1) = 8; (0,1) {2,5}: sqrt(29/2)
    y = pool("L2Pool_f", X3, 2, 2, 2, 2, PAD_SAME).ravel()
    assert y[3] == 8 and y[1] == pytest.approx(math.sqrt(14.5), abs=1e-6)


def reference(x: np.ndarray, fh: int, fw: int, sh: int, sw: int, padding: int) -> dict[str, np.ndarray]:
    """Max, mean and RMS over each window's in-bounds taps, by explicit loops in float64."""
    b, h, w, d = x.shape
    oh, top, _ = geometry(h, fh, sh, padding)
    ow, left, _ = geometry(w, fw, sw, padding)
    res = {k: np.zeros((b, oh, ow, d)) for k in ("MaxPool_f", "AvgPool_f", "L2Pool_f")}
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * sh - top, j * sw - left
            taps = x[:, max(0, y0):y0 + fh, max(0, x0):x0 + fw].astype(np.float64)
            res["MaxPool_f"][:, i, j] = taps.max(axis=(1, 2))
            res["AvgPool_f"][:, i, j] = taps.mean(axis=(1, 2))
            res["L2Pool_f"][:, i, j] = np.sqrt((taps ** 2).mean(axis=(1, 2)))
    return res


@pytest.mark.parametrize("fh, fw, sh, sw, padding", [(3, 3, 2, 2, PAD_SAME), (2, 3, 1, 2, PAD_VALID),
                                                     (3, 2, 2, 1, PAD_SAME_CAFFE), (1, 1, 1, 1, PAD_SAME)])
def test_pools_match_reference(fh, fw, sh, sw, padding):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    want = reference(x, fh, fw, sh, sw, padding)
    for op, ref in want.items():
        y = pool(op, x, fh, fw, sh, sw, padding)
        assert y.shape == ref.shape
        if op == "MaxPool_f":
            assert np.array_equal(y, ref.astype(np.float32))
        else:
            assert np.allclose(y, ref, rtol=1e-6, atol=1e-6)


def test_errors():
    assert_op_error("MaxPool_f", [X4, win(2, 2), win(2, 2)], PAD_NA, "padding 0 is not SAME")
    assert_op_error("AvgPool_f", [X4, np.zeros((1, 2, 2, 2)), win(2, 2)], PAD_SAME, "batch and depth axes")
    assert_op_error("L2Pool_f", [X4, win(5, 5), win(1, 1)], PAD_VALID, "smaller than the window")
    assert_op_error("MaxPool_f", [X4, win(2, 2), np.zeros((1, 0, 1, 1))], PAD_SAME, "must all be >= 1")
    assert_op_error("AvgPool_f", [np.zeros((1, 0, 2, 1), np.float32), win(1, 1), win(1, 1)], PAD_SAME,
                    "no elements to pool")
