"""QuantizedConv2d_16x16to32 and QuantizedTransposeConv2d_16x16p32to16 (op texts; SEMANTICS.md §3;
module doc of ops/kernels/q16_conv.py for the 2**-s scaling and the output range)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.registry import PAD_NA, PAD_SAME, PAD_VALID
from hexnn_import.testing.opcheck import assert_op_error, i4, stride


def u16(values, shape) -> np.ndarray:
    return np.asarray(values, dtype=np.uint16).reshape(shape)


def test_conv_16_by_hand_one_tap():
    # data [0, 1]: step 2**-16, zero 0; filter [-1, 1]: step 2**-15, zero 32768; 1 tap -> s = 0
    x = u16([1000, 2], (1, 1, 2, 1))
    w = u16([32768 + 3], (1, 1, 1, 1))
    acc, mn, mx = run_op("QuantizedConv2d_16x16to32", [x, w, 0.0, 1.0, -1.0, 1.0, stride(1, 1)], padding=PAD_VALID)
    assert acc.dtype == np.int32 and acc.tolist() == [[[[3000], [6]]]]
    # range +-2**31 * 2**-16 * 2**-15 = +-1
    assert (mn.item(), mx.item()) == (-1.0, 1.0)


def test_conv_16_by_hand_scaled_sums():
    # 1x1 filter over 3 channels: 3 taps -> s = ceil(log2 3) = 2, out = (acc + 2) >> 2
    w = u16([32769, 32769, 32769], (1, 1, 3, 1))                     # w - zero = 1
    x = u16([10, 20, 30, 10, 20, 32, 0, 0, 62], (1, 1, 3, 3))        # data zero 0 on [0, 1]
    acc, mn, mx = run_op("QuantizedConv2d_16x16to32", [x, w, 0.0, 1.0, -1.0, 1.0, stride(1, 1)], padding=PAD_VALID)
    # sums 60 -> 62 >> 2 = 15; 62 -> 64 >> 2 = 16 (a tie, 15.5, rounds up); 62 -> 16
    assert acc.tolist() == [[[[15], [16], [16]]]]
    assert mx.item() == 4.0 * 2.0 ** 31 * 2.0 ** -16 * 2.0 ** -15
    # negative sums: -62 -> (-62 + 2) >> 2 = -15 (-15.5 rounds toward +inf)
    wn = u16([32767, 32767, 32767], (1, 1, 3, 1))
    acc, _, _ = run_op("QuantizedConv2d_16x16to32", [x, wn, 0.0, 1.0, -1.0, 1.0, stride(1, 1)], padding=PAD_VALID)
    assert acc.tolist() == [[[[-15], [-15], [-15]]]]


def test_conv_16_takes_quint8_too():
    # data quint8 on [-1, 1] (zero 128), filter quint16 on [0, 1] (zero 0): (130 - 128) * 5 = 10, one tap
    x = np.array([[[[130]]]], np.uint8)
    acc, mn, mx = run_op("QuantizedConv2d_16x16to32", [x, u16([5], (1, 1, 1, 1)), -1.0, 1.0, 0.0, 1.0,
                                                      stride(1, 1)], padding=PAD_SAME)
    assert acc.tolist() == [[[[10]]]]
    assert mx.item() == pytest.approx(2.0 ** 31 * (2 / 255) * 2.0 ** -16)


def reference_conv16(x, xz, w, wz, sh, sw, same) -> np.ndarray:
    """Exact int64 sums by explicit loops over output pixels (SAME pads hold the zero code)."""
    b, h, wd, din = x.shape
    fh, fw, _, dout = w.shape
    if same:
        oh, ow = -(-h // sh), -(-wd // sw)
        top = max(0, (oh - 1) * sh + fh - h) // 2
        left = max(0, (ow - 1) * sw + fw - wd) // 2
    else:
        oh, ow, top, left = (h - fh) // sh + 1, (wd - fw) // sw + 1, 0, 0
    xp = np.full((b, h + 2 * fh, wd + 2 * fw, din), xz, np.int64)
    xp[:, fh:fh + h, fw:fw + wd] = x
    wc = w.astype(np.int64) - wz
    out = np.zeros((b, oh, ow, dout), np.int64)
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = fh + oy * sh - top, fw + ox * sw - left
            win = xp[:, y0:y0 + fh, x0:x0 + fw] - xz
            out[:, oy, ox] = np.einsum("bijc,ijcd->bd", win, wc)
    return out


@pytest.mark.parametrize("same", [True, False])
def test_conv_16_reference(same):
    rng = np.random.default_rng(4)
    x = rng.integers(0, 65536, (2, 6, 5, 3)).astype(np.uint16)
    w = rng.integers(0, 65536, (3, 2, 3, 4)).astype(np.uint16)
    acc, mn, mx = run_op("QuantizedConv2d_16x16to32", [x, w, -1.0, 3.0, -0.5, 0.5, stride(2, 1)],
                         padding=PAD_SAME if same else PAD_VALID)
    xz, wz = 16384, 32768                                # -(-1)/(4/65536), 0.5/(1/65536)
    s = math.ceil(math.log2(3 * 2 * 3))                  # 18 taps -> 5
    ref = reference_conv16(x, xz, w, wz, 2, 1, same)
    expected = np.clip((ref + 2 ** (s - 1)) >> s, -2 ** 31, 2 ** 31 - 1)
    assert np.array_equal(acc, expected)
    assert mx.item() == pytest.approx(2.0 ** 31 * (4 / 65536) * (1 / 65536) * 2 ** s)


def transpose_inputs(x, w, bias, lo, hi, pads=(0, 0, 0, 0), sh=2, sw=2, b_range=(-1.0, 1.0)):
    return [x, w, 0.0, 1.0, 0.0, 1.0, i4(list(pads)), stride(sh, sw), i4(bias), *b_range, lo, hi]


def test_transpose_conv_16_by_hand():
    # data and weights on [0, 1]: step 2**-16, zero 0. One input pixel x = 256 (2**-8), weights
    # [O=1, 2, 2, I=1] = 256, 512, 0, 1024 -> products 2**-16, 2**-15, 0, 2**-14 on the 2x2 stride-2 output
    x = u16([256], (1, 1, 1, 1))
    w = u16([256, 512, 0, 1024], (1, 2, 2, 1))
    q, mn, mx = run_op("QuantizedTransposeConv2d_16x16p32to16", transpose_inputs(x, w, [0], 0.0, 2.0 ** -12))
    # fixed range [0, 2**-12]: step 2**-28 -> codes 2**12, 2**13, 0, 2**14
    assert q.dtype == np.uint16 and q.tolist() == [[[[4096], [8192]], [[0], [16384]]]]
    assert (mn.item(), mx.item()) == (0.0, 2.0 ** -12)
    # qint32 bias on +-2**-5: one code 2**-4 / 2**32 = 2**-36; 256 codes = 2**-28 = one output step
    q, _, _ = run_op("QuantizedTransposeConv2d_16x16p32to16",
                     transpose_inputs(x, w, [256], 0.0, 2.0 ** -12, b_range=(-2.0 ** -5, 2.0 ** -5)))
    assert q.tolist() == [[[[4097], [8193]], [[1], [16385]]]]
    # auto ends: min 0, max 2**-14 * 65536/65535 -> step 2**-14 / 65535: 2**-14 -> 65535,
    # 2**-15 -> 32767.5 -> 32768, 2**-16 -> 16383.75 -> 16384
    q, mn, mx = run_op("QuantizedTransposeConv2d_16x16p32to16",
                       transpose_inputs(x, w, [0], float("-inf"), float("inf")))
    assert q.tolist() == [[[[16384], [32768]], [[0], [65535]]]]
    assert mn.item() == 0.0 and mx.item() == np.float32(2.0 ** -14 * 65536 / 65535)


def test_transpose_conv_16_crops_with_pads():
    # 2x2 input, 3x3 weights of ones, stride 1: full output 4x4; pads [1,1,1,1] keep the middle 2x2,
    # where every position sums all 4 input pixels: 1 + 2 + 3 + 4 = 10 (codes, steps 2**-16 each)
    x = u16([1, 2, 3, 4], (1, 2, 2, 1))
    w = u16([1] * 9, (1, 3, 3, 1))
    q, _, _ = run_op("QuantizedTransposeConv2d_16x16p32to16",
                     transpose_inputs(x, w, [0], 0.0, 65536 * 2.0 ** -32, pads=(1, 1, 1, 1), sh=1, sw=1))
    # output step (2**-16 / 65536) = 2**-32 = one product unit: codes are the sums
    assert q.tolist() == [[[[10], [10]], [[10], [10]]]]


def test_transpose_conv_16_reference():
    rng = np.random.default_rng(9)
    x = rng.integers(0, 65536, (1, 3, 2, 2)).astype(np.uint16)
    w = rng.integers(0, 65536, (3, 2, 3, 2)).astype(np.uint16)          # [O, H, W, I]
    bias = rng.integers(-2 ** 20, 2 ** 20, 3)
    ins = transpose_inputs(x, w, bias, -0.5, 1.5, pads=(1, 0, 0, 2), sh=2, sw=1)
    ins[2:6] = [-1.0, 1.0, 0.0, 2.0]                                      # data zero 32768, weights zero 0
    q, mn, mx = run_op("QuantizedTransposeConv2d_16x16p32to16", ins)
    xs, ws, b_one = 2 / 65536, 2 / 65536, 2 / 2 ** 32
    # scatter form: input pixel (y, x) adds x * w[o, i, j] to full output (2y + i, x + j)
    full = np.zeros((1, 2 * 2 + 2, 1 * 1 + 3, 3))
    xc = (x.astype(np.float64) - 32768) * xs
    wc = w.astype(np.float64) * ws
    for y in range(3):
        for xx in range(2):
            for i in range(2):
                for j in range(3):
                    full[0, 2 * y + i, xx + j] += wc[:, i, j, :] @ xc[0, y, xx]
    real = full[:, 1:, :2] + bias * b_one                                  # crops top 1, right 2
    lo, hi = mn.item(), mx.item()
    assert lo == -0.5 and hi == pytest.approx(1.5, abs=1e-4)             # zero-fixed for 65536 steps
    step = (hi - lo) / 65536
    got = (q.astype(np.float64) - round(-lo / step)) * step
    assert np.all(np.abs(got - np.clip(real, lo, hi - step)) <= step / 2 + 1e-9)


def test_errors_name_node_and_op():
    x = u16([1, 2, 3, 4], (1, 2, 2, 1))
    w = u16([1] * 4, (2, 2, 1, 1))
    ins = [x, w, 0.0, 1.0, 0.0, 1.0, stride(1, 1)]
    assert_op_error("QuantizedConv2d_16x16to32", ins, "SAME, VALID", padding=PAD_NA)
    assert_op_error("QuantizedConv2d_16x16to32", [x.astype(np.int16), *ins[1:]], "input data", "dtype int16",
                    padding=PAD_SAME)
    assert_op_error("QuantizedConv2d_16x16to32", [x, u16([1, 2], (1, 1, 2, 1)), *ins[2:]], "filter depth 2",
                    padding=PAD_SAME)
    # 64 * 64 * 1024 = 2**22 taps > 2**21 (views: no memory is used)
    big_x = np.broadcast_to(np.uint16(0), (1, 64, 64, 1024))
    big_w = np.broadcast_to(np.uint16(0), (64, 64, 1024, 1))
    assert_op_error("QuantizedConv2d_16x16to32", [big_x, big_w, *ins[2:]], "too long", padding=PAD_VALID)
    t = transpose_inputs(x, u16([1] * 4, (1, 2, 2, 1)), [0, 0], 0.0, 1.0)
    assert_op_error("QuantizedTransposeConv2d_16x16p32to16", t, "bias has 2 elements")
    t = transpose_inputs(x, u16([1] * 4, (1, 2, 2, 1)), [0], 1.0, 0.5)
    assert_op_error("QuantizedTransposeConv2d_16x16p32to16", t, "min 1.0 > max 0.5")
    t = transpose_inputs(x, u16([1] * 4, (1, 2, 2, 1)), [0], 0.0, 1.0)
    assert_op_error("QuantizedTransposeConv2d_16x16p32to16", t + [np.ones((1, 1, 1, 1), np.float32)],
                    "got 14 inputs")
