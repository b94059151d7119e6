"""Add_f, Sub_f, Mul_f, Minimum_f, Maximum_f, AddN_f, Select_f (hexagon_nn_ops.txt; IEEE float32)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

EPS = 2.0 ** -24  # half an ulp of 1.0 in float32


def f32(values, shape) -> np.ndarray:
    return np.asarray(values, dtype=np.float32).reshape(shape)


def test_binary_ops_by_hand():
    # A [1,1,2,3] = [[0,1,2],[3,4,5]], B [1,1,2,1] = [[1],[2]] broadcast along depth:
    #   A + B = [[1,2,3],[5,6,7]];  A - B = [[-1,0,1],[1,2,3]];  A * B = [[0,1,2],[6,8,10]]
    a = f32(range(6), (1, 1, 2, 3))
    b = f32([1, 2], (1, 1, 2, 1))
    (y,) = run_op("Add_f", [a, b])
    assert y.dtype == np.float32 and y.shape == (1, 1, 2, 3)
    assert y.ravel().tolist() == [1, 2, 3, 5, 6, 7]
    assert run_op("Sub_f", [a, b])[0].ravel().tolist() == [-1, 0, 1, 1, 2, 3]
    assert run_op("Mul_f", [a, b])[0].ravel().tolist() == [0, 1, 2, 6, 8, 10]
    # Both sides broadcast: [1,1,1,2] * [1,1,2,1] -> [1,1,2,2] = [[1.5*2, -2*2], [1.5*4, -2*4]]
    (y,) = run_op("Mul_f", [f32([1.5, -2], (1, 1, 1, 2)), f32([2, 4], (1, 1, 2, 1))])
    assert y.shape == (1, 1, 2, 2) and y.ravel().tolist() == [3, -4, 6, -8]


def test_float32_rounding_by_hand():
    # The ulp of 1.0 in float32 is 2**-23. 1 + 2**-24 is exactly half way between 1 and 1 + 2**-23:
    # ties go to the even mantissa, 1.0. 1 + 3 * 2**-24 lies half way between 1 + 2**-23 (odd) and
    # 1 + 2**-22 (even): it rounds to 1 + 2**-22. float64 arithmetic would keep both exactly.
    (y,) = run_op("Add_f", [f32([1.0, 1.0], (1, 1, 1, 2)), f32([EPS, 3 * EPS], (1, 1, 1, 2))])
    assert y.ravel().tolist() == [1.0, 1.0 + 2.0 ** -22]
    # Overflow is IEEE: 3e38 + 3e38 = +Inf; Inf - Inf = NaN.
    (y,) = run_op("Add_f", [f32([3e38], (1, 1, 1, 1)), f32([3e38], (1, 1, 1, 1))])
    assert y.item() == np.inf
    assert np.isnan(run_op("Sub_f", [f32([np.inf], (1, 1, 1, 1)), f32([np.inf], (1, 1, 1, 1))])[0].item())


def test_minimum_maximum_by_hand():
    # fminf / fmaxf: a NaN operand loses to a number; NaN only when both are NaN.
    a = f32([1, np.nan, -np.inf, np.nan, -0.5], (1, 1, 1, 5))
    b = f32([2, 3, np.nan, np.nan, -0.25], (1, 1, 1, 5))
    mn = run_op("Minimum_f", [a, b])[0].ravel()
    mx = run_op("Maximum_f", [a, b])[0].ravel()
    assert mn[[0, 1, 2, 4]].tolist() == [1, 3, -np.inf, -0.5] and np.isnan(mn[3])
    assert mx[[0, 1, 2, 4]].tolist() == [2, 3, -np.inf, -0.25] and np.isnan(mx[3])


@pytest.mark.parametrize("op, ref", [("Add_f", np.add), ("Sub_f", np.subtract), ("Mul_f", np.multiply),
                                     ("Minimum_f", np.minimum), ("Maximum_f", np.maximum)])
def test_binary_ops_match_float64_reference(op, ref):
    # A float64 sum / difference / product of two float32 values is exact (53 >= 2*24 bits), so
    # rounding it once to float32 gives the correctly rounded float32 result C computes.
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((2, 3, 1, 5)) * 100).astype(np.float32)
    b = (rng.standard_normal((1, 3, 4, 1)) * 100).astype(np.float32)
    (y,) = run_op(op, [a, b])
    want = ref(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    assert y.shape == (2, 3, 4, 5) and y.dtype == np.float32
    assert np.array_equal(y, want)


def test_binary_errors():
    assert_op_error("Add_f", [np.zeros((1, 1, 2, 3), np.float32), np.zeros((1, 1, 3, 3), np.float32)],
                    "do not broadcast", "axis 2")
    assert_op_error("Mul_f", [np.zeros((1, 1, 1, 1, 2), np.float32), np.zeros((1, 1, 1, 1), np.float32)],
                    "more than 4 dimensions")
    assert_op_error("Sub_f", [np.array(["a"]), np.zeros((1, 1, 1, 1), np.float32)], "expected float data")
    assert_op_error("Add_f", [np.zeros((1, 1, 1, 1), np.float32)], "got 1 inputs")


def test_addn_by_hand():
    # [1,2] + [10,20] + [100,200] = [111, 222]
    xs = [f32([1, 2], (1, 1, 1, 2)), f32([10, 20], (1, 1, 1, 2)), f32([100, 200], (1, 1, 1, 2))]
    (y,) = run_op("AddN_f", xs)
    assert y.dtype == np.float32 and y.ravel().tolist() == [111, 222]
    # The text's order, Add_f(Add_f(in0, in1), in2), each rounded to float32:
    #   (1 + 2**-24) -> 1.0 (tie to even), then 1 + 2**-24 -> 1.0 again.
    # A float64 sum would keep 1 + 2**-23, a float32 number: the order is visible.
    (y,) = run_op("AddN_f", [f32([1.0], (1, 1, 1, 1)), f32([EPS], (1, 1, 1, 1)), f32([EPS], (1, 1, 1, 1))])
    assert y.item() == 1.0
    # One input passes unchanged.
    assert run_op("AddN_f", [xs[0]])[0].ravel().tolist() == [1, 2]


def test_addn_matches_reference():
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((2, 3, 4, 5)).astype(np.float32) for _ in range(5)]
    (y,) = run_op("AddN_f", xs)
    want = np.sum([x.astype(np.float64) for x in xs], axis=0)
    assert np.allclose(y, want, rtol=0, atol=1e-5)


def test_addn_errors():
    assert_op_error("AddN_f", [np.zeros((1, 1, 1, 2), np.float32), np.zeros((1, 1, 1, 1), np.float32)],
                    "one shape", "input 1 [1, 1, 1, 1]")


def test_select_by_hand():
    # condition true where != 0: 1 -> x, 0 -> y, -0.0 -> y, NaN -> x (C truth of a float)
    cond = f32([1, 0, -0.0, np.nan], (1, 1, 1, 4))
    x = f32([1, 2, 3, 4], (1, 1, 1, 4))
    y = f32([10, 20, 30, 40], (1, 1, 1, 4))
    (out,) = run_op("Select_f", [cond, x, y])
    assert out.dtype == np.float32 and out.ravel().tolist() == [1, 20, 30, 4]


def test_select_matches_reference():
    rng = np.random.default_rng(3)
    cond = (rng.random((2, 3, 4, 5)) > 0.5).astype(np.float32)
    x, y = rng.standard_normal((2, 2, 3, 4, 5)).astype(np.float32)
    assert np.array_equal(run_op("Select_f", [cond, x, y])[0], np.where(cond.astype(bool), x, y))


def test_select_errors():
    assert_op_error("Select_f", [np.zeros((1, 1, 1, 2), np.float32), np.zeros((1, 1, 1, 2), np.float32),
                                 np.zeros((1, 1, 1, 1), np.float32)], "shapes differ", "y [1, 1, 1, 1]")
