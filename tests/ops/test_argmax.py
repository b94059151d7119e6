"""ArgMax_8toInt32, ArgMax_8, ArgMin_8, TopK_8 (nnlib's op_argmax.c / op_topk_q.c; ArgMin_8 by its op text).

ArgMax ties give the first index; TopK_8 ties give the larger index first (the C's histogram)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

# Shape [1, 2, 2, 3]: (h0,w0) [5, 9, 9]  (h0,w1) [7, 7, 1]  (h1,w0) [0, 0, 0]  (h1,w1) [3, 8, 2]
X = np.array([[[5, 9, 9], [7, 7, 1]], [[0, 0, 0], [3, 8, 2]]], np.uint8).reshape(1, 2, 2, 3)




def test_argmax_argmin_by_hand():
    # Along depth: [5,9,9] max 9 first at 1;  [7,7,1] max 7 first at 0;  [0,0,0] -> 0;  [3,8,2] -> 1
    #              min: 5 at 0;  1 at 2;  0 first at 0;  2 at 2
    for axis in (3, -1):
        (q,) = run_op("ArgMax_8toInt32", [X, axis, -1.0, 1.0])
        assert q.dtype == np.int32 and q.shape == (1, 2, 2, 1)
        assert q.ravel().tolist() == [1, 0, 0, 1]
        (q,) = run_op("ArgMin_8", [X, axis, -1.0, 1.0])
        assert q.dtype == np.int32 and q.ravel().tolist() == [0, 2, 0, 2]
    # Along height (axis 1): w0 compares [5,9,9] with [0,0,0] -> [0,0,0]; w1 [7,7,1] with [3,8,2] -> [0,1,1]
    #                        min: w0 -> [1,1,1]; w1 -> [1,0,0]
    (q,) = run_op("ArgMax_8toInt32", [X, 1, -1.0, 1.0])
    assert q.shape == (1, 1, 2, 3) and q.ravel().tolist() == [0, 0, 0, 0, 1, 1]
    (q,) = run_op("ArgMin_8", [X, -3, -1.0, 1.0])
    assert q.shape == (1, 1, 2, 3) and q.ravel().tolist() == [1, 1, 1, 1, 0, 0]
    # Along batch (size 1): every index is 0.
    (q,) = run_op("ArgMax_8toInt32", [X, 0, -1.0, 1.0])
    assert q.shape == (1, 2, 2, 3) and not q.any()


def test_argmax_8_by_hand():
    # Same indices as ArgMax_8toInt32, as quint8 codes over [0, 255] (step 1, zero 0: code = index).
    q, mn, mx = run_op("ArgMax_8", [X, 3, -1.0, 1.0])
    assert q.dtype == np.uint8 and q.ravel().tolist() == [1, 0, 0, 1]
    assert (mn.item(), mx.item()) == (0.0, 255.0)
    # A depth of 255 (< 256, the text's limit) works; its last index is 254.
    x = np.zeros((1, 1, 1, 255), np.uint8)
    x[0, 0, 0, 254] = 1
    q, _, _ = run_op("ArgMax_8", [x, -1, 0.0, 1.0])
    assert q.item() == 254


def test_topk_by_hand():
    # op_topk_q.c topk_8_execute: a histogram filled scanning each row from the END, emitted from code 255
    # down, so equal codes come larger index first. Depth [3, 9, 3, 7, 9], k = 3: 9 at 4 and 1, then 7 at 3
    # (nnlib's C gives the same through the harness row "move TopK_8").
    x = np.array([3, 9, 3, 7, 9], np.uint8).reshape(1, 1, 1, 5)
    v, i, mn, mx = run_op("TopK_8", [x, 3, -2.0, 6.0])
    assert v.dtype == np.uint8 and i.dtype == np.int32 and v.shape == i.shape == (1, 1, 1, 3)
    assert v.ravel().tolist() == [9, 9, 7] and i.ravel().tolist() == [4, 1, 3]
    assert (mn.item(), mx.item()) == (-2.0, 6.0)  # range passes through
    # k = 10 > depth 5: depth unchanged, everything sorted: 9@4 9@1 7@3 3@2 3@0.
    v, i, _, _ = run_op("TopK_8", [x, 10, -2.0, 6.0])
    assert v.ravel().tolist() == [9, 9, 7, 3, 3] and i.ravel().tolist() == [4, 1, 3, 2, 0]
    # k = 0: empty outputs [b, h, w, 0], range copied (the C's too)
    v, i, mn, mx = run_op("TopK_8", [np.zeros((2, 3, 1, 4), np.uint8), 0, -1.0, 1.0])
    assert v.shape == i.shape == (2, 3, 1, 0) and (mn.item(), mx.item()) == (-1.0, 1.0)
    # min > max is copied unchecked; codes all equal: indices 3, 2
    v, i, mn, mx = run_op("TopK_8", [np.zeros((1, 1, 1, 4), np.uint8), 2, 1.0, -1.0])
    assert v.ravel().tolist() == [0, 0] and i.ravel().tolist() == [3, 2]
    assert (mn.item(), mx.item()) == (1.0, -1.0)


def test_against_numpy_and_sorting():
    rng = np.random.default_rng(21)
    x = rng.integers(0, 8, size=(2, 3, 4, 6)).astype(np.uint8)  # few values: many ties
    for axis in range(-4, 4):
        (q,) = run_op("ArgMax_8toInt32", [x, axis, -1.0, 1.0])
        assert q.tolist() == np.expand_dims(np.argmax(x, axis=axis), axis).tolist()
        (q,) = run_op("ArgMin_8", [x, axis, -1.0, 1.0])
        assert q.tolist() == np.expand_dims(np.argmin(x, axis=axis), axis).tolist()
        q, _, _ = run_op("ArgMax_8", [x, axis, -1.0, 1.0])
        assert q.tolist() == np.expand_dims(np.argmax(x, axis=axis), axis).tolist()
    for k in (1, 4, 6, 9):
        v, i, _, _ = run_op("TopK_8", [x, k, -1.0, 1.0])
        for b, h, w in np.ndindex(2, 3, 4):
            row = x[b, h, w].tolist()
            want = sorted(range(6), key=lambda j: (-row[j], -j))[:k]   # ties: larger index first
            assert i[b, h, w].tolist() == want
            assert v[b, h, w].tolist() == [row[j] for j in want]


@pytest.mark.parametrize("op", ["ArgMax_8toInt32", "ArgMax_8", "ArgMin_8"])
def test_arg_errors(op):
    # nn_axis.h handle_negative_axes: "axis is out of range" in the C too
    assert_op_error(op, [X, 4, -1.0, 1.0], "axis 4 is outside -4..3")
    assert_op_error(op, [X, -5, -1.0, 1.0], "axis -5")
    assert_op_error(op, [X.reshape(4, 3), 1, -1.0, 1.0], "expected 4-D")


def test_argmin_8_text_rules():
    # ArgMin_8 is HVX-only in nnlib (not modelled): the op text's checks stay
    assert_op_error("ArgMin_8", [X, 3, 0.5, 1.0], "does not contain 0")
    assert_op_error("ArgMin_8", [X, np.array([1, 2], np.int32), -1.0, 1.0], "axis has 2 elements")
    assert_op_error("ArgMin_8", [np.zeros((1, 1, 2, 0), np.uint8), 3, -1.0, 1.0], "is empty")


@pytest.mark.parametrize("op", ["ArgMax_8toInt32", "ArgMax_8"])
def test_argmax_c_input_rules(op):
    # op_argmax.c never reads the input range; the axis is element 0 of its tensor (values from the C)
    q = run_op(op, [X, 3, 0.5, 1.0])[0]
    assert q.ravel().tolist() == [1, 0, 0, 1]
    q = run_op(op, [X, np.array([1, 2], np.int32), -1.0, 1.0])[0]
    assert q.shape == (1, 1, 2, 3) and q.ravel().tolist() == [0, 0, 0, 0, 1, 1]
    # an empty input: the C divides by zero; the engine refuses
    assert_op_error(op, [np.zeros((1, 1, 2, 0), np.uint8), 3, -1.0, 1.0], "with no elements")


def test_argmax_8toint32_axis_of_128():
    # op_argmax.c runs its HVX row kernels when the axis has stride 1 (every dim after it is 1);
    # horizontal_argmax128_hvx masks lanes with Q6_Q_vsetq_R(dim), which keeps dim mod 128 lanes, so an
    # axis of exactly 128 masks every lane and gives 0 (nnlib's C, through the harness, gives the same).
    for n in (127, 128, 129):
        for shape, axis in (((2, 1, 1, n), 3), ((2, 1, n, 1), 2), ((2, n, 1, 1), 1)):
            x = np.zeros(shape, np.uint8).reshape(2, n)
            x[0, 5] = 250
            x[1, n - 1] = 250
            (q,) = run_op("ArgMax_8toInt32", [x.reshape(shape), axis, -1.0, 1.0])
            assert q.ravel().tolist() == ([0, 0] if n == 128 else [5, n - 1])
    # not stride 1 (depth 2 after the axis): the scalar loop, first index of the maximum
    x = np.zeros((1, 1, 128, 2), np.uint8)
    x[0, 0, 7, 0], x[0, 0, 127, 1] = 1, 3
    (q,) = run_op("ArgMax_8toInt32", [x, 2, -1.0, 1.0])
    assert q.ravel().tolist() == [7, 127]


def test_argmax_8_dimension_limit():
    assert_op_error("ArgMax_8", [np.zeros((1, 1, 1, 256), np.uint8), 3, 0.0, 1.0], "fewer than 256")


def test_topk_errors():
    x = np.zeros((1, 1, 1, 4), np.uint8)
    assert_op_error("TopK_8", [x, -2, -1.0, 1.0], "k = -2")   # the C: "out too small"
    assert_op_error("TopK_8", [x.astype(np.int32) - 1, 2, -1.0, 1.0], "outside the code range")
