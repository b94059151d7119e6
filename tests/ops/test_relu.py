"""QuantizedRelu_8 and QuantizedReluX_8 (op_relu.c relu_execute / reluX_execute)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, u4
from hexnn_import.ops.quant import adjust_range



def test_relu_by_hand():
    # [-1, 0.9921875]: step 2**-7, zero = round_away(1 * 128) = 128 -> max(x, 128)
    q, mn, mx = run_op("QuantizedRelu_8", [u4([0, 100, 128, 129, 255]), -1.0, 0.9921875])
    assert q.dtype == np.uint8
    assert q.ravel().tolist() == [128, 128, 128, 129, 255]
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)  # range passes through
    # [-6, 0.375]: step 6.375/255 = 0.025, zero = 6/0.025 = 240 -> max(x, 240)
    q, _, _ = run_op("QuantizedRelu_8", [u4([0, 239, 240, 250]), -6.0, 0.375])
    assert q.ravel().tolist() == [240, 240, 240, 250]
    # [0, 6]: zero code 0, identity
    q, _, _ = run_op("QuantizedRelu_8", [u4([0, 7, 255]), 0.0, 6.0])
    assert q.ravel().tolist() == [0, 7, 255]


def test_relux_by_hand():
    x = u4([0, 100, 128, 150, 192, 200, 255])
    # [-1, 0.9921875]: zero 128; X = 0.5 -> quantize(X) = round_away(1.5 * 128) = 192
    q, mn, mx = run_op("QuantizedReluX_8", [x, -1.0, 0.9921875, 0.5])
    assert q.ravel().tolist() == [128, 128, 128, 150, 192, 192, 192]
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)
    # X = 0.3 -> 1.3 * 128 = 166.4 -> 166
    q, _, _ = run_op("QuantizedReluX_8", [x, -1.0, 0.9921875, 0.3])
    assert q.ravel().tolist() == [128, 128, 128, 150, 166, 166, 166]
    # X = 6 beyond the range -> 7 * 128 = 896 -> sat 255: plain Relu; +inf the same
    for limit in (6.0, float("inf")):
        q, _, _ = run_op("QuantizedReluX_8", [x, -1.0, 0.9921875, limit])
        assert q.ravel().tolist() == [128, 128, 128, 150, 192, 200, 255]
    # X = -0.5 -> 0.5 * 128 = 64: min(max(x, 128), 64) = 64 everywhere
    q, _, _ = run_op("QuantizedReluX_8", [x, -1.0, 0.9921875, -0.5])
    assert q.ravel().tolist() == [64] * 7
    # Relu6 over [0, 6]: zero 0, quantize(6) = 255 -> identity
    q, _, _ = run_op("QuantizedReluX_8", [x, 0.0, 6.0, 6.0])
    assert np.array_equal(q, x)


def test_relu_property_matches_float():
    rng = np.random.default_rng(4)
    for _ in range(10):
        mn, mx = adjust_range(-rng.uniform(0.01, 5), rng.uniform(0.01, 5))
        mn, mx = float(np.float32(mn)), float(np.float32(mx))
        step = (mx - mn) / 255
        zero = round(-mn / step)
        x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
        real = (x.astype(np.float64) - zero) * step
        q, _, _ = run_op("QuantizedRelu_8", [x, mn, mx])
        assert np.allclose((q.astype(np.float64) - zero) * step, np.maximum(real, 0.0), atol=1e-9)
        limit = rng.uniform(0, mx)
        q, _, _ = run_op("QuantizedReluX_8", [x, mn, mx, limit])
        got = (q.astype(np.float64) - zero) * step
        assert np.max(np.abs(got - np.clip(real, 0.0, np.float32(limit)))) <= step * 0.501


def test_ranges_excluding_zero_as_the_c():
    # relu_execute / reluX_execute accept any range: the codes are quantize_uint8 (saturated) of 0 and X.
    x = u4([1, 2, 250])
    # [0.5, 1]: quantize_uint8(0) = sat(roundf(-0.5 * 510)) = 0 -> identity; the range is copied
    q, mn, mx = run_op("QuantizedRelu_8", [x, 0.5, 1.0])
    assert q.ravel().tolist() == [1, 2, 250] and (mn.item(), mx.item()) == (0.5, 1.0)
    # [-2, -1]: quantize_uint8(0) = sat(roundf(2 * 255)) = 255 -> every code 255
    q, mn, mx = run_op("QuantizedRelu_8", [x, -2.0, -1.0])
    assert q.ravel().tolist() == [255] * 3 and (mn.item(), mx.item()) == (-2.0, -1.0)
    # [-1, -1] (zero width): (0 + 1) * 255 / 1e-18 saturates (Hexagon's float->int conversion) -> 255
    q, _, _ = run_op("QuantizedRelu_8", [x, -1.0, -1.0])
    assert q.ravel().tolist() == [255] * 3
    # ReluX over [0.5, 1], X = 0.75: zero code 0, limit roundf(0.25 * 510) = 128 (127.5 rounds away)
    q, _, _ = run_op("QuantizedReluX_8", [x, 0.5, 1.0, 0.75])
    assert q.ravel().tolist() == [1, 2, 128]


def test_errors():
    x = u4([1, 2])
    assert_op_error("QuantizedRelu_8", [x, 1.0, 0.5], "input", "min")
    assert_op_error("QuantizedReluX_8", [x, -1.0, 1.0, float("nan")], "threshold X is NaN")
    assert_op_error("QuantizedReluX_8", [x, -1.0, float("nan"), 6.0], "not a finite range")
    assert_op_error("QuantizedRelu_8", [np.array([[[[-3]]]], np.int32), -1.0, 1.0], "outside the code range")
