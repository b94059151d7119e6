"""QuantizedConv2d_8x8to32 and QuantizedMatMul_8x8to32 (op_conv2d.c conv2d_execute_ref, op_matmul.c).

Hand cases are worked in the comments; property cases compare the int32
accumulator with an independent float64 reference written here (explicit
padding by x_zero, a loop over filter taps).
"""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_SAME_CAFFE, PAD_VALID
from hexnn_import.testing.opcheck import reference_conv, stride, u8

CONV = "QuantizedConv2d_8x8to32"
MATMUL = "QuantizedMatMul_8x8to32"






# ---------------------------------------------------------------- hand cases

# Input range [-1, 1]: step 2/255, zero round_away(1 / (2/255)) = round_away(127.5) = 128.
# Filter range [-0.25, 0.75]: step 1/255, zero round_away(0.25 * 255) = round_away(63.75) = 64.
# x = [[10, 128], [200, 255]]  -> x - 128 = [[-118, 0], [72, 127]]
# w = [[64, 65], [0, 100]]     -> w - 64  = [[0, 1], [-64, 36]]   (2x2 filter, din = dout = 1)
HAND_X = u8([10, 128, 200, 255], (1, 2, 2, 1))
HAND_W = u8([64, 65, 0, 100], (2, 2, 1, 1))
HAND_RANGES = [-1.0, 1.0, -0.25, 0.75]
# one = (2/255) * (1/255) = 2/65025; out range = -+2**31 * one = -+2**32 / 65025.
HAND_OUT_MAX = 2.0 ** 32 / 65025.0

HAND_CASES = {
    # VALID: one window: -118*0 + 0*1 + 72*(-64) + 127*36 = -4608 + 4572 = -36.
    PAD_VALID: [[-36]],
    # SAME: pad = (2-1)*1 + 2 - 2 = 1, before 0, after 1 (padded taps are 0 after - x_zero):
    # (0,0) = -36; (0,1) = 0*0 + pad + 127*(-64) + pad = -8128;
    # (1,0) = 72*0 + 127*1 + pad row = 127; (1,1) = 127*0 = 0.
    PAD_SAME: [[-36, -8128], [127, 0]],
    # SAME_CAFFE: the extra pad goes before, window (i,j) covers rows i-1..i, cols j-1..j:
    # (0,0) = -118*36 = -4248; (0,1) = -118*(-64) + 0*36 = 7552;
    # (1,0) = -118*1 + 72*36 = 2474; (1,1) = full window = -36.
    PAD_SAME_CAFFE: [[-4248, 7552], [2474, -36]],
}


@pytest.mark.parametrize("padding", sorted(HAND_CASES))
def test_conv_hand_case(padding):
    acc, mn, mx = run_op(CONV, [HAND_X, HAND_W, *HAND_RANGES, stride(1, 1)], padding=padding)
    expected = np.asarray(HAND_CASES[padding], dtype=np.int32)
    assert acc.dtype == np.int32
    np.testing.assert_array_equal(acc, expected.reshape(1, *expected.shape, 1))
    assert mn.shape == (1, 1, 1, 1) and mn.dtype == np.float32
    assert mn.item() == pytest.approx(-HAND_OUT_MAX, rel=1e-6)
    assert mx.item() == pytest.approx(HAND_OUT_MAX, rel=1e-6)


def test_conv_hand_stride2_same():
    # 1x3x3x1 input all code 130 (x - 128 = 2), 1x1 filter code 66 (w - 64 = 2), stride 2, SAME:
    # out = ceil(3/2) = 2 per axis, pad = max(0, 1*2 + 1 - 3) = 0; each output = 2*2 = 4.
    x = u8([130] * 9, (1, 3, 3, 1))
    w = u8([66], (1, 1, 1, 1))
    acc, _, _ = run_op(CONV, [x, w, *HAND_RANGES, stride(2, 2)], padding=PAD_SAME)
    np.testing.assert_array_equal(acc, np.full((1, 2, 2, 1), 4, np.int32))


def test_matmul_hand_case():
    # A range [-1, 1]: zero 128. B range [-0.5, 0.5]: step 1/255, zero round_away(127.5) = 128.
    # A - 128 = [[0, 2, -8], [127, -128, 1]];  B - 128 = [[1, 0], [10, -28], [0, 127]]
    # C[0,0] = 0*1 + 2*10 + (-8)*0 = 20
    # C[0,1] = 0*0 + 2*(-28) + (-8)*127 = -56 - 1016 = -1072
    # C[1,0] = 127*1 + (-128)*10 + 1*0 = -1153
    # C[1,1] = 127*0 + (-128)*(-28) + 1*127 = 3584 + 127 = 3711
    a = u8([128, 130, 120, 255, 0, 129], (1, 1, 2, 3))
    b = u8([129, 128, 138, 100, 128, 255], (1, 1, 3, 2))
    acc, mn, mx = run_op(MATMUL, [a, b, -1.0, 1.0, -0.5, 0.5])
    np.testing.assert_array_equal(acc, np.asarray([[20, -1072], [-1153, 3711]], np.int32).reshape(1, 1, 2, 2))
    # one = (2/255) * (1/255), as in the convolution hand case.
    assert mn.item() == pytest.approx(-HAND_OUT_MAX, rel=1e-6)
    assert mx.item() == pytest.approx(HAND_OUT_MAX, rel=1e-6)


