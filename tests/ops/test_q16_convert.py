"""Convert_8_16, Convert_8_u16, Convert_16_8, Convert_u16_8, Quantize_16 (op texts;
conventions in ops/kernels/q16_common.py: 16-bit ranges are 65536 steps wide)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, u4


def s16(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int16).reshape(1, 1, 1, -1)


def u16(values) -> np.ndarray:
    return np.asarray(values, dtype=np.uint16).reshape(1, 1, 1, -1)


def test_convert_8_16_by_hand():
    # [-1, 1]: step 2/255, zero round_away(127.5) = 128 -> k = 32768 // 128 = 256
    q, mn, mx = run_op("Convert_8_16", [u4([0, 128, 255]), -1.0, 1.0])
    assert q.dtype == np.int16 and q.tolist() == [[[[-32768, 0, 32512]]]]
    # output range +-32768 * (2/255) / 256 = +-256/255
    assert (mn.item(), mx.item()) == (np.float32(-256 / 255), np.float32(256 / 255))
    # [0, 2.55]: zero 0 < 128 -> k = 32767 // 255 = 128; 255 * 128 = 32640; range +-32768 * 0.01 / 128 = +-2.56
    q, mn, mx = run_op("Convert_8_16", [u4([0, 1, 255]), 0.0, 2.55])
    assert q.tolist() == [[[[0, 128, 32640]]]]
    assert mx.item() == pytest.approx(2.56, rel=1e-6) and mn.item() == -mx.item()


@pytest.mark.parametrize("seed", range(6))
def test_convert_8_16_is_lossless(seed):
    rng = np.random.default_rng(seed)
    lo = -float(rng.uniform(0, 5))
    hi = float(rng.uniform(0.01, 5))
    q8 = np.arange(256, dtype=np.uint8).reshape(1, 1, 16, 16)
    q16, mn, mx = run_op("Convert_8_16", [q8, lo, hi])
    lo32, hi32 = float(np.float32(lo)), float(np.float32(hi))
    step8 = (hi32 - lo32) / 255
    zero8 = int(np.trunc(-lo32 / step8 + 0.5))                          # round half away, value >= 0
    real8 = (q8.astype(np.float64) - zero8) * step8
    k = 32767 // (255 - zero8) if zero8 < 128 else 32768 // zero8        # the integer gain of the module doc
    real16 = q16.astype(np.float64) * (step8 / k)                        # one output step = step8 / k
    assert np.allclose(real16, real8, rtol=0, atol=1e-12)
    assert mx.item() == pytest.approx(32768 * step8 / k, rel=1e-6)


def test_convert_8_u16_by_hand_and_lossless():
    # codes x257; range (min, max + (max - min) / 65536)
    q, mn, mx = run_op("Convert_8_u16", [u4([0, 1, 255]), -1.0, 1.0])
    assert q.dtype == np.uint16 and q.tolist() == [[[[0, 257, 65535]]]]
    assert (mn.item(), mx.item()) == (-1.0, np.float32(1 + 2 / 65536))
    # on a zero-exact range ([-0.61, 1.94]: step 0.01, zero 61) the values are kept (zero 61 * 257 = 15677)
    q8 = np.arange(256, dtype=np.uint8).reshape(1, 1, 1, 256)
    q, mn, mx = run_op("Convert_8_u16", [q8, -0.61, 1.94])
    lo, hi = mn.item(), mx.item()
    step = (hi - lo) / 65536
    assert round(-lo / step) == 15677
    real16 = (q.astype(np.float64) - 15677) * step
    real8 = (q8.astype(np.float64) - 61) * 0.01
    assert np.allclose(real16, real8, rtol=0, atol=2e-6)


def test_convert_16_8_by_hand():
    # input +-1: step 2**-15. Requested [-1, 1] -> adjust_range: z = 127.5, zi = 127,
    # (zf-1)*mn = 0.5 >= zf*mx = 0.5 -> max grows: range 255/127, step 1/127, zero 127
    x = s16([-32768, 0, 8192, 32767])
    q, mn, mx = run_op("Convert_16_8", [x, -1.0, 1.0])
    # reals -1, 0, 0.25, 0.99997: (x + 1) * 127 = 0, 127, 158.75 -> 159, 253.996 -> 254
    assert q.tolist() == [[[[0, 127, 159, 254]]]]
    assert (mn.item(), mx.item()) == (-1.0, np.float32(-1 + 255 / 127))


def test_convert_16_8_widens_to_twice_the_input_step(caplog):
    # requested [-0.001, 0.001] gives a step ~7.9e-6 < 2 * 2**-15: step becomes 2**-14, zero code 127 kept
    x = s16([2, -3, 16384, 0])
    with caplog.at_level(logging.INFO, logger="hexnn_import.ops.kernels.q16_convert"):
        q, mn, mx = run_op("Convert_16_8", [x, -1.0, 1.0, -0.001, 0.001])
    assert (mn.item(), mx.item()) == (-127 * 2.0 ** -14, 128 * 2.0 ** -14)
    # op_convert_16.c cvt_x16_8_execute: conv_ratio 0.5, rsh = max(7, ...) = 7, scale = 0.5 * 2**22 = 2**21,
    # offset 127 << 7 = 16256, rbias 64. 2: (2 * 2**21 + 2**14) >> 15 = 128, (128 + 16320) >> 7 = 128;
    # -3: -192 -> (16128) >> 7 = 126; 16384 (0.5, the text: saturates 255): 16384 * 2**21 = 2**35 wraps to 0 in
    # the device's 32-bit multiply -> 0 -> 16320 >> 7 = 127, which the engine follows; 0 -> 127.
    assert q.tolist() == [[[[128, 126, 127, 127]]]]
    assert any("expanded" in r.message for r in caplog.records)


def test_convert_u16_8_by_hand():
    # input [-1, 3]: step 2**-14, zero 16384. Requested = input range: adjust_range(-1, 3): z = 63.75,
    # zi = 63, (zf-1)*mn = 0.25 < zf*mx = 2.25 -> min grows to 3*64/(63-254) = -192/191; step 3/191
    x = u16([16384, 32768, 0])
    q, mn, mx = run_op("Convert_u16_8", [x, -1.0, 3.0])
    # reals 0, 1, -1: (x + 192/191) / (3/191) = (191x + 192)/3 -> 64, 127.67 -> 128, 0.33 -> 0
    assert q.tolist() == [[[[64, 128, 0]]]]
    assert mn.item() == np.float32(-192 / 191) and mx.item() == 3.0


@pytest.mark.parametrize("signed", [True, False])
def test_convert_16_8_within_half_a_step(signed):
    rng = np.random.default_rng(7)
    if signed:
        x = rng.integers(-32768, 32768, (1, 4, 4, 8)).astype(np.int16)
        op, ins, real = "Convert_16_8", (-2.0, 2.0), x.astype(np.float64) * 4 / 65536
    else:
        x = rng.integers(0, 65536, (1, 4, 4, 8)).astype(np.uint16)
        op, ins = "Convert_u16_8", (-0.5, 1.5)
        step = 2 / 65536
        real = (x.astype(np.float64) - round(0.5 / step)) * step
    q, mn, mx = run_op(op, [x, *ins, -1.0, 1.0])
    lo, hi = mn.item(), mx.item()
    step8 = (hi - lo) / 255
    zero = round(-lo / step8)
    got = (q.astype(np.float64) - zero) * step8
    # the device's fixed-point path (a 14-bit scale, two rounded shifts): within half a step and 1/32 more
    assert np.all(np.abs(got - np.clip(real, lo, hi)) <= step8 * (0.5 + 1 / 32))


def test_quantize_16_by_hand():
    # [-0.5, 2]: M = 2, step 4/65536 = 2**-14: 0.5 -> 8192, -2 -> -32768, 2 -> 32768 -> 32767,
    # 1.5 steps -> 2 (half away), +inf saturates
    x = f4([0.5, -2.0, 2.0, 1.5 * 2 ** -14, np.inf])
    q, mn, mx = run_op("Quantize_16", [x, -0.5, 2.0])
    assert q.dtype == np.int16 and q.tolist() == [[[[8192, -32768, 32767, 2, 32767]]]]
    assert (mn.item(), mx.item()) == (-2.0, 2.0)
    # a [0, 0] range uses the floor M = 1e-5
    _, mn, mx = run_op("Quantize_16", [f4([0.0]), 0.0, 0.0])
    assert mx.item() == np.float32(1e-5) and mn.item() == -mx.item()


def test_quantize_16_within_half_a_step():
    x = np.random.default_rng(3).uniform(-3, 3, (2, 3, 4, 5)).astype(np.float32)
    q, mn, mx = run_op("Quantize_16", [x, -1.0, 2.5])
    step = 5.0 / 65536
    assert (mn.item(), mx.item()) == (-2.5, 2.5)
    got = q.astype(np.float64) * step
    assert np.all(np.abs(got - np.clip(x, -2.5, 2.5 - step)) <= step / 2 + 1e-9)


def test_errors_name_node_and_op():
    assert_op_error("Convert_8_16", [u4([1]), 0.5, 1.0], "does not contain 0")
    assert_op_error("Convert_16_8", [s16([1]), -1.0, 1.0, -1.0], "4 inputs")
    assert_op_error("Convert_16_8", [s16([1]), -1.0, 0.5], "not symmetric")
    assert_op_error("Convert_u16_8", [np.array([[[[70000]]]], np.int32), -1.0, 1.0], "input data", "uint16")
    assert_op_error("Convert_u16_8", [u16([1]), -1.0, 1.0, 1.0, -1.0], "requested output")
    assert_op_error("Quantize_16", [f4([np.nan]), -1.0, 1.0], "NaN")
    assert_op_error("Quantize_16", [f4([0.0]), 1.0, -1.0], "min <= max")
