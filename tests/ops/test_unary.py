"""QuantizedSqrt_8, QuantizedRecip_8, QuantizedDiv_8 worked by hand (op_sqrt.c, op_recip.c, op_div.c) and properties."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.quant import adjust_range
from hexnn_import.testing.opcheck import assert_op_error, deq, u4

# Ranges with exact steps: [-1, 127/128] step 1/128 zero 128; [0, 255/64] step 1/64 zero 0.
R128 = (-1.0, 0.9921875)
R64 = (0.0, 3.984375)


def random_range(rng: np.random.Generator) -> tuple[float, float]:
    mn, mx = adjust_range(-rng.uniform(0.1, 4), rng.uniform(0.1, 4))
    return float(np.float32(mn)), float(np.float32(mx))


# ---------------------------------------------------------------- Sqrt

def test_sqrt_by_hand():
    # [0, 4]: zero 0, step 4/255; out range [0, sqrt(4)] = [0, 2], step 2/255
    # q_out = round_away(sqrt(q*4/255) * 255/2) = round_away(sqrt(255*q)):
    # 0 -> 0; 1 -> sqrt(255)=15.97 -> 16; 4 -> sqrt(1020)=31.94 -> 32;
    # 64 -> sqrt(16320)=127.75 -> 128; 100 -> sqrt(25500)=159.69 -> 160; 255 -> 255
    q, mn, mx = run_op("QuantizedSqrt_8", [u4([0, 1, 4, 64, 100, 255]), 0.0, 4.0])
    assert q.dtype == np.uint8
    assert q.ravel().tolist() == [0, 16, 32, 128, 160, 255]
    assert (mn.item(), mx.item()) == (0.0, 2.0)


def test_sqrt_property():
    rng = np.random.default_rng(11)
    for _ in range(5):
        in_max = float(np.float32(rng.uniform(0.01, 100)))
        x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
        q, mn, mx = run_op("QuantizedSqrt_8", [x, 0.0, in_max])
        assert mn.item() == 0.0 and mx.item() == pytest.approx(np.sqrt(in_max), rel=1e-6)
        want = np.sqrt(x * (in_max / 255))
        assert np.max(np.abs(q * (np.sqrt(in_max) / 255) - want)) <= np.sqrt(in_max) / 255 * 0.5001


def test_sqrt_min_above_zero_keeps_the_table():
    # op_sqrt.c: the code table assumes min 0 and is applied anyway; the range is (sqrtf(min), sqrtf(max))
    q, mn, mx = run_op("QuantizedSqrt_8", [u4([0, 1, 255]), 1.0, 4.0])
    assert q.ravel().tolist() == [0, 16, 255] and (mn.item(), mx.item()) == (1.0, 2.0)


def test_sqrt_errors():
    assert_op_error("QuantizedSqrt_8", [u4([1]), -1.0, 1.0], "input min", "negative")
    assert_op_error("QuantizedSqrt_8", [u4([1]), 0.0, float("nan")], "input")
    assert_op_error("QuantizedSqrt_8", [u4([1]), 0.0], "inputs")


# ---------------------------------------------------------------- Recip
# op_recip.c as the device runs it (float32, ``fmaf(q, step, min)``); the device rows are tests/ops/test_hvx_recip.py.

def test_recip_by_hand_positive_range():
    # R64 step 1/64: codes 16, 32, 64, 255 -> 0.25, 0.5, 1, 3.984375 (= 255/64); 1/x = 4, 2, 1, 64/255
    # range [0.2509804, 4] with 0 put in: [0, 4]; out step float32(4/255) = 0.015686275, a hair above 4/255, so
    # 2 / step = 127.49999 -> 127 (a float64 step would give 127.5 -> 128); 1 / step = 63.75 -> 64; 255; 16
    q, mn, mx = run_op("QuantizedRecip_8", [u4([16, 32, 64, 255]), *R64])
    assert q.ravel().tolist() == [255, 127, 64, 16]
    assert (mn.item(), mx.item()) == (0.0, 4.0)


def test_recip_by_hand_mixed_signs():
    # R128: codes 0, 192, 160 -> -1, 0.5, 0.25; 1/x = -1, 2, 4; range [-1, 4] as found (no zero fix)
    # out step float32(5/255) = 0.019607844: 3 / step = 153.0, 5 / step = 254.99998 -> 255
    q, mn, mx = run_op("QuantizedRecip_8", [u4([0, 192, 160]), *R128])
    assert q.ravel().tolist() == [0, 153, 255]
    assert (mn.item(), mx.item()) == (-1.0, 4.0)


def lin(q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    """Codes on ``[mn, mx]`` as op_recip.c / op_div.c read and write them: ``mn + q * (mx - mn) / 255`` (float64)."""
    return mn + q.astype(np.float64) * ((mx - mn) / 255)


def test_recip_property():
    # under and from 256 elements, codes away from the zero code: within half an output step of 1 / x, and the
    # range spans the reciprocals (float32 slack)
    rng = np.random.default_rng(12)
    for shape in [(1, 4, 4, 6), (1, 4, 4, 6), (1, 3, 4, 30), (1, 3, 4, 30)]:
        r = random_range(rng)
        x = rng.integers(0, 256, size=shape).astype(np.uint8)
        x[np.abs(lin(x, *r)) < (r[1] - r[0]) / 255] = 255
        q, mn, mx = run_op("QuantizedRecip_8", [x, *r])
        want = 1.0 / lin(x, *r)
        step = (mx.item() - mn.item()) / 255
        tol = 1e-5 * abs(want).max()
        assert mn.item() <= min(0.0, want.min()) + tol and mx.item() >= max(0.0, want.max()) - tol
        assert np.max(np.abs(lin(q, mn.item(), mx.item()) - want)) <= step * 0.5001 + tol


def test_recip_errors():
    # from 256 elements a range without 0 takes none of recip_execute's branches: nothing written, refused
    assert_op_error("QuantizedRecip_8", [u4([1] * 256), 1.0, 2.0], "input", "none of its three branches")
    assert_op_error("QuantizedRecip_8", [np.array([1.5]).reshape(1, 1, 1, 1), *R128], "non-integer")


# ---------------------------------------------------------------- Div
# op_div.c as the device runs it; the device rows are tests/ops/test_hvx_div.py.

A_CODES = u4([0, 192, 255, 64], (1, 1, 2, 2))  # R128 reals [[-1, 0.5], [0.9921875, -0.5]]


def test_div_by_hand_per_depth():
    # B (R64) codes [64, 128] -> divisors [1, 2] per depth; a/b = [[-1, 0.25], [0.9921875, -0.25]]
    # derived range: a_min/b, a_max/b = -1, -0.5, 0.9921875, 0.49609375 -> [-1, 0.9921875]
    # quantize_uint8: 255 / 1.9921875 = 128: (y + 1) * 128: -1 -> 0, 0.25 -> 160, 0.9921875 -> 255, -0.25 -> 96
    q, mn, mx = run_op("QuantizedDiv_8", [A_CODES, u4([64, 128]), *R128, *R64])
    assert q.shape == (1, 1, 2, 2)
    assert q.ravel().tolist() == [0, 160, 255, 96]
    assert (mn.item(), mx.item()) == R128


def test_div_by_hand_static_range():
    # static [-1, 1] kept as given; quantize_uint8: (y + 1) * 127.5: -1 -> 0; 0.25 -> 159.375 -> 159;
    # 0.9921875 -> 254.0039 -> 254; -0.25 -> 95.625 -> 96
    q, mn, mx = run_op("QuantizedDiv_8", [A_CODES, u4([64, 128]), *R128, *R64, -1.0, 1.0])
    assert q.ravel().tolist() == [0, 159, 254, 96]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)


def test_div_by_hand_scalar_and_negative_divisor():
    # scalar divisor code 128 of R64 = 2: codes kept, range [-1, 0.9921875] / 2
    q, mn, mx = run_op("QuantizedDiv_8", [A_CODES, u4([128]), *R128, *R64])
    assert q.ravel().tolist() == [0, 192, 255, 64]
    assert (mn.item(), mx.item()) == (-0.5, 0.49609375)
    # negative divisor: code 64 of R128 = -0.5; codes 255 - a, range (0.9921875 / -0.5, -1 / -0.5)
    q, mn, mx = run_op("QuantizedDiv_8", [A_CODES, u4([64]), *R128, *R128])
    assert q.ravel().tolist() == [255, 63, 0, 191]
    assert (mn.item(), mx.item()) == (-1.984375, 2.0)


def test_div_property():
    rng = np.random.default_rng(13)
    for _ in range(5):
        ra, rb = random_range(rng), random_range(rng)
        a = rng.integers(0, 256, size=(2, 3, 3, 4)).astype(np.uint8)
        b_real = np.zeros(1)
        while np.any(b_real == 0):
            b = rng.integers(0, 256, size=(1, 1, 1, 4)).astype(np.uint8)
            b_real = deq(b, *rb)
        q, mn, mx = run_op("QuantizedDiv_8", [a, b, *ra, *rb])
        want = lin(a, *ra) / lin(b, *rb)
        step = (mx.item() - mn.item()) / 255
        assert np.max(np.abs(lin(q, mn.item(), mx.item()) - want)) <= step * 0.5001 + 1e-5 * abs(want).max()


def test_div_errors():
    b = u4([64, 128])
    assert_op_error("QuantizedDiv_8", [A_CODES, u4([0, 128]), *R128, *R64], "division by zero")
    assert_op_error("QuantizedDiv_8", [A_CODES, u4([64, 128], (1, 2, 1, 1)), *R128, *R64], "input B has shape")
    assert_op_error("QuantizedDiv_8", [A_CODES, b, *R128, *R64, -1.0], "7 inputs")
