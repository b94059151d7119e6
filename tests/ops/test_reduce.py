"""QuantizedSum_8to32, QuantizedMean_8, Moments_8to32 (op texts; SEMANTICS.md §1 codes and ranges)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

# Range [-4, 27.875]: step = 31.875 / 255 = 0.125, zero = 4 / 0.125 = 32 (all exact in float32).
MN, MX, STEP, ZERO = -4.0, 27.875, 0.125, 32
# Codes, shape [1, 1, 2, 3]: row w=0 is [30, 32, 40], row w=1 is [35, 0, 255].
X = np.array([[30, 32, 40], [35, 0, 255]], np.uint8).reshape(1, 1, 2, 3)


def axes(*a: int) -> np.ndarray:
    return np.array(a, np.int32).reshape(1, 1, 1, -1)




# --- QuantizedSum_8to32 ----------------------------------------------------

def test_sum_by_hand():
    # Over depth (axis 3): w=0: (30-32) + (32-32) + (40-32) = -2 + 0 + 8 = 6
    #                      w=1: (35-32) + (0-32) + (255-32) = 3 - 32 + 223 = 194
    # Range: one qint32 code = one input step, so [-2**31 * 0.125, 2**31 * 0.125] = [-268435456, 268435456].
    q, mn, mx = run_op("QuantizedSum_8to32", [X, MN, MX, axes(3)])
    assert q.dtype == np.int32 and q.shape == (1, 1, 2, 1)
    assert q.ravel().tolist() == [6, 194]
    assert (mn.item(), mx.item()) == (-268435456.0, 268435456.0)
    # Over width (axis 2, given as -2): (30+35-64, 32+0-64, 40+255-64) = (1, -32, 231)
    q, _, _ = run_op("QuantizedSum_8to32", [X, MN, MX, axes(-2)])
    assert q.shape == (1, 1, 1, 3) and q.ravel().tolist() == [1, -32, 231]
    # All four axes: 6 + 194 = 200
    q, _, _ = run_op("QuantizedSum_8to32", [X, MN, MX, axes(0, 1, 2, 3)])
    assert q.shape == (1, 1, 1, 1) and q.item() == 200
    # Axis 3 repeated as -1: the device (op_reducing_sum.c) takes the zero code once per listed entry, 3 * 3 times:
    # w=0: 102 - 9 * 32 = -186; w=1: 290 - 288 = 2.
    q, _, _ = run_op("QuantizedSum_8to32", [X, MN, MX, axes(3, -1)])
    assert q.ravel().tolist() == [-186, 2]


def test_sum_matches_numpy():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
    for ax in [(0,), (1, 2), (0, 3), (0, 1, 2, 3), (2,)]:
        q, mn, mx = run_op("QuantizedSum_8to32", [x, MN, MX, axes(*ax)])   # a range the device leaves as it is
        step, zero = STEP, ZERO
        want = (x.astype(np.int64) - zero).sum(axis=ax, keepdims=True)
        assert q.tolist() == want.tolist()
        # Dequantizing the qint32 result gives the float sum of the dequantized inputs.
        one = (mx.item() - mn.item()) / 2 ** 32
        real = ((x.astype(np.float64) - zero) * step).sum(axis=ax, keepdims=True)
        assert np.allclose(q * one, real, rtol=1e-6, atol=1e-9)


def test_sum_zero_fixes_a_range_without_zero():
    # op_reducing_sum.c: adjust_minmax_for_zero([0.5, 2.0]) leaves it (its zero point -255 * 0.5 / 1.5 = -85 is a
    # whole code), quantize_uint8(0.0f, 0.5, 2.0) saturates to 0: the codes sum as they are; range
    # +-2**31 * float32(1.5 / 255).
    q, mn, mx = run_op("QuantizedSum_8to32", [X, 0.5, 2.0, axes(3)])
    assert q.ravel().tolist() == [102, 290]
    assert mx.item() == -mn.item() == float(np.float32(2.0 ** 31) * (np.float32(1.5) / np.float32(255.0)))


def test_sum_overflow_is_an_error():
    # 255 * 8421505 = 2147483775 > 2**31 - 1 with zero code 0 (range [0, 1]).
    big = np.full((1, 1, 1, 8421505), 255, np.uint8)
    assert_op_error("QuantizedSum_8to32", [big, 0.0, 1.0, axes(3)], "may leave int32")


# --- QuantizedMean_8 -------------------------------------------------------

def test_mean_by_hand():
    # op_reducing_mean.c: zero-based sum x = sum(q) - n * 32, times QuantizeMultiplierSmallerThanOne(1/n)
    # ((x * m + 2**30) >> 31, then RoundingDivideByPOT by the shift), plus the output offset.
    # Over depth, n = 3: float32(1/3) = 0.6666667 * 2**-1 -> m = floor(0.6666667 * 2**31) = 1431655808, shift 1.
    #   w=0: x = 102 - 96 = 6 -> (6m + 2**30) >> 31 = 4 -> (4 + 1) >> 1 = 2 -> 34
    #   w=1: x = 290 - 96 = 194 -> 129.33 -> 129 -> (129 + 1) >> 1 = 65 -> 97. Range passes through.
    q, mn, mx = run_op("QuantizedMean_8", [X, MN, MX, axes(3)])
    assert q.dtype == np.uint8 and q.shape == (1, 1, 2, 1)
    assert q.ravel().tolist() == [34, 97]
    assert (mn.item(), mx.item()) == (MN, MX)
    # Over width, n = 2: m = 2**30, shift 0: x = 1 -> (2**30 + 2**30) >> 31 = 1 -> 33;
    #   x = -32 -> floor(-15.5) = -16 -> 16;  x = 231 -> floor(116) = 116 -> 148
    q, _, _ = run_op("QuantizedMean_8", [X, MN, MX, axes(2)])
    assert q.ravel().tolist() == [33, 16, 148]


def test_mean_rounds_twice_as_the_device():
    # n = 9 (MobileNet's 3x3 global pool): float32(1/9) = 0.8888889 * 2**-3 -> m = 1908874368, shift 3.
    # Codes 33 x5 and 34 x4: sum 301, x = 301 - 288 = 13, exact mean 32 + 13/9 = 33.44 -> 33, but the device:
    #   (13m + 2**30) >> 31 = floor(12.06) = 12, then (12 + 4) >> 3 = 2 -> 34.
    # x = -13 (codes 31 x5 and 30 x4: 275): floor(-11.06) = -12 -> (-12 + 4) >> 3 = -1 -> 31 (exact 30.56 -> 31).
    up = np.array([33] * 5 + [34] * 4, np.uint8).reshape(1, 3, 3, 1)
    down = np.array([31] * 5 + [30] * 4, np.uint8).reshape(1, 3, 3, 1)
    for x, want in ((up, 34), (down, 31)):
        q, _, _ = run_op("QuantizedMean_8", [x, MN, MX, axes(1, 2)])
        assert q.item() == want


def test_mean_with_output_range_by_hand():
    # Output range [-8, 55.75]: step 0.25, zero 32 (already exact, adjust_range keeps it); n = 2,
    # multiplier 0.125 / (0.25 * 2) = 0.25 -> m = 2**30, shift 1. Over width, x = 1, -32, 231:
    #   (x * 2**30 + 2**30) >> 31 = 1, -16, 116;  (+1) >> 1 = 1, -8, 58;  + 32 = 33, 24, 90
    #   (the exact rounding of the reals 0.0625, -2, 14.4375 would give 32, 24, 90: the device rounds twice)
    q, mn, mx = run_op("QuantizedMean_8", [X, MN, MX, axes(2), -8.0, 55.75])
    assert q.ravel().tolist() == [33, 24, 90]
    assert (mn.item(), mx.item()) == (-8.0, 55.75)
    # A requested [0.5, 3] is kept as given, as the device does (tools/hvx/op_mean.py; step 2.5/255, its zero
    # -51 saturated to 0 by get_qu8_level_size_zero): 0.125 / (2.5/255 * 2) = 6.4 is capped at fminf(0.99999f):
    # m = floor(0.99999 * 2**31), shift 0, so the codes are the zero-based sums x, clipped:
    #   1 -> 1;  -32 -> 0;  231 * 0.99999 = 230.998 -> 231
    q, mn, mx = run_op("QuantizedMean_8", [X, MN, MX, axes(2), 0.5, 3.0])
    assert q.ravel().tolist() == [1, 0, 231]
    assert (mn.item(), mx.item()) == (0.5, 3.0)
    # Only input 4 given: max stays the input max; [-4, 27.875] is the input range, as without inputs 4-5.
    q, mn, mx = run_op("QuantizedMean_8", [X, MN, MX, axes(2), -4.0])
    assert q.ravel().tolist() == [33, 16, 148] and (mn.item(), mx.item()) == (MN, MX)


def test_mean_within_one_code_of_numpy():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
    apart = 0
    for ax in [(0,), (1, 2), (0, 3), (0, 1, 2, 3), (3,)]:
        q, _, _ = run_op("QuantizedMean_8", [x, MN, MX, axes(*ax)])
        want = np.floor(x.astype(np.float64).mean(axis=ax, keepdims=True) + 0.5)
        diff = np.abs(q.astype(np.float64) - want)
        assert diff.max() <= 1
        apart += int(diff.sum())
        # With an output range whose step is at least the input's (the multiplier in_step / (out_step * n) < 1:
        # the device caps it at 0.99999, see above): dequantized result within one output step of the mean.
        q, mn, mx = run_op("QuantizedMean_8", [x, MN, MX, axes(*ax), -8.0, 24.0])
        out_step = (mx.item() - mn.item()) / 255
        out_zero = round(-mn.item() / out_step)
        real_mean = ((x.astype(np.float64) - ZERO) * STEP).mean(axis=ax, keepdims=True)
        got = (q.astype(np.float64) - out_zero) * out_step
        clipped = np.clip(real_mean, mn.item(), mx.item())
        assert np.all(np.abs(got - clipped) <= out_step + 1e-6)
    assert apart > 0   # the fixed-point path is not the exact rounding


# --- Moments_8to32 ---------------------------------------------------------

def test_moments_by_hand():
    # Codes [10, 12, 14, 20] over depth: mean 56/4 = 14.
    # Variance of the codes: deviations -4, -2, 0, 6 -> (16 + 4 + 0 + 36) / 4 = 14 -> code 14 * 2**17 = 1835008.
    # Variance range [-2**14 * step**2, 2**14 * step**2] = [-256, 256] (step**2 = 1/64), one code 512 / 2**32 = 2**-23:
    #   1835008 * 2**-23 = 0.21875 = 14 * step**2, the variance of the reals (q - 32) * 0.125.
    x = np.array([10, 12, 14, 20], np.uint8).reshape(1, 1, 1, 4)
    mean, var, mmn, mmx, vmn, vmx = run_op("Moments_8to32", [x, axes(3), MN, MX])
    assert mean.dtype == np.uint8 and var.dtype == np.int32
    assert mean.shape == var.shape == (1, 1, 1, 1)
    assert (mean.item(), var.item()) == (14, 1835008)
    assert (mmn.item(), mmx.item()) == (MN, MX)
    assert (vmn.item(), vmx.item()) == (-256.0, 256.0)
    # Codes [0, 1]: mean 0.5 -> 1 (half up); variance 0.25 -> 0.25 * 2**17 = 32768.
    # Codes [0, 0, 1]: mean 1/3 -> 0; variance (3*1 - 1**2) / 9 = 2/9 -> 2/9 * 131072 = 29127.1 -> 29127.
    # Shape [1, 1, 3, 2], reduced over width (axis 2): depth 0 holds [0, 1, 0], depth 1 holds [0, 0, 1];
    # both are the same multiset, so both give mean 0 and variance code 29127.
    two = np.array([[0, 0], [1, 0], [0, 1]], np.uint8).reshape(1, 1, 3, 2)
    mean, var, *_ = run_op("Moments_8to32", [two, axes(2), MN, MX])
    assert mean.ravel().tolist() == [0, 0] and var.ravel().tolist() == [29127, 29127]
    pair = np.array([0, 1], np.uint8).reshape(1, 1, 1, 2)
    mean, var, *_ = run_op("Moments_8to32", [pair, axes(-1), MN, MX])
    assert (mean.item(), var.item()) == (1, 32768)


def test_moments_match_numpy():
    rng = np.random.default_rng(11)
    x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
    for ax in [(0,), (1, 2), (0, 3), (0, 1, 2, 3), (3,)]:
        mean, var, mmn, mmx, vmn, vmx = run_op("Moments_8to32", [x, axes(*ax), -1.0, 3.0])
        step = (np.float32(3.0) - np.float32(-1.0)) / 255.0
        zero = int(np.floor(1.0 / step + 0.5))
        real = (x.astype(np.float64) - zero) * step
        assert mean.tolist() == np.floor(x.mean(axis=ax, keepdims=True) + 0.5).astype(np.int64).tolist()
        assert (mmn.item(), mmx.item()) == (-1.0, 3.0)
        one = (vmx.item() - vmn.item()) / 2 ** 32
        want = real.var(axis=ax, keepdims=True)  # population variance
        # Half a code of rounding, plus the float32 rounding of the reported range (relative 2**-24).
        assert np.all(np.abs(var * one - want) <= one * 0.5 + 1e-6 * want + 1e-12)
        # The codes themselves are exact: round_half_up(var_of_codes * 2**17).
        var_codes = x.astype(np.float64).var(axis=ax, keepdims=True)
        assert np.all(np.abs(var - var_codes * 2 ** 17) <= 0.5 + 1e-6)


# --- errors ----------------------------------------------------------------

@pytest.mark.parametrize("op", ["QuantizedSum_8to32", "QuantizedMean_8", "Moments_8to32"])
def test_reduce_errors(op):
    def inputs(ax: np.ndarray, mn: float = MN, mx: float = MX, data: np.ndarray = X) -> list:
        return [data, ax, mn, mx] if op == "Moments_8to32" else [data, mn, mx, ax]

    assert_op_error(op, inputs(axes(4)), "axis 4 is outside -4..3")
    assert_op_error(op, inputs(axes(-5)), "axis -5")
    assert_op_error(op, inputs(np.zeros((1, 1, 1, 0), np.int32)), "lists 0 axes")
    assert_op_error(op, inputs(axes(0, 1, 2, 3, 3)), "lists 5 axes")
    assert_op_error(op, inputs(np.array([1.5], np.float32)), "non-integer")
    if op == "Moments_8to32":   # Mean and Sum zero-fix any finite range, as the device does (tools/hvx/op_mean.py, op_sum.py)
        assert_op_error(op, inputs(axes(3), 0.5, 2.0), "does not contain 0")
    assert_op_error(op, inputs(axes(3), -1.0, float("inf")), "finite")
    assert_op_error(op, inputs(axes(3), data=X.reshape(2, 3)), "expected 4-D")
    assert_op_error(op, inputs(axes(3), data=np.zeros((1, 1, 2, 0), np.uint8)), "nothing to reduce")


def test_mean_output_range_errors():
    assert_op_error("QuantizedMean_8", [X, MN, MX, axes(3), float("nan"), 1.0], "not finite")
    assert_op_error("QuantizedMean_8", [X, MN, MX, axes(3), 0.0, float("inf")], "not finite")


@pytest.mark.parametrize("lo,hi,code", [(1.0, 0.0, 255), (0.25, -0.75, 64), (2.0, 1.0, 255)])
def test_mean_output_min_above_max_runs_as_the_device(lo, hi, code):
    """A given output min above the max runs on the device (op_reducing_mean.c checks no output range): the
    output step ``(max - min) / 255`` is negative, so the multiplier ``in_step / (out_step * n)`` is too, which
    ``QuantizeMultiplierSmallerThanOne`` refuses (multiplier 0): every code is the output offset
    ``saturate_u8(roundf(-min / step))``, worked here by hand (-1 / (-1/255) = 255; -0.25 / (-1/255) = 63.75 -> 64;
    -2 / (-1/255) = 510 -> 255); the range is the one given."""
    q, mn, mx = run_op("QuantizedMean_8", [X, MN, MX, axes(3), lo, hi])
    assert (q == code).all() and q.shape == (1, 1, 2, 1) and (mn.item(), mx.item()) == (lo, hi)


def test_moments_too_many_elements():
    big = np.zeros((1, 1, 1, 2 ** 22 + 1), np.uint8)
    assert_op_error("Moments_8to32", [big, axes(3), MN, MX], "more than 4194304")
