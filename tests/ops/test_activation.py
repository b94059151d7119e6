"""QuantizedClamp_8, QuantizedNeg_8, QuantizedPRelu_8, QuantizedPRelu_8_V2 (SEMANTICS.md §1, §6).

Every result is q = round_away((real_result - out_min) / out_step) on the output range
(round_away acts on the code, so ties go up).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, random_operands, u4

A = (-1.0, 0.9921875)  # step 2**-7, zero 128
P = (-1.0, 2.984375)  # step 2**-6, zero 64


def zero_of(mn: float, mx: float) -> int:
    return math.floor(-mn / ((mx - mn) / 255) + 0.5)


def real(q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    return (q.astype(np.float64) - zero_of(mn, mx)) * (mx - mn) / 255


def random_range(rng: np.random.Generator) -> tuple[float, float]:
    return float(np.float32(-rng.uniform(0.05, 3))), float(np.float32(rng.uniform(0.05, 3)))


# --- Clamp ---------------------------------------------------------------------

def test_clamp_by_hand():
    # op_relu.c clamp_execute: codes clipped to [quantize_uint8(lo), quantize_uint8(hi)] over the input range,
    # which is copied to the output.
    # in [-8, 7.9375]: 255 / 15.9375 = 16 codes per unit, zero 128; clamp [0, 6] -> codes [128, 224]
    q, mn, mx = run_op("QuantizedClamp_8", [u4([128, 144, 130, 224, 240, 100]), -8.0, 7.9375, 0.0, 6.0])
    assert q.ravel().tolist() == [128, 144, 130, 224, 224, 128]
    assert (mn.item(), mx.item()) == (-8.0, 7.9375)
    # clamp [-inf, 0.5] on A (128 codes per unit): -inf saturates to code 0, 0.5 -> 1.5 * 128 = 192
    q, mn, mx = run_op("QuantizedClamp_8", [u4([0, 128, 192, 255, 129]), *A, -math.inf, 0.5])
    assert q.ravel().tolist() == [0, 128, 192, 192, 129]
    assert (mn.item(), mx.item()) == A


def test_clamp_property():
    rng = np.random.default_rng(21)
    for _ in range(10):
        rin = random_range(rng)
        c_lo, c_hi = sorted(float(np.float32(v)) for v in rng.uniform(-3, 3, size=2))
        x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
        q, mn, mx = run_op("QuantizedClamp_8", [x, *rin, c_lo, c_hi])
        assert (mn.item(), mx.item()) == rin
        # quantize_uint8's grid is min + code * step (the zero point is not rounded)
        step = (rin[1] - rin[0]) / 255
        want = np.clip(rin[0] + x * step, c_lo, c_hi)
        assert np.max(np.abs(rin[0] + q * step - want)) <= 0.5001 * step


def test_clamp_as_the_c_where_the_engine_used_to_refuse():
    x = u4([1, 200])
    # clamp_min > clamp_max: max with code(1.0) = 255 then min with code(-1.0) = 0 -> 0 everywhere
    q, _, _ = run_op("QuantizedClamp_8", [x, *A, 1.0, -1.0])
    assert q.ravel().tolist() == [0, 0]
    # an input range excluding 0, [0.5, 1] (510 codes per unit): clamp [0, 0.75] -> codes [0, 128]
    # (0.25 * 510 = 127.5 rounds away from zero); the range is copied
    q, mn, mx = run_op("QuantizedClamp_8", [x, 0.5, 1.0, 0.0, 0.75])
    assert q.ravel().tolist() == [1, 128] and (mn.item(), mx.item()) == (0.5, 1.0)


def test_clamp_errors():
    x = u4([1, 2])
    assert_op_error("QuantizedClamp_8", [x, *A, math.nan, 1.0], "clamp range")
    assert_op_error("QuantizedClamp_8", [x, 1.0, 0.5, 0.0, 1.0], "input", "min <= max")


# --- Neg -----------------------------------------------------------------------

def test_neg_by_hand():
    # op_neg.c unary_op_execute: HVX vnot (q = 255 - x) and the range (-in_max, -in_min), whatever the range
    q, mn, mx = run_op("QuantizedNeg_8", [u4([0, 1, 128, 200, 255]), *A])
    assert q.ravel().tolist() == [255, 254, 127, 55, 0]
    assert (mn.item(), mx.item()) == (-0.9921875, 1.0)
    q, mn, mx = run_op("QuantizedNeg_8", [u4([0, 1, 128, 255]), -1.0, 1.0])
    assert q.ravel().tolist() == [255, 254, 127, 0]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    q, mn, mx = run_op("QuantizedNeg_8", [u4([0, 77]), 1.5, 4.0])   # a range excluding 0 is mirrored too
    assert q.ravel().tolist() == [255, 178] and (mn.item(), mx.item()) == (-4.0, -1.5)


def test_neg_property():
    rng = np.random.default_rng(22)
    for [(x, rin)] in random_operands(rng, 10, random_range, (2, 3, 4, 5)):
        q, mn, mx = run_op("QuantizedNeg_8", [x, *rin])
        lo, hi = mn.item(), mx.item()
        assert (lo, hi) == (-np.float32(rin[1]), -np.float32(rin[0]))
        # min + (255 - x) * step = -(min + x * step) on the mirrored range
        got = lo + q.astype(np.float64) * (hi - lo) / 255
        assert np.max(np.abs(got + (rin[0] + x * (rin[1] - rin[0]) / 255))) <= 1e-6


def test_neg_errors():
    assert_op_error("QuantizedNeg_8", [u4([1]), -1.0, math.inf], "not finite")


# --- PRelu_8 / PRelu_8_V2 ----------------------------------------------------------

def test_prelu_by_hand():
    # P = [-1, 2.984375]: step 2**-6, zero 64; alphas per channel [0.25, 1.0]
    # out range [min(0, 1.0 * -1), max(2.984375, 0.25 * -1)] = P itself
    # channel 0: r < 0 -> 0.25 r: code 64 + 64 * 0.25 * (x-64)/64 = 64 + (x-64)/4
    #   0 -> 48;  32 -> 56;  62 -> 63.5 -> 64;  100 -> 100 (r >= 0 unchanged)
    # (the device's 8-bit form, op_prelu.c prelu_1D_alpha: frac (uint16)(0.25 * 65536) = 16384, f8 = 64,
    #  offset 64 - ((64 * 16384 + 0x8000) >> 16) = 48: 0 -> 48, 32 -> (2048 + 128) >> 8 = 8 + 48 = 56, 62 -> 64)
    # channel 1: alpha 1 on the device (issue 36): (uint16)65536 wraps to 0, so f8 = 0 and offset = 64:
    #   codes below 64 become ((x * 0 + 0x80) >> 8) + 64 = 64 (not the identity); 255 passes
    x = u4([0, 0, 32, 62, 62, 255, 100, 255], shape=(1, 1, 4, 2))
    q, mn, mx = run_op("QuantizedPRelu_8", [x, *P, f4([0.25, 1.0])])
    assert q[..., 0].ravel().tolist() == [48, 56, 64, 100]
    assert q[..., 1].ravel().tolist() == [64, 64, 255, 255]
    assert (mn.item(), mx.item()) == P


def test_prelu_v2_by_hand():
    # alphas quint8 on [0, 0.99609375] (step 2**-8, zero 0): codes [64, 255] -> [0.25, 0.99609375]; out given as P
    # channel 0 as in test_prelu_by_hand: 0 -> 48, 32 -> 56, 62 -> 64, 100 -> 100
    # channel 1: 64 + 0.99609375 * (x - 64):  0 -> 0.25 -> 0;  62 -> 62.0078 -> 62;  255 -> 255
    x = u4([0, 0, 32, 62, 62, 255, 100, 255], shape=(1, 1, 4, 2))
    q, mn, mx = run_op("QuantizedPRelu_8_V2", [x, *P, u4([64, 255]), 0.0, 0.99609375, *P])
    assert q[..., 0].ravel().tolist() == [48, 56, 64, 100]
    assert q[..., 1].ravel().tolist() == [0, 62, 255, 255]
    assert (mn.item(), mx.item()) == P


def test_prelu_v2_default_range_by_hand():
    # No output range given: the device's (op_prelu_v2_d32.c prelu_opt_execute, float32) from the alphas' range
    # ends, not the alpha values present: min = in_min * alpha_max = -1 * 0.99609375, max = fmaxf(2.984375,
    # -1 * 0) = 2.984375; adjust_minmax_for_zero: z = 255 * 0.99609375 / 3.98046875 = 63.8126, (zf - 1) * mn =
    # 0.187 < zf * mx = 2.42, so the min moves: 2.984375 * 64 / (63 - 254) = -1.0 -> P again, the same codes
    # (the values present, alphas 0.25 only, would have given [-0.25, 2.984375] before the zero fix)
    x = u4([0, 32, 62, 100], shape=(1, 1, 4, 1))
    q, mn, mx = run_op("QuantizedPRelu_8_V2", [x, *P, u4([64]), 0.0, 0.99609375])
    assert (mn.item(), mx.item()) == P
    assert q.ravel().tolist() == [48, 56, 64, 100]


def test_prelu_property_both_versions():
    rng = np.random.default_rng(23)
    for (x, rin), (al, ral) in random_operands(rng, 6, random_range, (2, 3, 4, 5), (1, 1, 1, 5)):
        alpha_real = real(al, *ral)
        r = real(x, *rin)
        want = np.where(r >= 0, r, alpha_real * r)
        q, mn, mx = run_op("QuantizedPRelu_8_V2", [x, *rin, al, *ral], state={})
        lo, hi = mn.item(), mx.item()
        assert np.max(np.abs(real(q, lo, hi) - want)) <= 0.5001 * (hi - lo) / 255
        # QuantizedPRelu_8 (op_prelu.c prelu_execute_hvx, the device): alphas in [0, 1], the 8-bit frac >> 8
        # (alpha truncated to 1/256: up to one code over 255 codes) and two roundings, range passes
        alpha_f = rng.uniform(0, 1, size=(1, 1, 1, 5)).astype(np.float32)
        q, mn, mx = run_op("QuantizedPRelu_8", [x, *rin, alpha_f])
        assert (mn.item(), mx.item()) == (np.float32(rin[0]), np.float32(rin[1]))
        want = np.where(r >= 0, r, alpha_f.astype(np.float64) * r)
        assert np.max(np.abs(real(q, *rin) - want)) <= 2.0001 * (rin[1] - rin[0]) / 255


def test_prelu_fixed_point_rule():
    # range [-1, 2.984375]: zero code 64. alpha 1/3: frac = (uint32)(65536 * 0.33333334f) = 21845,
    # offset = 64 - ((64 * 21845 + 0x8000) >> 16) = 64 - 21 = 43; x < 64: ((x * 21845 + 0x8000) >> 16) + 43
    x = u4([0, 1, 3, 63, 64, 200])
    q, mn, mx = run_op("QuantizedPRelu_8", [x, *P, f4([1 / 3])])
    assert q.ravel().tolist() == [43, 43, 44, 64, 64, 200]
    # a range that excludes 0 is used as is: zero code 0 (nothing below it), range copied
    q, mn, mx = run_op("QuantizedPRelu_8", [x, 1.0, 2.0, f4([0.5])])
    assert q.ravel().tolist() == x.ravel().tolist() and (mn.item(), mx.item()) == (1.0, 2.0)


def test_prelu_errors():
    x = np.zeros((1, 2, 2, 3), np.uint8)
    assert_op_error("QuantizedPRelu_8", [x, *A, f4([0.1, 0.2])], "alphas depth 2 does not match the input depth 3")
    assert_op_error("QuantizedPRelu_8", [x, *A, f4([math.nan])], "alphas must lie in [0, 1]")
    assert_op_error("QuantizedPRelu_8", [x, *A, f4([1.5])], "alphas must lie in [0, 1]")
    assert_op_error("QuantizedPRelu_8", [x, *A, f4([0.5, -0.1, 0.2])], "alphas must lie in [0, 1]")
    assert_op_error("QuantizedPRelu_8", [x, *A, np.zeros((1, 1, 1, 0), np.float32)], "alphas tensor has shape")
    assert_op_error("QuantizedPRelu_8_V2", [x, *A, u4([1, 2, 3]), 0.5, 1.0], "alpha", "does not contain 0")
    state: dict = {}
    run_op("QuantizedPRelu_8_V2", [x, *A, u4([1, 2, 3]), 0.0, 1.0], state=state)
    assert_op_error("QuantizedPRelu_8_V2", [x, *A, u4([1]), 0.0, 1.0], "alphas shape changed", state=state)
