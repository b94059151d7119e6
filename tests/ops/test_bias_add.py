"""QuantizedBiasAdd_8p8to32 and QuantizedBiasAdd_32p32to32 (op_biasadd.c)."""
from __future__ import annotations

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error



def test_bias_add_by_hand():
    # input [-1, 0.9921875]: step 2**-7, zero 128.  bias [-2, 1.984375]: step 2**-6, zero 128.
    # M = max(1, 0.9921875, 2, 1.984375) * 2**17 = 2**18; one = 2*M / 2**32 = 2**-13;
    # in_step/one = 2**6 = 64, b_step/one = 2**7 = 128.
    # out = trunc((x-128)*64 + (b-128)*128 + 0.5), bias per channel b = [125, 128]:
    #   x=130, c0: 128 - 384 + 0.5 = -255.5 -> trunc -255
    #   x=200, c1: 72*64 + 0 + 0.5 = 4608.5 -> 4608
    #   x=128, c0: 0 - 384 + 0.5 = -383.5 -> -383
    #   x=0,   c1: -128*64 + 0.5 = -8191.5 -> -8191
    x = np.array([130, 200, 128, 0], np.uint8).reshape(1, 1, 2, 2)
    b = np.array([125, 128], np.uint8).reshape(1, 1, 1, 2)
    out, mn, mx = run_op("QuantizedBiasAdd_8p8to32", [x, b, -1.0, 0.9921875, -2.0, 1.984375])
    assert out.dtype == np.int32 and out.shape == (1, 1, 2, 2)
    assert out.ravel().tolist() == [-255, 4608, -383, -8191]
    assert (mn.item(), mx.item()) == (-262144.0, 262144.0)  # (-2**18, 2**18), min first


def test_bias_add_input_range_dominates():
    # input [0, 25.5]: step 0.1, zero 0; bias [-128/256, 127/256] = [-0.5, 0.49609375]:
    # step 2**-8, zero 128.
    # M = 25.5 * 2**17; one = 2*M/2**32 = 51 * 2**-15;
    # in_step/one = 0.1 * 2**15 / 51 = 3276.8/51 = 64.25098...; b_step/one = 2**-8 * 2**15/51 = 128/51 = 2.50980...
    #   x=10, b=128: 642.5098 + 0 + 0.5 = 643.0098 -> 643
    #   x=0,  b=0:   0 - 128*2.50980 + 0.5 = -321.2549 + 0.5 = -320.75 -> trunc -320
    #   x=255, b=255: 16384.0 + 127*2.5098 + 0.5 = 16384 + 318.745 + 0.5 = 16703.25 -> 16703
    x = np.array([10, 0, 255], np.uint8).reshape(1, 1, 3, 1)
    for code, bias_code in ((0, 128), (1, 0), (2, 255)):
        out, mn, mx = run_op("QuantizedBiasAdd_8p8to32",
                             [x[:, :, code:code + 1], np.array([[[[bias_code]]]], np.uint8),
                              0.0, 25.5, -0.5, 0.49609375])
        assert out.item() == [643, -320, 16703][code]
    assert mx.item() == np.float32(25.5 * 2 ** 17)


def test_bias_add_property_within_one_and_a_half_codes():
    # trunc(v + 0.5) rounds half up for v >= 0 (error <= 0.5 code) but moves a negative v
    # toward zero by up to 1.5 codes (v = -2.49 -> trunc(-1.99) = -1), so the bound is 1.5 codes
    rng = np.random.default_rng(3)
    for _ in range(10):
        in_min, in_max = -rng.uniform(0, 5), rng.uniform(0.1, 5)
        b_min, b_max = -rng.uniform(0.1, 20), rng.uniform(0, 20)
        x = rng.integers(0, 256, size=(2, 3, 4, 8)).astype(np.uint8)
        b = rng.integers(0, 256, size=(1, 1, 1, 8)).astype(np.uint8)
        out, mn, mx = run_op("QuantizedBiasAdd_8p8to32", [x, b, in_min, in_max, b_min, b_max])
        in_min, in_max, b_min, b_max = (float(np.float32(v)) for v in (in_min, in_max, b_min, b_max))
        one = (float(mx.item()) - float(mn.item())) / 2.0 ** 32
        xs, bs = (in_max - in_min) / 255, (b_max - b_min) / 255
        ref = (x.astype(np.int64) - round(-in_min / xs)) * xs + (b.astype(np.int64) - round(-b_min / bs)) * bs
        assert np.max(np.abs(out * one - ref)) <= one * 1.501