# ------------------------------------------------------------ property cases

@pytest.mark.parametrize("padding", [PAD_SAME, PAD_VALID, PAD_SAME_CAFFE])
@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (2, 1), (3, 2)])
def test_conv_matches_reference(padding, strides):
    rng = np.random.default_rng(17 * padding + 5 * strides[0] + strides[1])
    x = rng.integers(0, 256, (2, 9, 7, 3), dtype=np.uint8)
    w = rng.integers(0, 256, (3, 2, 3, 5), dtype=np.uint8)
    # Input range [-2, 3]: zero round_away(2 * 255 / 5) = 102; filter [-1, 1]: zero 128.
    acc, _, _ = run_op(CONV, [x, w, -2.0, 3.0, -1.0, 1.0, stride(*strides)], padding=padding)
    ref = reference_conv(x, 102, w, 128, *strides, padding)
    assert acc.shape == ref.shape
    np.testing.assert_array_equal(acc.astype(np.float64), ref)


def test_conv_extreme_codes_exact():
    # Every tap at its extreme: (0 - 255) * (255 - 0) over 3*3*64 taps = -37454400, exact in int32.
    x = np.zeros((1, 3, 3, 64), np.uint8)
    w = np.full((3, 3, 64, 2), 255, np.uint8)
    acc, _, _ = run_op(CONV, [x, w, -1.0, 0.0, 0.0, 1.0, stride(1, 1)], padding=PAD_VALID)
    np.testing.assert_array_equal(acc, np.full((1, 1, 1, 2), -255 * 255 * 9 * 64, np.int32))


def test_matmul_matches_reference():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (1, 1, 7, 11), dtype=np.uint8)
    b = rng.integers(0, 256, (1, 1, 11, 4), dtype=np.uint8)
    acc, _, _ = run_op(MATMUL, [a, b, -2.0, 3.0, -1.0, 1.0])
    ref = (a[0, 0].astype(np.float64) - 102) @ (b[0, 0].astype(np.float64) - 128)
    np.testing.assert_array_equal(acc[0, 0].astype(np.float64), ref)


# --------------------------------------------------------------- error cases

def _raises(op: str, inputs, padding=PAD_SAME, match: str = ""):
    with pytest.raises(OpError, match=rf"node n7 \({op}\).*{match}"):
        run_op(op, inputs, padding=padding, node="n7")


def _f32_product_range(a_min, a_max, b_min, b_max):
    """op_conv2d.c / op_matmul.c: ``(INT32_MIN, INT32_MAX) * ((a_max-a_min)/255 * (b_max-b_min)/255)``, float32."""
    f = np.float32
    lvl = f(f(f(a_max) - f(a_min)) / f(255)) * f(f(f(b_max) - f(b_min)) / f(255))
    return f(-2.0 ** 31) * lvl, f(2.0 ** 31) * lvl


def test_conv_range_is_float32_exact():
    _, mn, mx = run_op(CONV, [HAND_X, HAND_W, *HAND_RANGES, stride(1, 1)], padding=PAD_VALID)
    assert (mn.item(), mx.item()) == tuple(map(float, _f32_product_range(*HAND_RANGES)))


def test_conv_na_padding_pads_as_same():
    # nn_pad_compute_outsize_padding, NA: out = in // stride = 2, pad = (2-1)*1 - (2-2) = 1, before 0:
    # the SAME hand case.
    acc, _, _ = run_op(CONV, [HAND_X, HAND_W, *HAND_RANGES, stride(1, 1)], padding=PAD_NA)
    np.testing.assert_array_equal(acc, np.asarray(HAND_CASES[PAD_SAME], np.int32).reshape(1, 2, 2, 1))


def test_conv_input_range_excluding_zero():
    # conv2d_execute_ref: offset quantize_int(0, 0.5, 1) = roundf(-0.5 * (255 / 0.5)) = -255 (not clamped):
    # x + 255 = [265, 383, 455, 510], w - 64 = [0, 1, -64, 36]:
    # 383 - 455*64 + 510*36 = 383 - 29120 + 18360 = -10377.
    acc, mn, mx = run_op(CONV, [HAND_X, HAND_W, 0.5, 1.0, -0.25, 0.75, stride(1, 1)], padding=PAD_VALID)
    np.testing.assert_array_equal(acc, np.full((1, 1, 1, 1), -10377, np.int32))
    assert (mn.item(), mx.item()) == tuple(map(float, _f32_product_range(0.5, 1.0, -0.25, 0.75)))


