"""ArgMax_ftoInt32 and TopK_f (hexagon_nn_ops.txt)."""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error


def test_argmax_by_hand():
    # [[3, 1], [3, 5]] of shape [1,1,2,2]
    x = np.array([[3, 1], [3, 5]], np.float32).reshape(1, 1, 2, 2)
    # Along depth (3 or -1): row [3,1] -> 0, row [3,5] -> 1; the axis keeps size 1.
    (y,) = run_op("ArgMax_ftoInt32", [x, 3])
    assert y.dtype == np.int32 and y.shape == (1, 1, 2, 1) and y.ravel().tolist() == [0, 1]
    assert run_op("ArgMax_ftoInt32", [x, -1])[0].ravel().tolist() == [0, 1]
    # Along width (2): column [3,3] -> 0 (first of equals), column [1,5] -> 1.
    (y,) = run_op("ArgMax_ftoInt32", [x, 2])
    assert y.shape == (1, 1, 1, 2) and y.ravel().tolist() == [0, 1]
    # -Inf and +Inf order as usual.
    z = np.array([-math.inf, math.inf, 2], np.float32).reshape(1, 1, 1, 3)
    assert run_op("ArgMax_ftoInt32", [z, 3])[0].item() == 1


def test_topk_by_hand():
    # [3, 1, 3, 5], k = 3: values descending [5, 3, 3]; indices [3, 0, 2] (equal 3s: lower index first)
    x = np.array([3, 1, 3, 5], np.float32).reshape(1, 1, 1, 4)
    vals, idx = run_op("TopK_f", [x, 3])
    assert vals.dtype == np.float32 and idx.dtype == np.int32
    assert vals.ravel().tolist() == [5, 3, 3] and idx.ravel().tolist() == [3, 0, 2]
    # k larger than depth: the depth stays 4, all sorted: [5, 3, 3, 1], [3, 0, 2, 1]
    vals, idx = run_op("TopK_f", [x, 10])
    assert vals.shape == (1, 1, 1, 4) and idx.ravel().tolist() == [3, 0, 2, 1]


def test_match_reference():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4, 7)).astype(np.float32)
    for axis in range(-4, 4):
        (y,) = run_op("ArgMax_ftoInt32", [x, axis])
        assert np.array_equal(y, np.argmax(x, axis=axis, keepdims=True))
    vals, idx = run_op("TopK_f", [x, 4])
    want_idx = np.argsort(-x, axis=3, kind="stable")[..., :4]
    assert np.array_equal(idx, want_idx)
    assert np.array_equal(vals, np.take_along_axis(x, want_idx, axis=3))
    assert np.all(np.diff(vals, axis=3) <= 0)


def test_errors():
    nan = np.array([1, np.nan], np.float32).reshape(1, 1, 1, 2)
    assert_op_error("ArgMax_ftoInt32", [nan, 3], "contains NaN")
    assert_op_error("TopK_f", [nan, 1], "contains NaN")
    ok = np.ones((1, 1, 1, 2), np.float32)
    assert_op_error("ArgMax_ftoInt32", [ok, 4], "axis 4 is outside -4..3")
    assert_op_error("ArgMax_ftoInt32", [np.ones((1, 1, 0, 2), np.float32), 2], "axis 2 is empty")
    assert_op_error("TopK_f", [ok, 0], "k = 0")
    assert_op_error("TopK_f", [ok, np.array([1, 2])], "k has 2 elements")
