"""Softmax_uint8 (op text; float64 softmax of dequantized codes, float32 out)."""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, u8

LN2 = math.log(2.0)


def test_softmax_by_hand():
    # Range [0, 255*ln2]: zero 0, step ln2, so codes 0,1,2 are 0, ln2, 2ln2 and exp gives 1, 2, 4:
    # softmax = 1/7, 2/7, 4/7.  With beta = 2: 1, 4, 16 -> 1/21, 4/21, 16/21.
    q = u8([0, 1, 2], (1, 1, 1, 3))
    (y,) = run_op("Softmax_uint8", [q, 0.0, 255 * LN2])
    assert y.dtype == np.float32 and y.shape == (1, 1, 1, 3)
    np.testing.assert_allclose(y.ravel(), [1 / 7, 2 / 7, 4 / 7], rtol=1e-6)
    (y,) = run_op("Softmax_uint8", [q, 0.0, 255 * LN2, 2.0])
    np.testing.assert_allclose(y.ravel(), [1 / 21, 4 / 21, 16 / 21], rtol=1e-6)
    # Equal codes share equally, whatever the range: 4 x 0.25.
    (y,) = run_op("Softmax_uint8", [u8([9, 9, 9, 9], (1, 1, 1, 4)), -3.0, 5.0])
    np.testing.assert_allclose(y.ravel(), [0.25] * 4, rtol=1e-7)


def test_softmax_against_formula():
    rng = np.random.default_rng(11)
    q = rng.integers(0, 256, (2, 3, 4, 7), dtype=np.uint8)
    mn, mx, beta = -4.0, 6.0, 0.7
    (y,) = run_op("Softmax_uint8", [q, mn, mx, beta])
    step = (np.float64(np.float32(mx)) - np.float64(np.float32(mn))) / 255
    zero = round(-np.float32(mn) / step)
    x = (q.astype(np.float64) - zero) * step
    for idx in np.ndindex(q.shape[:3]):
        e = [math.exp(beta * v) for v in x[idx]]
        np.testing.assert_allclose(y[idx], [v / sum(e) for v in e], rtol=2e-6)
    np.testing.assert_allclose(y.sum(axis=3), 1.0, rtol=1e-6)


def test_softmax_errors():
    q = np.zeros((1, 1, 1, 3), np.uint8)
    assert_op_error("Softmax_uint8", [q, 1.0, 2.0], "does not contain 0")
    assert_op_error("Softmax_uint8", [q, 0.0, 1.0, float("nan")], "beta")
    assert_op_error("Softmax_uint8", [np.zeros((1, 1, 1, 0), np.uint8), 0.0, 1.0], "non-empty depth")
