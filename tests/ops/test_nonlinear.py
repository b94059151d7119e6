"""QuantizedSigmoid_8, QuantizedTanh_8, QuantizedSoftmax_8 as hexagon_nn's C computes them
(op_tanh.c qtanh_execute_ref, op_softmax.c qsoftmax_execute_ref). The by-hand codes are the C's
(nnlib oracle); the property tests bound the distance to float64 math."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.quant import adjust_range
from hexnn_import.testing.opcheck import assert_op_error, deq, u4

# [-16, 15.875]: step 1/8, zero 128, so code 128 + 8k is the real value k.
R8 = (-16.0, 15.875)


def random_case(rng: np.random.Generator, shape=(2, 3, 2, 5)):
    mn, mx = adjust_range(-rng.uniform(0.5, 10), rng.uniform(0.5, 10))
    r = (float(np.float32(mn)), float(np.float32(mx)))
    return rng.integers(0, 256, size=shape).astype(np.uint8), r


def test_sigmoid_by_hand():
    # x = -16, -1, 0, 1, 2, 15.875; out [0, 1], sigmoid(x) * 255: 1.1e-7 -> 0; 0.268941 -> 68.58 -> 69;
    # 0.5 -> 127.5 -> 128 (the table of op_tanh_d32.c, which the flat op runs on the device, rounds the
    # half up: nnlib oracle); 0.731059 -> 186.42 -> 186; 0.880797 -> 224.60 -> 225; 1 -> 255
    q, mn, mx = run_op("QuantizedSigmoid_8", [u4([0, 120, 128, 136, 144, 255]), *R8])
    assert q.dtype == np.uint8
    assert q.ravel().tolist() == [0, 69, 128, 186, 225, 255]
    assert (mn.item(), mx.item()) == (0.0, 1.0)


def test_tanh_by_hand():
    # out [-1, 128/127], step 1/127, zero code 127: q = round((tanh(x) + 1) * 127) (op_tanh_d32.c's table)
    # tanh(-16) = -1 -> 0; tanh(-1) = -0.761594 -> 30.35 -> 30; 0 -> 127 (x a hair below 0, as for
    # sigmoid); tanh(1) -> 223.72 -> 224; tanh(2) = 0.964028 -> 249.43 -> 249; tanh(15.875) -> 254
    q, mn, mx = run_op("QuantizedTanh_8", [u4([0, 120, 128, 136, 144, 255]), *R8])
    assert q.ravel().tolist() == [0, 30, 127, 224, 249, 254]
    assert (mn.item(), mx.item()) == (-1.0, float(np.float32(128 / 127)))  # not the text's 0.992188


def test_softmax_by_hand():
    # row [0, 1, 2]: e^x = 1, 2.718282, 7.389056, sum 11.107338 -> p = 0.090031, 0.244728, 0.665241
    # q = round_away(255 p): 22.96 -> 23, 62.41 -> 62, 169.64 -> 170
    q, mn, mx = run_op("QuantizedSoftmax_8", [u4([128, 136, 144]), *R8])
    assert q.ravel().tolist() == [23, 62, 170]
    assert (mn.item(), mx.item()) == (0.0, 1.0)
    # beta 2: e^(2x) = 1, 7.389056, 54.598150, sum 62.987206 -> p = 0.015876, 0.117310, 0.866813
    # 255 p = 4.05 -> 4, 29.91 -> 30, 221.04 -> 221
    q, _, _ = run_op("QuantizedSoftmax_8", [u4([128, 136, 144]), *R8, 2.0])
    assert q.ravel().tolist() == [4, 30, 221]
    # softmax runs along depth only: rows [7,7,7,7] -> 1/4 each -> 63.75 -> 64; a depth-1 row -> 1 -> 255
    q, _, _ = run_op("QuantizedSoftmax_8", [u4([7] * 8, (1, 2, 1, 4)), *R8])
    assert q.ravel().tolist() == [64] * 8
    q, _, _ = run_op("QuantizedSoftmax_8", [u4([3, 250], (1, 2, 1, 1)), *R8])
    assert q.ravel().tolist() == [255, 255]


@pytest.mark.parametrize("op,fn,out", [
    ("QuantizedSigmoid_8", lambda v: 1 / (1 + np.exp(-v)), (0.0, 1.0)),
    ("QuantizedTanh_8", np.tanh, (-1.0, float(np.float32(128 / 127)))),
])
def test_pointwise_property(op, fn, out):
    rng = np.random.default_rng(21)
    for _ in range(4):
        x, r = random_case(rng)
        q, mn, mx = run_op(op, [x, *r])
        assert (mn.item(), mx.item()) == out
        exact = (-1.0, 128 / 127) if op == "QuantizedTanh_8" else out  # zero code 127 exactly
        want = np.clip(fn(deq(x, *r)), *exact)
        # op_tanh_d32.c's table is a fixed-point piecewise polynomial, not a correctly rounded function:
        # within 0.55 of an output step (0.5 would be exact rounding)
        assert np.max(np.abs(deq(q, *exact) - want)) <= (exact[1] - exact[0]) / 255 * 0.55


def test_softmax_property():
    rng = np.random.default_rng(22)
    for beta in (1.0, 0.5, 3.0):
        x, r = random_case(rng)
        q, _, _ = run_op("QuantizedSoftmax_8", [x, *r, beta])
        real = deq(x, *r) * np.float32(beta)
        e = np.exp(real - real.max())  # one global shift: the ratio per row is unchanged
        want = e / e.sum(axis=-1, keepdims=True)
        assert np.max(np.abs(q / 255 - want)) <= 0.5001 / 255


def test_ranges_without_zero_are_computed():
    # hexagon_nn does not check the input range. op_tanh_d32.c's table takes the zero code of a range
    # without 0 clamped into 0..255, so [0.5, 1.0] reads code 0 as x = 0 and 255 as 0.5 (tanh 0.462 ->
    # 185.7 -> 186), and [-3, -1] reads 255 as 0 (codes of the nnlib oracle)
    x = u4([0, 128, 255])
    assert run_op("QuantizedTanh_8", [x, 0.5, 1.0])[0].ravel().tolist() == [127, 158, 186]
    assert run_op("QuantizedSigmoid_8", [x, -3.0, -1.0])[0].ravel().tolist() == [30, 69, 128]
    assert run_op("QuantizedSoftmax_8", [x, 2.0, 6.0])[0].ravel().tolist() == [4, 30, 221]


def test_errors():
    for op in ("QuantizedSigmoid_8", "QuantizedTanh_8", "QuantizedSoftmax_8"):
        assert_op_error(op, [u4([1]), math.inf, 1.0], "input", "not finite")
        assert_op_error(op, [u4([1]), -1.0], "inputs")
        assert_op_error(op, [np.full((1, 1, 1, 2), 300, dtype=np.int32), *R8], "outside the code range")
    assert_op_error("QuantizedSoftmax_8", [u4([1]), *R8, math.nan], "beta")
    assert_op_error("QuantizedSoftmax_8", [u4([1]), *R8, [1.0, 2.0]], "beta has 2 elements")
    assert_op_error("QuantizedTanh_8", [np.uint8(5), *R8], "expected 4-D")
