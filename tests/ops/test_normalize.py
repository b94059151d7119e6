"""QuantizedLRN_8, L2Normalize_8, QuantizedInstanceNorm_8, QuantizedInstanceNormBG_8."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.quant import adjust_range
from hexnn_import.testing.opcheck import assert_op_error

# [-2, 127/64]: step 1/64, zero 128 (code 128 + 64 v is the real value v); [0, 255/64]: step 1/64, zero 0.
R64 = (-2.0, 1.984375)
P64 = (0.0, 3.984375)


def u8(values, shape=None) -> np.ndarray:
    a = np.asarray(values, dtype=np.uint8)
    return a.reshape(shape if shape is not None else (1, 1, 1, a.size))




def deq(q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    step = (mx - mn) / 255
    return (q.astype(np.float64) - round(-mn / step)) * step


def random_case(rng: np.random.Generator, shape):
    mn, mx = adjust_range(-rng.uniform(0.5, 4), rng.uniform(0.5, 4))
    r = (float(np.float32(mn)), float(np.float32(mx)))
    return rng.integers(0, 256, size=shape).astype(np.uint8), r


def assert_within_half_step(q, mn, mx, want):
    step = (mx.item() - mn.item()) / 255
    assert np.max(np.abs(deq(q, mn.item(), mx.item()) - want)) <= step * 0.5001


# ---------------------------------------------------------------- LRN

def test_lrn_by_hand():
    # x = [1, -1, 0.5, 0] along depth, window [1,1,1,3] (one each side), bias 1, alpha 3 (alpha/n = 1), beta 1
    # window sums of x^2 (zeros outside): 1+1 = 2, 1+1+0.25 = 2.25, 1+0.25+0 = 1.25, 0.25+0 = 0.25
    # y = x / (1 + sum): 1/3, -1/3.25 = -4/13, 0.5/2.25 = 2/9, 0
    # range [-4/13, 1/3]: z = (4/13)*255/(25/39) = 122.4, zi 122, zf 0.4; (zf-1)*mn = 0.1846 >= zf*mx = 0.1333
    #   -> grow max: step = (4/13)/122 = 4/1586, zero 122, max = -4/13 + 255*4/1586 = 532/1586
    # q = 122 + y*1586/4: 122 + 132.17 -> 254; 0; 122 + 88.11 -> 210; 122
    x = u8([192, 64, 160, 128])
    q, mn, mx = run_op("QuantizedLRN_8", [x, *R64, np.zeros((1, 1, 1, 3), np.int32), 1.0, 3.0, 1.0])
    assert q.ravel().tolist() == [254, 0, 210, 122]
    assert mn.item() == np.float32(-4 / 13)
    assert mx.item() == np.float32(532 / 1586)


def _lrn_reference(x: np.ndarray, win: tuple[int, int, int], bias: float, alpha: float, beta: float) -> np.ndarray:
    """Direct per-element LRN with a clipped centred window (independent of the kernel)."""
    out = np.empty_like(x)
    b_, h_, w_, d_ = x.shape
    for b in range(b_):
        for y in range(h_):
            for xx in range(w_):
                for d in range(d_):
                    lo = [y - (win[0] - 1) // 2, xx - (win[1] - 1) // 2, d - (win[2] - 1) // 2]
                    hi = [lo[0] + win[0], lo[1] + win[1], lo[2] + win[2]]
                    box = x[b, max(lo[0], 0):hi[0], max(lo[1], 0):hi[1], max(lo[2], 0):hi[2]]
                    s = np.sum(box * box)
                    out[b, y, xx, d] = x[b, y, xx, d] / (bias + alpha / np.prod(win) * s) ** beta
    return out


@pytest.mark.parametrize("win", [(1, 1, 5), (3, 3, 1), (2, 1, 4)])
def test_lrn_property(win):
    rng = np.random.default_rng(31)
    x, r = random_case(rng, (2, 4, 3, 6))
    q, mn, mx = run_op("QuantizedLRN_8", [x, *r, np.zeros((1, *win), np.float32), 2.0, 0.7, 0.75])
    want = _lrn_reference(deq(x, *r), win, 2.0, float(np.float32(0.7)), 0.75)
    assert mn.item() <= want.min() + 1e-6 and mx.item() >= want.max() - 1e-6
    assert_within_half_step(q, mn, mx, want)


def test_lrn_errors():
    x, w = u8([1, 2]), np.zeros((1, 1, 1, 3))
    assert_op_error("QuantizedLRN_8", [x, *R64, np.zeros((2, 1, 1, 3)), 1.0, 1.0, 0.5], "window shape")
    assert_op_error("QuantizedLRN_8", [x, *R64, np.zeros((1, 0, 1, 3)), 1.0, 1.0, 0.5], "window shape")
    assert_op_error("QuantizedLRN_8", [x, *R64, w, 0.0, 1.0, 0.5], "bias")
    assert_op_error("QuantizedLRN_8", [x, *R64, w, 1.0, -1.0, 0.5], "alpha")
    assert_op_error("QuantizedLRN_8", [x, *R64, w, 1.0, 1.0, math.inf], "beta")
    assert_op_error("QuantizedLRN_8", [x, 1.0, 2.0, w, 1.0, 1.0, 0.5], "input", "contain 0")


# ---------------------------------------------------------------- L2Normalize

def test_l2normalize_by_hand():
    # x (R64) = [[-0.75, 0], [1, 0]] as [1,1,2,2] (codes 80, 128, 192, 128)
    # out range [-1, 1] zero-fixed: z = 127.5 -> grow max -> [-1, 128/127], step 1/127, zero 127
    x = u8([80, 128, 192, 128], (1, 1, 2, 2))
    # default axis (depth): rows (-0.75, 0) -> (-1, 0); (1, 0) -> (1, 0); q = 127 y + 127 -> 0, 127, 254, 127
    q, mn, mx = run_op("L2Normalize_8", [x, *R64])
    assert q.ravel().tolist() == [0, 127, 254, 127]
    assert (mn.item(), mx.item()) == (-1.0, np.float32(128 / 127))
    # axis 2 (width): columns (-0.75, 1) / 1.25 = (-0.6, 0.8) -> 50.8 -> 51, 228.6 -> 229; (0, 0) -> 0 -> 127
    for axis in (2, -2):
        q, _, _ = run_op("L2Normalize_8", [x, *R64, np.array(axis, np.int32).reshape(1, 1, 1, 1)])
        assert q.ravel().tolist() == [51, 127, 229, 127]


def test_l2normalize_property():
    rng = np.random.default_rng(32)
    for axis in (3, 1, 0):
        x, r = random_case(rng, (2, 3, 4, 5))
        q, mn, mx = run_op("L2Normalize_8", [x, *r, axis])
        real = deq(x, *r)
        norm = np.sqrt(np.sum(real ** 2, axis=axis, keepdims=True))
        want = np.where(norm > 0, real / np.where(norm > 0, norm, 1), 0.0)
        assert_within_half_step(q, mn, mx, want)


def test_l2normalize_errors():
    assert_op_error("L2Normalize_8", [u8([1]), *R64, 4], "axis 4")
    assert_op_error("L2Normalize_8", [u8([1]), *R64, -5], "axis -5")
    assert_op_error("L2Normalize_8", [u8([1]), -1.0, math.nan], "input")


# ---------------------------------------------------------------- InstanceNorm

def test_instance_norm_by_hand():
    # [1,2,2,2]: channel 0 = -1, 1, -1, 1 (codes 64, 192); channel 1 = 0.5 everywhere (code 160)
    # channel 0: mean 0, variance 1 -> y = +-1/sqrt(1 + 1e-5) = +-s; channel 1: y = 0
    # range [-s, s]: z = 127.5 -> grow max: step s/127, zero 127 -> codes 0, 254; channel 1 -> 127
    x = u8([64, 160, 192, 160, 64, 160, 192, 160], (1, 2, 2, 2))
    q, mn, mx = run_op("QuantizedInstanceNorm_8", [x, *R64])
    assert q.ravel().tolist() == [0, 127, 254, 127, 0, 127, 254, 127]
    s = 1 / math.sqrt(1.00001)
    assert mn.item() == np.float32(-s) and mx.item() == np.float32(s * 128 / 127)


def _instance_reference(real: np.ndarray, eps: float) -> np.ndarray:
    mean = real.mean(axis=(1, 2), keepdims=True)
    var = real.var(axis=(1, 2), keepdims=True)
    return (real - mean) / np.sqrt(var + eps)


def test_instance_norm_property():
    rng = np.random.default_rng(33)
    x, r = random_case(rng, (2, 5, 4, 3))
    q, mn, mx = run_op("QuantizedInstanceNorm_8", [x, *r])
    assert_within_half_step(q, mn, mx, _instance_reference(deq(x, *r), 1e-5))


def test_instance_norm_bg_by_hand():
    # same input, epsilon 0; gamma (P64) codes [128, 64] = [2, 1]; beta (R64) codes [160, 96] = [0.5, -0.5]
    # channel 0: +-1 * 2 + 0.5 = -1.5, 2.5; channel 1 is constant: var + eps = 0 -> normalized 0 -> beta -0.5
    # range [-1.5, 2.5]: z = 95.625, zi 95, zf 0.625; (zf-1)*mn = 0.5625 < zf*mx = 1.5625 -> grow min:
    #   min = 2.5 * 96 / (95 - 254) = -240/159, step 2.5/159, zero 96
    # q = 96 + y * 159/2.5: -1.5 -> 0.6 -> 1; 2.5 -> 255; -0.5 -> 64.2 -> 64
    x = u8([64, 160, 192, 160, 64, 160, 192, 160], (1, 2, 2, 2))
    q, mn, mx = run_op("QuantizedInstanceNormBG_8", [x, *R64, 0.0, u8([128, 64]), *P64, u8([160, 96]), *R64])
    assert q.ravel().tolist() == [1, 64, 255, 64, 1, 64, 255, 64]
    assert mn.item() == np.float32(-240 / 159) and mx.item() == 2.5


def test_instance_norm_bg_property():
    rng = np.random.default_rng(34)
    x, r = random_case(rng, (2, 4, 4, 3))
    g, rg = random_case(rng, (1, 1, 1, 3))
    b, rb = random_case(rng, (1, 1, 1, 1))  # one beta for every channel
    q, mn, mx = run_op("QuantizedInstanceNormBG_8", [x, *r, 1e-3, g, *rg, b, *rb])
    want = _instance_reference(deq(x, *r), float(np.float32(1e-3))) * deq(g, *rg) + deq(b, *rb)
    assert_within_half_step(q, mn, mx, want)


def test_instance_norm_errors():
    x = u8([1, 2, 3, 4], (1, 2, 2, 1))
    g, b = u8([1]), u8([2])
    assert_op_error("QuantizedInstanceNorm_8", [x, 0.5, 1.0], "input", "contain 0")
    assert_op_error("QuantizedInstanceNorm_8", [np.zeros((1, 0, 2, 1), np.uint8), *R64], "no spatial")
    op = "QuantizedInstanceNormBG_8"
    assert_op_error(op, [x, *R64, -1.0, g, *P64, b, *R64], "epsilon")
    assert_op_error(op, [x, *R64, math.nan, g, *P64, b, *R64], "epsilon")
    assert_op_error(op, [x, *R64, 0.0, u8([1, 2]), *P64, b, *R64], "gamma has shape [1, 1, 1, 2]")
    assert_op_error(op, [x, *R64, 0.0, g, *P64, u8([1], (1, 1, 1, 1)).reshape(1, 1, 1, 1), 1.0, 2.0], "beta")
