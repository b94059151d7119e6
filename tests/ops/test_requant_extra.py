"""Quantize_int32, Dequantize_qint32_f, Requantize_8to8 (SEMANTICS.md §2, §4).

(QuantizedBiasAdd_32p32to32 is tested in test_bias_add.py.)"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.ops.quant import adjust_range
from hexnn_import.testing.opcheck import assert_op_error, f4, i4, u4

# --- Quantize_int32 / Dequantize_qint32_f -----------------------------------


def test_quantize_int32_by_hand():
    # [-1, 2]: m = max(1, 2) = 2; q = round_away(x * 2**24 / 4) = round_away(x * 2**22); range (-512, 512)
    #   0.5 -> 2**21;  -1 -> -2**22;  3 -> 3 * 2**22 = 12582912 (beyond max, still fits int32)
    #   2**-23 -> 0.5 -> 1 (tie away);  -2**-23 -> -1;  600 -> 2516582400 -> sat 2**31-1;  -600 -> -2**31
    x = f4([0.5, -1.0, 3.0, 2.0 ** -23, -(2.0 ** -23), 600.0, -600.0, np.inf])
    q, mn, mx = run_op("Quantize_int32", [x, -1.0, 2.0])
    assert q.dtype == np.int32
    assert q.ravel().tolist() == [2 ** 21, -(2 ** 22), 12582912, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31 - 1]
    assert (mn.item(), mx.item()) == (-512.0, 512.0)
    # a range not holding 0 is fine: [1, 4] -> m = 4, range (-1024, 1024), q = x * 2**21
    q, mn, _ = run_op("Quantize_int32", [f4([1.0]), 1.0, 4.0])
    assert q.item() == 2 ** 21 and mn.item() == -1024.0


def test_dequantize_qint32_by_hand():
    # (-512, 512): one = 1024 / 2**32 = 2**-22
    out = run_op("Dequantize_qint32_f", [i4([2 ** 21, -3, 0, -(2 ** 31)]), -512.0, 512.0])[0]
    assert out.dtype == np.float32
    assert out.ravel().tolist() == [0.5, -3 * 2.0 ** -22, 0.0, -512.0]


def test_quantize_int32_round_trip_within_half_code():
    rng = np.random.default_rng(11)
    for _ in range(10):
        lo, hi = -rng.uniform(0, 10), rng.uniform(0.1, 10)
        x = rng.uniform(lo, hi, size=(2, 3, 4, 5)).astype(np.float32)
        q, mn, mx = run_op("Quantize_int32", [x, lo, hi])
        back = run_op("Dequantize_qint32_f", [q, mn, mx])[0].astype(np.float64)
        m = max(-float(np.float32(lo)), float(np.float32(hi)))
        one = m / 2.0 ** 23  # 512 m / 2**32
        assert np.max(np.abs(back - x)) <= 0.5 * one * (1 + 1e-6) + 1e-7 * np.abs(x).max()


def test_quantize_int32_errors():
    assert_op_error("Quantize_int32", [f4([1.0]), 0.0, float("inf")], "finite")
    assert_op_error("Dequantize_qint32_f", [i4([1]), float("nan"), 2.0], "finite")


def test_int32_converts_ranges_the_c_accepts():
    """op_quantize.c quantize32_execute / dequantize_i32_execute check no range (C oracle values)."""
    # min > max: m = fmaxf(-2, 1) = 1, recip = 2**24 / 2 -> q = x * 2**23, range (-256, 256)
    q, mn, mx = run_op("Quantize_int32", [f4([1.0, 0.5]), 2.0, 1.0])
    assert q.ravel().tolist() == [2 ** 23, 2 ** 22] and (mn.item(), mx.item()) == (-256.0, 256.0)
    # NaN data: the device's float -> int conversion gives -1
    q, _, _ = run_op("Quantize_int32", [f4([np.nan, 1.0]), -1.0, 1.0])
    assert q.ravel().tolist() == [-1, 2 ** 23]
    # a range excluding 0: step = (2 - 1) / 2**32, x = (float)q * step
    (x,) = run_op("Dequantize_qint32_f", [i4([1, -7, 2 ** 31 - 1]), 1.0, 2.0])
    assert x.ravel().tolist() == [2.0 ** -32, -7 * 2.0 ** -32, 0.5]


# --- Requantize_8to8 ----------------------------------------------------------

def test_requantize_8to8_unit_gain():
    # in [-1, 0.9921875]: step 2**-7, zero 128; out [-0.5, 1.4921875]: same step, zero 64
    # gain 1 -> q = sat_u8(x - 128 + 64)
    q, mn, mx = run_op("Requantize_8to8", [u4([0, 100, 128, 255]), -1.0, 0.9921875, -0.5, 1.4921875])
    assert q.ravel().tolist() == [0, 36, 64, 191]
    assert (mn.item(), mx.item()) == (-0.5, 1.4921875)


def test_requantize_8to8_gain_below_one():
    # in step 2**-7 (zero 128) -> out [-2, 1.984375] step 2**-6 (zero 128): gain 0.5, gi = 16384
    # q = ((2*d*16384 + 2**15) >> 16) + 128 = floor(d/2 + 0.5) + 128 with d = x - 128:
    #   d=-128 -> -64 -> 64;  d=-1 -> 0 -> 128;  d=1 -> 1 -> 129;  d=-3 -> floor(-1.0) -> 127;  d=127 -> 64 -> 192
    q, _, _ = run_op("Requantize_8to8", [u4([0, 127, 129, 125, 255]), -1.0, 0.9921875, -2.0, 1.984375])
    assert q.ravel().tolist() == [64, 128, 129, 127, 192]


def test_requantize_8to8_gain_above_one():
    # in [-1.5, 1.48828125]: step 3*2**-8, zero 128 -> out [-1, 0.9921875]: step 2**-7, zero 128
    # gain 1.5 = 0.75 * 2**1: gi = 24576, rsh = 14; q = ((d*24576 + 8192) >> 14) + 128 = floor(1.5d + 0.5) + 128
    #   d=1 -> 2 -> 130;  d=-1 -> -1 -> 127;  d=3 -> 5 -> 133;  d=-3 -> -4 -> 124;  d=84 -> 126 -> 254;  d=85 -> 128 -> 255
    q, _, _ = run_op("Requantize_8to8", [u4([129, 127, 131, 125, 212, 213]), -1.5, 1.48828125, -1.0, 0.9921875])
    assert q.ravel().tolist() == [130, 127, 133, 124, 254, 255]
    # gain 2 (in step 2**-6 -> out step 2**-7): frexp = (0.5, 2), gi = 16384, rsh = 13 -> 2d + 128
    #   d=10 -> 148;  d=64 -> 256 -> 255;  d=-64 -> 0;  d=-65 -> -2 -> 0
    q, _, _ = run_op("Requantize_8to8", [u4([138, 192, 64, 63]), -2.0, 1.984375, -1.0, 0.9921875])
    assert q.ravel().tolist() == [148, 255, 0, 0]


def test_requantize_8to8_property_within_one_step():
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(40):
        z_in, z_out = rng.integers(0, 256, size=2)
        s_in, s_out = (float(np.float32(rng.uniform(0.001, 0.1))) for _ in range(2))
        ins = (float(np.float32(-z_in * s_in)), float(np.float32((255 - z_in) * s_in)))
        outs = (float(np.float32(-z_out * s_out)), float(np.float32((255 - z_out) * s_out)))
        if adjust_range(*outs) != outs:
            continue  # float32 rounding moved zero off a code: not a valid request
        x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
        q = run_op("Requantize_8to8", [x, *ins, *outs])[0]
        real = (x.astype(np.float64) - z_in) * (ins[1] - ins[0]) / 255
        want = np.clip(real, outs[0], outs[1])
        got = (q.astype(np.float64) - z_out) * (outs[1] - outs[0]) / 255
        assert np.max(np.abs(got - want)) <= (outs[1] - outs[0]) / 255 * 0.51 + 1e-3 * (ins[1] - ins[0]) / 255
        checked += 1
    assert checked >= 20


def test_requantize_8to8_input_range_without_zero_runs_as_the_device():
    """op_requantize.c checks no input range: on [0.5, 1.0] its offset saturate_u8(roundf(-255 * 0.5 / 0.5))
    saturates to 0 (code 0 taken as 0.0), on [-3, -0.5] to 255. Worked by hand onto [-1, 0.9921875] (step 1/128,
    zero 128): gain (0.5 / 255) * 128 = 0.25098 -> round(gain * 2**15) = 8224; codes 1, 2, 255 ->
    (2 * d * 8224 + 2**15) >> 16 = 0, 1, 64, plus 128; on [-3, -0.5] code 255 is d = 0: the zero code 128."""
    q, mn, mx = run_op("Requantize_8to8", [u4([1, 2, 255]), 0.5, 1.0, -1.0, 0.9921875])
    assert q.ravel().tolist() == [128, 129, 192] and (mn.item(), mx.item()) == (-1.0, 0.9921875)
    q = run_op("Requantize_8to8", [u4([255]), -3.0, -0.5, -1.0, 0.9921875])[0]
    assert q.ravel().tolist() == [128]


def test_requantize_8to8_errors():
    x = u4([1, 2])
    assert_op_error("Requantize_8to8", [x, -1.0, 0.9921875, -1.0, 1.0], "no exact zero code")
    assert_op_error("Requantize_8to8", [x, 1.0, 0.5, -1.0, 0.9921875], "input", "min <= max")
    # out step = in step / 2**16: gain 2**16 = 0.5 * 2**17 -> exponent 17 > 15
    assert_op_error("Requantize_8to8", [x, -1.0, 0.9921875, -(2.0 ** -16), 0.9921875 * 2.0 ** -16], "too large")