def test_bias_range_excluding_zero_as_the_c():
    # biasadd_8p8to32_execute accepts any range. bias [-3, -1]: offset quantize_uint(0, -3, -1) =
    # roundf(3 * 255 / 2) = 383 (clamped at 0 only, not at 255). input [-1, 0.9921875]: step 2**-7, zero 128.
    # M = max(1, 0.9921875, 3, -1) * 2**17 = 3 * 2**17; one = 2M / 2**32 = 3 * 2**-14;
    # in gain 2**-7 / one = 128/3 = 42.6667; bias gain (2/255) / one = 2**15/765 = 42.83399.
    #   x=128, b=0:   0 + (0 - 383) * 42.83399 + 0.5 = -16404.92 -> trunc -16404
    #   x=255, b=255: 127 * 42.6667 + (255 - 383) * 42.83399 + 0.5 = 5418.67 - 5482.75 + 0.5 = -63.58 -> -63
    x = np.array([128, 255], np.uint8).reshape(1, 1, 2, 1)
    for i, bias_code in enumerate((0, 255)):
        out, mn, mx = run_op("QuantizedBiasAdd_8p8to32", [x[:, :, i:i + 1], np.array([[[[bias_code]]]], np.uint8),
                                                          -1.0, 0.9921875, -3.0, -1.0])
        assert out.item() == [-16404, -63][i]
    assert (mn.item(), mx.item()) == (-393216.0, 393216.0)


def test_errors():
    x = np.zeros((1, 2, 2, 3), np.uint8)
    assert_op_error("QuantizedBiasAdd_8p8to32", [x, np.zeros((1, 1, 1, 4), np.uint8), -1.0, 1.0, -1.0, 1.0],
                    "bias has shape [1, 1, 1, 4]", "expected 3 values")
    assert_op_error("QuantizedBiasAdd_8p8to32", [x, np.zeros((1, 1, 1, 3), np.uint8), 2.0, 1.0, -1.0, 1.0],
                    "input", "min")
    assert_op_error("QuantizedBiasAdd_8p8to32", [x, np.zeros((1, 1, 1, 3), np.uint8), -1.0, 1.0, 0.0, float("inf")],
                    "bias", "finite")


# --- QuantizedBiasAdd_32p32to32 (op_biasadd.c biasadd_32p32to32_execute) ---------------------------

B32 = "QuantizedBiasAdd_32p32to32"


def i4(values, shape=None):
    a = np.asarray(values, np.int32)
    return a.reshape(shape if shape is not None else (1, 1, 1, a.size))


def test_bias_add_32_by_hand():
    # The output range is the INPUT range; bias * ((b_max - b_min) / (in_max - in_min)) is rounded half to
    # even (fast_roundf = convert_sf2w) and added with 32-bit wrap-around (Q6_P_vaddw_PP).
    # equal ranges: plain int add, wrapping: 2**31 - 6 + 10 -> -2**31 + 4
    out, mn, mx = run_op(B32, [i4([2 ** 31 - 6, -7]), i4([10, -3]), -1.0, 1.0, -1.0, 1.0])
    assert out.ravel().tolist() == [-2 ** 31 + 4, -10]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # bias wider (-4, 4): the bias is scaled by 8 / 2 = 4 onto the input's codes: [40, 80, 120]
    out, mn, mx = run_op(B32, [i4([6, -6, 2]), i4([10, 20, 30]), -1.0, 1.0, -4.0, 4.0])
    assert out.ravel().tolist() == [46, 74, 122]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # bias narrower (-0.5, 0.5): scale 0.5: 100 -> 50; -101 -> -50.5 -> -50 (half to even); 3 -> 1.5 -> 2
    out, mn, _ = run_op(B32, [i4([5, 7, 1, 1, 0, 0], shape=(1, 1, 2, 3)), i4([100, -101, 3]), -1.0, 1.0, -0.5, 0.5])
    assert out.ravel().tolist() == [55, -43, 3, 51, -50, 2]
    assert mn.item() == -1.0


def test_bias_add_32_zero_width_input_range():
    # in_level = 0: the scale is +inf; 5 * inf and -5 * inf saturate, 0 * inf = NaN converts to -1
    out, mn, mx = run_op(B32, [i4([1, 1, 1]), i4([5, -5, 0]), 0.0, 0.0, -1.0, 1.0])
    assert out.ravel().tolist() == [-2 ** 31, -2 ** 31 + 1, 0]    # (2**31 - 1) + 1 wraps; -2**31 + 1; -1 + 1
    assert (mn.item(), mx.item()) == (0.0, 0.0)


def test_bias_add_32_property():
    rng = np.random.default_rng(2)
    for _ in range(10):
        rx, rb = (float(np.float32(v)) for v in rng.uniform(0.5, 100, size=2))
        x = rng.integers(-2 ** 28, 2 ** 28, size=(2, 3, 4, 6)).astype(np.int32)
        b = rng.integers(-2 ** 20, 2 ** 20, size=(1, 1, 1, 6)).astype(np.int32)
        out, mn, mx = run_op(B32, [x, b, -rx, rx, -rb, rb])
        assert (mn.item(), mx.item()) == (-rx, rx)
        # the bias in input codes, within half a code plus the float32 rounding of the scale and product
        want = x + b * (rb / rx)
        assert np.max(np.abs(out - want)) <= 0.5 + 2 ** 20 * (rb / rx) * 2.0 ** -22


def test_bias_add_32_errors():
    x = np.zeros((1, 2, 2, 3), np.int32)
    assert_op_error(B32, [x, i4([1, 2]), -1.0, 1.0, -1.0, 1.0], "expected 3 values")
    assert_op_error(B32, [x, i4([1, 2, 3]), -1.0, 1.0, 1.0, 0.5], "bias", "min <= max")
