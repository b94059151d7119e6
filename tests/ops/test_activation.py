"""QuantizedClamp_8, QuantizedNeg_8, QuantizedPRelu_8, QuantizedPRelu_8_V2 (SEMANTICS.md §1, §6).

Every result is q = round_away((real_result - out_min) / out_step) on the output range
(round_away acts on the code, so ties go up).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, u4

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
    # in [-8, 7.9375]: step 1/16, zero 128; clamp [0, 6] -> out [clip(-8), clip(7.9375)] = [0, 6]: step 6/255, zero 0
    # code = clip((x-128)/16, 0, 6) * 255/6:  128 -> 0;  144 (1.0) -> 42.5 -> 43;  130 (0.125) -> 5.3125 -> 5;
    #   224 (6.0) -> 255;  240 (7.0 -> 6) -> 255;  100 (negative -> 0) -> 0
    q, mn, mx = run_op("QuantizedClamp_8", [u4([128, 144, 130, 224, 240, 100]), -8.0, 7.9375, 0.0, 6.0])
    assert q.ravel().tolist() == [0, 43, 5, 255, 255, 0]
    assert (mn.item(), mx.item()) == (0.0, 6.0)
    # clamp [-inf, 0.5] on A -> out [-1, 0.5]: zero 255/1.5 = 170 exactly, step 1/170; code = 170 + 170 * r
    #   0 (-1) -> 0;  128 -> 170;  192 (0.5) -> 255;  255 (0.99 -> 0.5) -> 255;  129 (1/128) -> 171.33 -> 171
    q, mn, mx = run_op("QuantizedClamp_8", [u4([0, 128, 192, 255, 129]), *A, -math.inf, 0.5])
    assert q.ravel().tolist() == [0, 170, 255, 255, 171]
    assert (mn.item(), mx.item()) == (-1.0, 0.5)


def test_clamp_property():
    rng = np.random.default_rng(21)
    for _ in range(10):
        rin = random_range(rng)
        c_lo, c_hi = sorted(float(np.float32(v)) for v in rng.uniform(-3, 3, size=2))
        x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
        q, mn, mx = run_op("QuantizedClamp_8", [x, *rin, c_lo, c_hi])
        lo, hi = mn.item(), mx.item()
        want = np.clip(real(x, *rin), c_lo, c_hi)
        assert np.max(np.abs(real(q, lo, hi) - want)) <= 0.5001 * (hi - lo) / 255


def test_clamp_errors():
    x = u4([1, 2])
    assert_op_error("QuantizedClamp_8", [x, *A, 1.0, -1.0], "clamp range")
    assert_op_error("QuantizedClamp_8", [x, *A, math.nan, 1.0], "clamp range")
    assert_op_error("QuantizedClamp_8", [x, 0.5, 1.0, 0.0, 1.0], "input", "does not contain 0")


# --- Neg -----------------------------------------------------------------------

def test_neg_by_hand():
    # A is zero-exact: out = [-0.9921875, 1], zero 127 = 255 - 128, so q = 255 - x
    q, mn, mx = run_op("QuantizedNeg_8", [u4([0, 1, 128, 200, 255]), *A])
    assert q.ravel().tolist() == [255, 254, 127, 55, 0]
    assert (mn.item(), mx.item()) == (-0.9921875, 1.0)
    # [-1, 1]: step 2/255, zero round_away(127.5) = 128. Out adjust_range(-1, 1): z = 127.5, zi 127, zf .5,
    # (zf-1)*mn = 0.5 >= zf*mx = 0.5 -> grow max: range 255/127, out [-1, 128/127], step 1/127, zero 127.
    # code = 127 - (x-128) * (2/255) * 127:  0 -> 254.498 -> 254;  1 -> 253.502 -> 254;  128 -> 127;  255 -> 0.498 -> 0
    q, mn, mx = run_op("QuantizedNeg_8", [u4([0, 1, 128, 255]), -1.0, 1.0])
    assert q.ravel().tolist() == [254, 254, 127, 0]
    assert (mn.item(), mx.item()) == (-1.0, np.float32(128 / 127))


def test_neg_property():
    rng = np.random.default_rng(22)
    for _ in range(10):
        rin = random_range(rng)
        x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
        q, mn, mx = run_op("QuantizedNeg_8", [x, *rin])
        lo, hi = mn.item(), mx.item()
        assert np.max(np.abs(real(q, lo, hi) + real(x, *rin))) <= 0.5001 * (hi - lo) / 255


def test_neg_errors():
    assert_op_error("QuantizedNeg_8", [u4([1]), 1.0, 1.0], "input")
    assert_op_error("QuantizedNeg_8", [u4([1]), -1.0, math.inf], "not finite")


# --- PRelu_8 / PRelu_8_V2 ----------------------------------------------------------

def test_prelu_by_hand():
    # P = [-1, 2.984375]: step 2**-6, zero 64; alphas per channel [0.25, 1.0]
    # out range [min(0, 1.0 * -1), max(2.984375, 0.25 * -1)] = P itself
    # channel 0: r < 0 -> 0.25 r: code 64 + 64 * 0.25 * (x-64)/64 = 64 + (x-64)/4
    #   0 -> 48;  32 -> 56;  62 -> 63.5 -> 64;  100 -> 100 (r >= 0 unchanged)
    # channel 1: alpha 1 -> identity: 0, 62, 255
    x = u4([0, 0, 32, 62, 62, 255, 100, 255], shape=(1, 1, 4, 2))
    q, mn, mx = run_op("QuantizedPRelu_8", [x, *P, f4([0.25, 1.0])])
    assert q[..., 0].ravel().tolist() == [48, 56, 64, 100]
    assert q[..., 1].ravel().tolist() == [0, 62, 255, 255]
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


def test_prelu_property_both_versions():
    rng = np.random.default_rng(23)
    for _ in range(6):
        rin, ral = random_range(rng), random_range(rng)
        x = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
        al = rng.integers(0, 256, size=(1, 1, 1, 5)).astype(np.uint8)
        alpha_real = real(al, *ral)
        r = real(x, *rin)
        want = np.where(r >= 0, r, alpha_real * r)
        q, mn, mx = run_op("QuantizedPRelu_8_V2", [x, *rin, al, *ral], state={})
        lo, hi = mn.item(), mx.item()
        assert np.max(np.abs(real(q, lo, hi) - want)) <= 0.5001 * (hi - lo) / 255
        alpha_f = alpha_real.astype(np.float32)
        q, mn, mx = run_op("QuantizedPRelu_8", [x, *rin, alpha_f])
        lo, hi = mn.item(), mx.item()
        want = np.where(r >= 0, r, alpha_f.astype(np.float64) * r)
        assert np.max(np.abs(real(q, lo, hi) - want)) <= 0.5001 * (hi - lo) / 255


def test_prelu_errors():
    x = np.zeros((1, 2, 2, 3), np.uint8)
    assert_op_error("QuantizedPRelu_8", [x, *A, f4([0.1, 0.2])], "alphas has shape [1,1,1,2]", "input data shape [1,2,2,3]")
    assert_op_error("QuantizedPRelu_8", [x, *A, f4([math.nan])], "alphas contains NaN")
    assert_op_error("QuantizedPRelu_8", [x, *A, np.zeros((1, 1, 1, 0), np.float32)], "empty")
    assert_op_error("QuantizedPRelu_8_V2", [x, *A, u4([1, 2, 3]), 0.5, 1.0], "alpha", "does not contain 0")
    state: dict = {}
    run_op("QuantizedPRelu_8_V2", [x, *A, u4([1, 2, 3]), 0.0, 1.0], state=state)
    assert_op_error("QuantizedPRelu_8_V2", [x, *A, u4([1]), 0.0, 1.0], "alphas shape changed", state=state)