def test_conv_valid_window_larger_than_input_is_empty():
    # VALID with a 3x3 window on a 2x2 input: nn_pad_compute_outsize gives 0 outputs (no error).
    acc, _, _ = run_op(CONV, [HAND_X, u8([0] * 9, (3, 3, 1, 1)), *HAND_RANGES, stride(1, 1)], padding=PAD_VALID)
    assert acc.shape == (1, 0, 0, 1) and acc.dtype == np.int32


def test_conv_sum_wraps_int32():
    # Ranges [100, 100.001]: offset quantize_int(0, ...) = roundf(-100 * (255 / 0.001)) (float32) = -25500002;
    # filter [-1, 1] offset 128. x = 255, w = 0: one tap (255 + o) * (0 - 128), summed over 3 taps in int32.
    f = np.float32
    off = int(np.round(f(f(0) - f(100.0)) * f(f(255.0) / f(f(100.001) - f(100.0)))))
    x = np.full((1, 1, 3, 1), 255, np.uint8)
    w = np.zeros((1, 3, 1, 1), np.uint8)
    acc, _, _ = run_op(CONV, [x, w, 100.0, 100.001, -1.0, 1.0, stride(1, 1)], padding=PAD_VALID)
    exact = 3 * (255 - off) * (0 - 128)
    wrapped = (exact + 2 ** 31) % 2 ** 32 - 2 ** 31
    assert exact != wrapped
    np.testing.assert_array_equal(acc, np.full((1, 1, 1, 1), wrapped, np.int32))


def test_conv_errors():
    good = [HAND_X, HAND_W, *HAND_RANGES, stride(1, 1)]
    _raises(CONV, [HAND_X, u8([1] * 8, (2, 2, 2, 1)), *good[2:]], match="depth")
    _raises(CONV, [HAND_X, HAND_W, -1.0, 1.0, 1.0, -1.0, good[6]], match="min")
    _raises(CONV, [HAND_X, HAND_W, -1.0, float("nan"), *good[4:]], match="finite")
    _raises(CONV, [HAND_X[0], *good[1:]], match="4-D")


def test_matmul_reads_a_flat():
    # matmul_execute: K = B's width (3); A is read flat as A.size // K rows, trailing values ignored.
    # A codes 0..7 (8 values) -> rows [0, 1, 2], [3, 4, 5] (6, 7 ignored); ranges [0, 1]: offsets 0.
    # B = [[1, 0], [0, 1], [1, 1]]: row0 -> [0 + 2, 1 + 2] = [2, 3]; row1 -> [3 + 5, 4 + 5] = [8, 9].
    a = u8(list(range(8)), (2, 1, 1, 4))
    b = u8([1, 0, 0, 1, 1, 1], (1, 1, 3, 2))
    acc, _, _ = run_op(MATMUL, [a, b, 0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(acc, np.asarray([[2, 3], [8, 9]], np.int32).reshape(1, 1, 2, 2))


def test_matmul_ranges_excluding_zero_clamp_the_offset():
    # matmul_execute uses quantize_uint8 (clamped): A [1, 2] -> offset 0, B [-3, -1] -> offset 255.
    a = u8([10], (1, 1, 1, 1))
    b = u8([5], (1, 1, 1, 1))
    acc, mn, mx = run_op(MATMUL, [a, b, 1.0, 2.0, -3.0, -1.0])
    assert acc.item() == 10 * (5 - 255)
    assert (mn.item(), mx.item()) == tuple(map(float, _f32_product_range(1.0, 2.0, -3.0, -1.0)))


def test_matmul_sum_wraps_int32():
    # 40000 taps of (255 - 0) * (255 - 0) = 2601000000 > 2**31 - 1: the int32 sum wraps to -1693967296.
    big_a = np.full((1, 1, 1, 40000), 255, np.uint8)
    big_b = np.full((1, 1, 40000, 1), 255, np.uint8)
    acc, _, _ = run_op(MATMUL, [big_a, big_b, 0.0, 1.0, 0.0, 1.0])
    assert acc.item() == 2601000000 - 2 ** 32


def test_matmul_errors():
    a = u8([0] * 6, (1, 1, 2, 3))
    _raises(MATMUL, [a, u8([0] * 12, (2, 1, 3, 2)), -1.0, 1.0, -1.0, 1.0], match="batch")
    _raises(MATMUL, [a, u8([0] * 12, (1, 2, 3, 2)), -1.0, 1.0, -1.0, 1.0], match="height")
