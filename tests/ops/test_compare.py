"""Quantized comparisons (QuantizedEqual_8 ... QuantizedGreaterEqual_8) and Select_8."""
from __future__ import annotations

import operator
from fractions import Fraction

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.quant import adjust_range
from hexnn_import.testing.opcheck import assert_op_error, u4

# [-1, 127/128]: step 1/128, zero 128; [-2, 127/64]: step 1/64, zero 128; [0, 255/64]: step 1/64, zero 0.
R128 = (-1.0, 0.9921875)
R64 = (-2.0, 1.984375)
P64 = (0.0, 3.984375)

OPS = {
    "QuantizedEqual_8": operator.eq, "QuantizedNotEqual_8": operator.ne,
    "QuantizedLess_8": operator.lt, "QuantizedLessEqual_8": operator.le,
    "QuantizedGreater_8": operator.gt, "QuantizedGreaterEqual_8": operator.ge,
}


def test_compare_by_hand():
    # A (R128) codes 128, 192, 160, 0, 255 -> 0, 0.5, 0.25, -1, 0.9921875
    # B (R64)  codes 128, 160, 160, 64, 192 -> 0, 0.5, 0.5, -1, 1
    a, b = u4([128, 192, 160, 0, 255]), u4([128, 160, 160, 64, 192])
    expected = {
        "QuantizedEqual_8": [1, 1, 0, 1, 0], "QuantizedNotEqual_8": [0, 0, 1, 0, 1],
        "QuantizedLess_8": [0, 0, 1, 0, 1], "QuantizedLessEqual_8": [1, 1, 1, 1, 1],
        "QuantizedGreater_8": [0, 0, 0, 0, 0], "QuantizedGreaterEqual_8": [1, 1, 0, 1, 0],
    }
    for op, want in expected.items():
        (out,) = run_op(op, [a, b, *R128, *R64])
        assert out.dtype == np.uint8 and out.shape == (1, 1, 1, 5)
        assert out.ravel().tolist() == want, op


def test_compare_follows_the_device_values():
    # A [0, 13] code 9 = 9*13/255 = 117/255; B [0, 39] code 3 = 3*39/255 = 117/255: equal exactly, but the device
    # (op_compare_8.c, different ranges) compares the float32 values hvx_do_dequantize gives them, 9 * (13/255)f
    # and 3 * (39/255)f, and the first is smaller: Equal 0, Less 1 (run under qemu-hexagon with
    # tools/hvx/harness_compare.c; tests/ops/test_hvx_compare.py replays 324 recorded cases)
    (eq,) = run_op("QuantizedEqual_8", [u4([9]), u4([3]), 0.0, 13.0, 0.0, 39.0])
    (lt,) = run_op("QuantizedLess_8", [u4([9]), u4([3]), 0.0, 13.0, 0.0, 39.0])
    assert (eq.item(), lt.item()) == (0, 1)
    assert np.float32(9) * (np.float32(13) / np.float32(255)) < np.float32(3) * (np.float32(39) / np.float32(255))


def test_compare_broadcast_by_hand():
    # A [1,1,2,1] (R128) = [0, 0.5]; B [1,1,1,3] (R64) codes 96, 160, 192 = [-0.5, 0.5, 1]
    a, b = u4([128, 192], (1, 1, 2, 1)), u4([96, 160, 192])
    (gt,) = run_op("QuantizedGreater_8", [a, b, *R128, *R64])
    assert gt.shape == (1, 1, 2, 3)
    assert gt.tolist() == [[[[1, 0, 0], [1, 0, 0]]]]
    (eq,) = run_op("QuantizedEqual_8", [a, b, *R128, *R64])
    assert eq.tolist() == [[[[0, 0, 0], [0, 1, 0]]]]


def _exact(q: int, mn: float, mx: float) -> Fraction:
    width = Fraction(mx) - Fraction(mn)
    zero = round(-mn / ((mx - mn) / 255))
    return (q - zero) * width / 255


@pytest.mark.parametrize("op", sorted(OPS))
def test_compare_property(op):
    rng = np.random.default_rng(41)
    for _ in range(3):
        ranges = []
        for _ in range(2):
            mn, mx = adjust_range(-rng.uniform(0.1, 3), rng.uniform(0.1, 3))
            ranges.append((float(np.float32(mn)), float(np.float32(mx))))
        a = rng.integers(0, 256, size=(2, 1, 3, 4)).astype(np.uint8)
        b = rng.integers(0, 256, size=(1, 2, 3, 1)).astype(np.uint8)
        (out,) = run_op(op, [a, b, *ranges[0], *ranges[1]])
        aa, bb = np.broadcast_arrays(a, b)
        want = [int(OPS[op](_exact(int(x), *ranges[0]), _exact(int(y), *ranges[1])))
                for x, y in zip(aa.ravel(), bb.ravel())]
        assert out.shape == (2, 2, 3, 4)
        assert out.ravel().tolist() == want


