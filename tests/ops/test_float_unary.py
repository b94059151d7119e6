"""Neg_f, Abs_f, Ceil_f, Floor_f, Round_f, Relu_f, ReluX_f, Clamp_f, Tanh_f, Sigmoid_f (hexagon_nn_ops.txt)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

X = np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 3.7], np.float32).reshape(1, 1, 2, 3)


def out(op: str, *inputs) -> list[float]:
    (y,) = run_op(op, list(inputs))
    assert y.dtype == np.float32 and y.shape == np.shape(inputs[0])
    return y.ravel().tolist()


def test_exact_ops_by_hand():
    f37 = float(np.float32(3.7))  # the float32 nearest 3.7
    assert out("Neg_f", X) == [2.5, 0.5, -0.5, -1.5, -2.5, -f37]
    assert out("Abs_f", X) == [2.5, 0.5, 0.5, 1.5, 2.5, f37]
    # ceil(-2.5) = -2, ceil(-0.5) = -0.0, ceil(0.5) = 1, ceil(1.5) = 2, ceil(2.5) = 3, ceil(3.7) = 4
    ceil = out("Ceil_f", X)
    assert ceil == [-2, 0, 1, 2, 3, 4] and math.copysign(1, ceil[1]) == -1
    assert out("Floor_f", X) == [-3, -1, 0, 1, 2, 3]
    # Ties to even: -2.5 -> -2, -0.5 -> -0.0, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2; 3.7 -> 4
    assert out("Round_f", X) == [-2, 0, 0, 2, 2, 4]
    # Relu: negatives to 0; NaN stays NaN
    relu = out("Relu_f", np.array([-1, 0, 2, np.nan], np.float32).reshape(1, 1, 1, 4))
    assert relu[:3] == [0, 0, 2] and math.isnan(relu[3])


def test_relux_and_clamp_by_hand():
    x = np.array([-1, 3, 7, np.inf], np.float32).reshape(1, 1, 1, 4)
    # min(max(0, x), 6): -1 -> 0, 3 -> 3, 7 -> 6, Inf -> 6
    assert out("ReluX_f", x, 6.0) == [0, 3, 6, 6]
    # An infinite limit is plain relu.
    assert out("ReluX_f", x, math.inf) == [0, 3, 7, math.inf]
    # min(max(x, -1), 1) on [-5, 0.5, 5]
    c = np.array([-5, 0.5, 5], np.float32).reshape(1, 1, 1, 3)
    assert out("Clamp_f", c, -1.0, 1.0) == [-1, 0.5, 1]


def test_tanh_sigmoid_by_hand():
    # tanh(0) = 0; tanh(ln 3) = (9 - 1) / (9 + 1) = 0.8
    # sigmoid(0) = 0.5; sigmoid(ln 3) = 1 / (1 + 1/3) = 0.75; sigmoid(-ln 3) = 0.25
    ln3 = math.log(3)
    x = np.array([0, ln3, -ln3], np.float32).reshape(1, 1, 1, 3)
    t = out("Tanh_f", x)
    assert t[0] == 0 and t[1] == pytest.approx(0.8, abs=1e-7) and t[2] == pytest.approx(-0.8, abs=1e-7)
    s = out("Sigmoid_f", x)
    assert s[0] == 0.5 and s[1] == pytest.approx(0.75, abs=1e-7) and s[2] == pytest.approx(0.25, abs=1e-7)
    # Far negative: the exact value 1 / (1 + e**100) = 3.72e-44 is a float32 subnormal, not 0.
    assert out("Sigmoid_f", np.full((1, 1, 1, 1), -100, np.float32))[0] == pytest.approx(math.exp(-100), rel=0.1)


def test_nonlinear_match_reference():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((2, 3, 4, 5)) * 4).astype(np.float32)
    x64 = x.astype(np.float64)
    (t,) = run_op("Tanh_f", [x])
    assert np.allclose(t, np.tanh(x64), rtol=1e-6, atol=1e-7)
    (s,) = run_op("Sigmoid_f", [x])
    assert np.allclose(s, (1 + np.tanh(x64 / 2)) / 2, rtol=1e-6, atol=1e-7)  # the text's formula


@pytest.mark.parametrize("op, ref", [("Neg_f", np.negative), ("Abs_f", np.fabs), ("Ceil_f", np.ceil),
                                     ("Floor_f", np.floor), ("Round_f", np.round),
                                     ("Relu_f", lambda v: np.maximum(v, 0.0))])
def test_exact_ops_match_reference(op, ref):
    # float64 references: every result is a float32 value, so the comparison is exact.
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((2, 3, 4, 5)) * 10).astype(np.float32)
    x[0, 0, 0, :4] = [0.5, 1.5, -2.5, 3.5]  # ties for Round_f
    (y,) = run_op(op, [x])
    assert np.array_equal(y, ref(x.astype(np.float64)).astype(np.float32))


def test_relux_clamp_match_reference():
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((2, 3, 4, 5)) * 10).astype(np.float32)
    assert np.array_equal(run_op("ReluX_f", [x, 6.0])[0], np.minimum(np.maximum(x, 0), 6))
    assert np.array_equal(run_op("Clamp_f", [x, -2.5, 4.0])[0], np.clip(x, -2.5, 4.0))


def test_errors():
    x = np.zeros((1, 1, 1, 2), np.float32)
    assert_op_error("ReluX_f", [x, math.nan], "limit is nan")
    assert_op_error("Clamp_f", [x, 1.0, -1.0], "min_clamp > max_clamp")
    assert_op_error("Clamp_f", [x, math.nan, 1.0], "min_clamp is nan")
    assert_op_error("ReluX_f", [x, np.zeros((1, 1, 1, 2), np.float32)], "limit has 2 elements")
    assert_op_error("Tanh_f", [np.array([["a"]])], "expected float data")
    assert_op_error("Abs_f", [np.array([1e300])], "beyond the float32 range")
    assert_op_error("Neg_f", [np.zeros((1, 1, 1, 1, 1), np.float32)], "more than 4 dimensions")
