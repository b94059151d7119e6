"""RequantizationRange_32, Requantize_32to8, QuantizeDownAndShrinkRange_32to8 (SEMANTICS.md §4).

qint32 ranges are chosen as +-2**k so one code is a power of two:
one = (max - min) / 2**32, e.g. (+-2**24) -> 2**25 / 2**32 = 2**-7.
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, i4



# --- RequantizationRange_32 -----------------------------------------------

def test_requantization_range_by_hand():
    # one = 2**-7; min(0, -5) * 2**-7 = -0.0390625; max(0, 100) * 2**-7 = 0.78125
    mn, mx = run_op("RequantizationRange_32", [i4([3, -5, 100]), -2.0 ** 24, 2.0 ** 24])
    assert mn.shape == (1, 1, 1, 1) and mn.dtype == np.float32
    assert (mn.item(), mx.item()) == (-0.0390625, 0.78125)
    # all positive: min is min(0, 3) = 0, no zero fix; max 7 * 2**-7
    mn, mx = run_op("RequantizationRange_32", [i4([3, 7]), -2.0 ** 24, 2.0 ** 24])
    assert (mn.item(), mx.item()) == (0.0, 0.0546875)


# --- Requantize_32to8 -----------------------------------------------------

def test_requantize_fixed_point_path_g_below_1():
    # one = 2**22 / 2**32 = 2**-10; out [-1, 0.9921875] is zero-exact (z = 128);
    # sc = 255 / 1.9921875 = 128; g = 2**-10 * 128 = 1/8 < 1;
    # gi = 2**28, z = trunc(0.5 + 128) = 128; q = sat_u8(((x*2**28 + 2**30) >> 31) + 128)
    # i.e. floor(x/8 + 0.5) + 128:
    #   1000 -> 125 -> 253;  1004 -> floor(126.0) -> 254;  -1004 -> floor(-125.0) -> 3;
    #   -1012 -> floor(-126.0) -> 2;  2000 -> 250 -> 378 -> 255;  -1100 -> -137 -> 0;  0 -> 128
    x = i4([1000, 1004, -1004, -1012, 2000, -1100, 0])
    q, mn, mx = run_op("Requantize_32to8", [x, -2.0 ** 21, 2.0 ** 21, -1.0, 0.9921875])
    assert q.dtype == np.uint8
    assert q.ravel().tolist() == [253, 254, 3, 2, 255, 0, 128]
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)


def test_requantize_adjusts_requested_range():
    # requested [-1, 1] -> adjust_range grows max to 128/127 (z = 127.5 case), so
    # sc = 255 / (255/127) = 127, g = 127/1024; gi = 127 * 2**21, z = trunc(127.5) = 127:
    #   1000 -> floor(127000/1024 + 0.5) = floor(124.52) = 124 -> 251
    #   -1000 -> floor(-123.52) = -124 -> 3;   8 -> floor(0.99 + 0.5) = 1 -> 128
    q, mn, mx = run_op("Requantize_32to8", [i4([1000, -1000, 8]), -2.0 ** 21, 2.0 ** 21, -1.0, 1.0])
    assert q.ravel().tolist() == [251, 3, 128]
    assert (mn.item(), mx.item()) == (-1.0, np.float32(128 / 127))


def test_requantize_float_path_g_at_least_1():
    # one = 3*2**24 / 2**32 = 3*2**-8; out [-1, 0.9921875]: sc = 128, g = 1.5 >= 1;
    # q = sat_u8(trunc(1.5x + 0.5 + 128)):
    #   1 -> 130;  -1 -> 127;  3 -> 133;  -3 -> 124;  2 -> trunc(131.5) = 131;
    #   -86 -> trunc(-0.5) = 0;  85 -> 256 -> 255;  0 -> 128
    x = i4([1, -1, 3, -3, 2, -86, 85, 0])
    q, _, _ = run_op("Requantize_32to8", [x, -3.0 * 2 ** 23, 3.0 * 2 ** 23, -1.0, 0.9921875])
    assert q.ravel().tolist() == [130, 127, 133, 124, 131, 0, 255, 128]
    # g == 1 exactly takes the float path: one = 2**-7, q = trunc(x + 128.5)
    #   -129 -> trunc(-0.5) = 0;  127 -> 255;  -128 -> 0;  5 -> 133
    q, _, _ = run_op("Requantize_32to8", [i4([-129, 127, -128, 5]), -2.0 ** 24, 2.0 ** 24, -1.0, 0.9921875])
    assert q.ravel().tolist() == [0, 255, 0, 133]


@pytest.mark.parametrize("shift", [0, 16, 23, 26])
def test_requantize_property_within_one_step(shift):
    # data spans about 2**(32-shift) codes and the out range about the same reals, so
    # g = one * 255 / range ~ 255 / 2**(32-shift): shifts 0..23 take the g < 1 path, 26 the g >= 1 path
    rng = np.random.default_rng(shift)
    in_max = 2.0 ** 20
    one = 2 * in_max / 2.0 ** 32
    for _ in range(10):
        x = (rng.integers(-2 ** 31, 2 ** 31, size=(1, 4, 5, 6), dtype=np.int64) >> shift).astype(np.int32)
        real = x.astype(np.float64) * one
        lo = min(float(real.min()) * rng.uniform(0.3, 1.2), -1e-6)
        hi = max(float(real.max()) * rng.uniform(0.3, 1.2), 1e-6)
        q, mn, mx = run_op("Requantize_32to8", [x, -in_max, in_max, lo, hi])
        out_min, out_max = float(mn.item()), float(mx.item())
        step = (out_max - out_min) / 255
        deq = (q.astype(np.float64) - round(-out_min / step)) * step
        ref = np.clip(real, out_min, out_max)
        assert np.max(np.abs(deq - ref)) <= step * 1.001


# --- QuantizeDownAndShrinkRange_32to8 -------------------------------------

def test_quantize_down_and_shrink_by_hand():
    # one = 2**-7; data range (-128/128, 127/128) = (-1, 0.9921875), zero-exact;
    # sc = 128, g = 1 -> float path q = trunc(x + 128.5): -128 -> 0, 0 -> 128, 127 -> 255, 5 -> 133
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to8", [i4([-128, 0, 127, 5]), -2.0 ** 24, 2.0 ** 24])
    assert q.ravel().tolist() == [0, 128, 255, 133]
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)
    # one = 2**-10; data range (-1024/1024, 1016/1024) = (-1, 0.9921875); g = 1/8 < 1,
    # q = floor(x/8 + 0.5) + 128: -1024 -> 0, 0 -> 128, 1016 -> 255, 500 -> 63 -> 191
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to8", [i4([-1024, 0, 1016, 500]), -2.0 ** 21, 2.0 ** 21])
    assert q.ravel().tolist() == [0, 128, 255, 191]
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)


def test_quantize_down_and_shrink_all_zero_runs():
    # data range [0, 0] stays [0, 0] (op_requantize.c: quantize_adjust_range keeps it); every code is 0
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to8", [np.zeros((1, 2, 2, 2), np.int32), -1.0, 1.0])
    assert not q.any() and q.shape == (1, 2, 2, 2)
    assert (mn.item(), mx.item()) == (0.0, 0.0)


def test_quantize_down_and_shrink_property():
    rng = np.random.default_rng(5)
    x = rng.integers(-3000, 9000, size=(2, 3, 4, 5)).astype(np.int32)
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to8", [x, -2.0 ** 20, 2.0 ** 20])
    one = 2.0 ** 21 / 2.0 ** 32
    out_min, out_max = float(mn.item()), float(mx.item())
    assert out_min <= x.min() * one * (1 - 1e-6) and out_max >= x.max() * one * (1 - 1e-6)
    step = (out_max - out_min) / 255
    deq = (q.astype(np.float64) - round(-out_min / step)) * step
    assert np.max(np.abs(deq - x * one)) <= step * 0.501


# --- errors ---------------------------------------------------------------

def test_ranges_the_c_accepts():
    """op_requantize.c checks no range: what its float32 arithmetic gives (C oracle values)."""
    x = i4([1, 2])
    # level = (in_max - in_min) * 2**-32 = -2**-31: min = level * 0 = -0.0, max = level * 2 = -2**-30
    mn, mx = run_op("RequantizationRange_32", [x, 1.0, -1.0])
    assert (mn.item(), mx.item()) == (0.0, -2.0 ** -30)
    # an empty tensor: the C's loop starts from 0 -> [0, 0]
    mn, mx = run_op("RequantizationRange_32", [np.zeros((1, 1, 1, 0), np.int32), -1.0, 1.0])
    assert (mn.item(), mx.item()) == (0.0, 0.0)
    # an input range excluding 0: level 2**-32, the codes 1, 2 are ~0 -> the zero code 127 of [-1, 1.007874]
    q, mn, mx = run_op("Requantize_32to8", [x, 1.0, 2.0, -1.0, 1.0])
    assert q.ravel().tolist() == [127, 127] and (mn.item(), mx.item()) == (-1.0, np.float32(128.0 / 127.0))
    # requested min > max: quantize_adjust_range gives [0, 0]; the C's gain is inf, its offset NaN -> code 0
    q, mn, mx = run_op("Requantize_32to8", [x, -1.0, 1.0, 1.0, 0.0])
    assert q.ravel().tolist() == [0, 0] and (mn.item(), mx.item()) == (0.0, 0.0)


def test_errors():
    x = i4([1, 2])
    assert_op_error("Requantize_32to8", [x, -1.0, 1.0, float("nan"), 1.0], "requested output")
    assert_op_error("RequantizationRange_32", [x, -1.0, float("nan")], "input", "not finite")
    assert_op_error("Requantize_32to8", [np.full((1, 1, 1, 1), 1e10), -1.0, 1.0, -1.0, 1.0], "code range")
    assert_op_error("QuantizeDownAndShrinkRange_32to8", [x, -1.0, float("inf")], "not finite")