def test_compare_errors():
    a, b = u4([1, 2, 3]), u4([1, 2])
    assert_op_error("QuantizedLess_8", [a, b, *R128, *R64], "do not broadcast", "[1,1,1,3]", "[1,1,1,2]")
    assert_op_error("QuantizedEqual_8", [a, a, *R128, 0.5, 1.0], "input B", "contain 0")
    assert_op_error("QuantizedGreater_8", [a, a, *R128, *R64, 1.0], "inputs")


# ---------------------------------------------------------------- Select_8

def test_select_by_hand():
    # X (R128) codes 0, 160, 255 = -1, 0.25, 0.9921875; Y (P64) codes 64, 128, 255 = 1, 2, 3.984375
    # out range adjust_range(-1, 3.984375): z = 255/4.984375 = 51.16, zi 51, zf 0.16;
    #   (zf-1)*mn = 0.84 >= zf*mx = 0.6375 -> grow max: step 1/51, max = -1 + 255/51 = 4, zero 51
    # condition [7, 0, 1] (non-zero = true) picks X0 = -1, Y1 = 2, X2 = 0.9921875
    # q = round_away((v + 1) * 51): 0, 153, 101.60 -> 102
    cond = u4([7, 0, 1])
    q, mn, mx = run_op("Select_8", [cond, u4([0, 160, 255]), *R128, u4([64, 128, 255]), *P64])
    assert q.ravel().tolist() == [0, 153, 102]
    assert (mn.item(), mx.item()) == (-1.0, 4.0)
    # same range on both sides: the codes pass through unchanged
    q, mn, mx = run_op("Select_8", [cond, u4([0, 160, 255]), *R128, u4([64, 128, 200]), *R128])
    assert q.ravel().tolist() == [0, 128, 255]
    assert (mn.item(), mx.item()) == R128


def test_select_property():
    rng = np.random.default_rng(42)
    for _ in range(4):
        rx = adjust_range(-rng.uniform(0.1, 3), rng.uniform(0.1, 3))
        ry = adjust_range(-rng.uniform(0.1, 3), rng.uniform(0.1, 3))
        rx, ry = tuple(float(np.float32(v)) for v in rx), tuple(float(np.float32(v)) for v in ry)
        shape = (2, 3, 2, 4)
        c = rng.integers(0, 3, size=shape).astype(np.uint8)
        x = rng.integers(0, 256, size=shape).astype(np.uint8)
        y = rng.integers(0, 256, size=shape).astype(np.uint8)
        q, mn, mx = run_op("Select_8", [c, x, *rx, y, *ry])
        real_x = np.array([float(_exact(int(v), *rx)) for v in x.ravel()]).reshape(shape)
        real_y = np.array([float(_exact(int(v), *ry)) for v in y.ravel()]).reshape(shape)
        want = np.where(c != 0, real_x, real_y)
        step = (mx.item() - mn.item()) / 255
        zero = round(-mn.item() / step)
        assert mn.item() <= min(rx[0], ry[0]) and mx.item() >= max(rx[1], ry[1])
        # the device's jointly_quantize (tests/ops/test_hvx_select.py): a multiplier truncated to 12 fraction bits
        # and a round of the shifted product: within 0.5 step + 255 codes x 2**-12 of the multiplier < 0.6 step
        assert np.max(np.abs((q.astype(np.float64) - zero) * step - want)) <= step * 0.6


def test_select_errors():
    x = u4([1, 2, 3])
    assert_op_error("Select_8", [u4([1, 0]), x, *R128, x, *R64], "shapes differ")
    assert_op_error("Select_8", [u4([1, 0, 1]), x, *R128, u4([1, 2, 3], (1, 1, 3, 1)), *R64], "shapes differ")
    assert_op_error("Select_8", [u4([1, 0, 1]), x, *R128, x, 1.0, 2.0], "input Y", "contain 0")
    assert_op_error("Select_8", [np.full((1, 1, 1, 3), -1, np.int32), x, *R128, x, *R64], "condition")
