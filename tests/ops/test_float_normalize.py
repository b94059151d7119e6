"""Softmax_f and LRN_f (hexagon_nn_ops.txt; float64 then rounded to float32)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.ops.registry import KernelContext, get_kernel
from hexnn_import.testing.opcheck import assert_op_error


def test_softmax_by_hand():
    # Row [0, ln 2, ln 5]: exp = [1, 2, 5], sum 8 -> [0.125, 0.25, 0.625].
    # Row [7, 7, 7]: equal values -> 1/3 each. One softmax per [b, h, w, :] row.
    x = np.array([[0, math.log(2), math.log(5)], [7, 7, 7]], np.float32).reshape(1, 1, 2, 3)
    (y,) = run_op("Softmax_f", [x])
    assert y.dtype == np.float32 and y.shape == (1, 1, 2, 3)
    assert y[0, 0, 0].tolist() == pytest.approx([0.125, 0.25, 0.625], abs=1e-7)
    assert y[0, 0, 1].tolist() == pytest.approx([1 / 3] * 3, abs=1e-7)
    # Large values do not overflow: [1000, 1000] -> [0.5, 0.5]
    assert run_op("Softmax_f", [np.full((1, 1, 1, 2), 1000, np.float32)])[0].ravel().tolist() == [0.5, 0.5]


def test_softmax_beta_by_hand():
    # beta = 2 on [0, ln 2]: exp(2x) = [1, 4] -> [0.2, 0.8]. The catalog lists one input today, so the
    # optional beta slot is exercised on the kernel directly.
    kernel = get_kernel("Softmax_f")
    ctx = KernelContext(node="n7", op="Softmax_f")
    x = np.array([0, math.log(2)], np.float32).reshape(1, 1, 1, 2)
    (y,) = kernel.compute(ctx, x, np.full((1, 1, 1, 1), 2.0, np.float32))
    assert y.ravel().tolist() == pytest.approx([0.2, 0.8], abs=1e-7)
    with pytest.raises(OpError, match=r"node n7 \(Softmax_f\): beta is nan"):
        kernel.compute(ctx, x, np.full((1, 1, 1, 1), np.nan, np.float32))


def test_softmax_matches_reference():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2, 3, 4, 6)) * 5).astype(np.float32)
    (y,) = run_op("Softmax_f", [x])
    e = np.exp(x.astype(np.float64))
    want = e / e.sum(axis=-1, keepdims=True)
    assert np.allclose(y, want, rtol=1e-6, atol=1e-8)
    assert np.allclose(y.sum(axis=-1), 1.0, atol=1e-6)


def lrn_reference(x: np.ndarray, wh: int, ww: int, wd: int, bias: float, alpha: float, beta: float) -> np.ndarray:
    """Per-element loops: window i - (n-1)//2 .. i + n//2 on each axis, clipped to the tensor."""
    x = x.astype(np.float64)
    b, h, w, d = x.shape
    out = np.zeros_like(x)
    for n in range(b):
        for i in range(h):
            for j in range(w):
                for c in range(d):
                    win = x[n, max(0, i - (wh - 1) // 2):i + wh // 2 + 1, max(0, j - (ww - 1) // 2):j + ww // 2 + 1,
                            max(0, c - (wd - 1) // 2):c + wd // 2 + 1]
                    out[n, i, j, c] = x[n, i, j, c] / (bias + alpha / (wh * ww * wd) * np.sum(win ** 2)) ** beta
    return out


def test_lrn_by_hand():
    # x = [1, 2, 2] along depth, window [1,1,1,3] (n = 3, one tap each side), bias 1, alpha 3, beta 0.5:
    #   window sums of squares: [1+4, 1+4+4, 4+4] = [5, 9, 8]
    #   base = 1 + (3/3) * sum = [6, 10, 9];  out = x / sqrt(base) = [1/sqrt(6), 2/sqrt(10), 2/3]
    x = np.array([1, 2, 2], np.float32).reshape(1, 1, 1, 3)
    (y,) = run_op("LRN_f", [x, np.zeros((1, 1, 1, 3), np.float32), 1.0, 3.0, 0.5])
    assert y.dtype == np.float32 and y.shape == (1, 1, 1, 3)
    assert y.ravel().tolist() == pytest.approx([1 / math.sqrt(6), 2 / math.sqrt(10), 2 / 3], abs=1e-7)
    # bias 0: a zero element gives 0 (not 0 * inf): x = [0, 0], alpha 1, beta 1 -> [0, 0]
    (y,) = run_op("LRN_f", [np.zeros((1, 1, 1, 2), np.float32), np.zeros((1, 1, 1, 3)), 0.0, 1.0, 1.0])
    assert y.ravel().tolist() == [0, 0]


@pytest.mark.parametrize("window", [(1, 1, 5), (3, 3, 1), (1, 2, 2)])
def test_lrn_matches_reference(window):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    wh, ww, wd = window
    (y,) = run_op("LRN_f", [x, np.zeros((1, wh, ww, wd), np.int32), 2.0, 1e-2, 0.75])
    assert np.allclose(y, lrn_reference(x, wh, ww, wd, 2.0, 1e-2, 0.75), rtol=1e-6, atol=1e-7)


def test_errors():
    x = np.ones((1, 1, 1, 3), np.float32)
    win = np.zeros((1, 1, 1, 3), np.float32)
    assert_op_error("LRN_f", [x, win, -1.0, 1.0, 1.0], "bias -1.0 and alpha 1.0")
    assert_op_error("LRN_f", [x, win, 0.0, 0.0, 1.0], "not both 0")
    assert_op_error("LRN_f", [x, win, 1.0, 1.0, math.nan], "beta is nan")
    assert_op_error("LRN_f", [x, np.zeros((2, 1, 1, 3)), 1.0, 1.0, 1.0], "window shape [2, 1, 1, 3]")
    assert_op_error("Softmax_f", [x, 2.0], "got 2 inputs")
    assert_op_error("Softmax_f", [np.array(["s"])], "expected float data")
