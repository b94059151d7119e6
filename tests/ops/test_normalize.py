"""QuantizedLRN_8, L2Normalize_8, QuantizedInstanceNorm_8, QuantizedInstanceNormBG_8."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.quant import adjust_range
from hexnn_import.testing.opcheck import assert_op_error, deq, u4

# [-2, 127/64]: step 1/64, zero 128 (code 128 + 64 v is the real value v); [0, 255/64]: step 1/64, zero 0.
R64 = (-2.0, 1.984375)
P64 = (0.0, 3.984375)


def random_case(rng: np.random.Generator, shape):
    mn, mx = adjust_range(-rng.uniform(0.5, 4), rng.uniform(0.5, 4))
    r = (float(np.float32(mn)), float(np.float32(mx)))
    return rng.integers(0, 256, size=shape).astype(np.uint8), r


def assert_within_half_step(q, mn, mx, want):
    step = (mx.item() - mn.item()) / 255
    assert np.max(np.abs(deq(q, mn.item(), mx.item()) - want)) <= step * 0.5001


# ---------------------------------------------------------------- LRN

def test_lrn_by_hand():
    # op_lrn.c: x = [1, -1, 0.5, 0] along depth; input 3 has shape [1,1,1,3] (taps one each side) and its first
    # value 3.0 is window_size; bias 1, alpha 3 (alpha / window_size = 1), beta 1
    # window sums of x^2: 2, 2.25, 1.25, 0.25 -> y = x / (1 + sum) = 1/3, -4/13, 2/9, 0
    # range [fminf(0, min y), fmaxf(0, max y)] = [-4/13, 1/3] (no zero fixing); quantize_uint8 onto it:
    # (y + 4/13) * 255 / (25/39) -> 255, 0, 210.8 -> 211, 122.4 -> 122
    x = u4([192, 64, 160, 128])
    win = np.full((1, 1, 1, 3), 3.0, np.float32)
    q, mn, mx = run_op("QuantizedLRN_8", [x, *R64, win, 1.0, 3.0, 1.0])
    assert q.ravel().tolist() == [255, 0, 211, 122]
    assert mn.item() == pytest.approx(-4 / 13, rel=1e-6) and mx.item() == pytest.approx(1 / 3, rel=1e-6)


def _lrn_reference(x: np.ndarray, win: tuple[int, int, int], bias: float, alpha: float, beta: float) -> np.ndarray:
    """Direct per-element LRN, op_lrn.c's window: e = (n - 1) // 2 taps each side (independent of the kernel)."""
    out = np.empty_like(x)
    e = [(n - 1) // 2 for n in win]
    b_, h_, w_, d_ = x.shape
    for b in range(b_):
        for y in range(h_):
            for xx in range(w_):
                for d in range(d_):
                    box = x[b, max(y - e[0], 0):y + e[0] + 1, max(xx - e[1], 0):xx + e[1] + 1,
                            max(d - e[2], 0):d + e[2] + 1]
                    s = np.sum(box * box)
                    out[b, y, xx, d] = x[b, y, xx, d] / (bias + alpha / np.prod(win) * s) ** beta
    return out


@pytest.mark.parametrize("win", [(1, 1, 5), (3, 3, 1), (2, 1, 4)])
def test_lrn_property(win):
    rng = np.random.default_rng(31)
    x, r = random_case(rng, (1, 4, 3, 6))
    size = np.full((1, *win), np.prod(win), np.float32)
    q, mn, mx = run_op("QuantizedLRN_8", [x, *r, size, 2.0, 0.7, 0.75])
    want = _lrn_reference(deq(x, *r), win, 2.0, float(np.float32(0.7)), 0.75)
    assert mn.item() == pytest.approx(min(0.0, want.min()), abs=1e-5)
    assert mx.item() == pytest.approx(max(0.0, want.max()), abs=1e-5)
    step = (mx.item() - mn.item()) / 255
    assert np.max(np.abs(q * step + mn.item() - want)) <= step * 0.5001 + 1e-5


def test_lrn_batches_use_the_range_so_far():
    # lrn_8_execute_ref quantizes batch k with the output range of batches 0..k
    rng = np.random.default_rng(32)
    x, r = random_case(rng, (2, 3, 2, 4))
    args = [np.full((1, 1, 1, 3), 3.0, np.float32), 1.5, 0.5, 0.75]
    q, mn, mx = run_op("QuantizedLRN_8", [x, *r, *args])
    q0, _, _ = run_op("QuantizedLRN_8", [x[:1], *r, *args])
    assert np.array_equal(q[0], q0[0])
    _, mn1, mx1 = run_op("QuantizedLRN_8", [x[1:], *r, *args])
    assert mn.item() <= mn1.item() and mx.item() >= mx1.item()


def test_lrn_errors():
    x, w = u4([1, 2]), np.full((1, 1, 1, 3), 3.0, np.float32)
    assert_op_error("QuantizedLRN_8", [x, *R64, np.full((2, 1, 1, 3), 3.0, np.float32), 1.0, 1.0, 0.5], "by batches")
    # window_size is input 3's first value: a "shape" tensor of zeros gives 0, which lrn_check rejects
    assert_op_error("QuantizedLRN_8", [x, *R64, np.zeros((1, 1, 1, 3), np.int32), 1.0, 1.0, 0.5], "window size 0")
    assert_op_error("QuantizedLRN_8", [x, *R64, w, 0.5, 1.0, 0.5], "bias >= 1")
    assert_op_error("QuantizedLRN_8", [x, *R64, w, 1.0, -1.0, 0.5], "alpha >= 0")
    assert_op_error("QuantizedLRN_8", [x, *R64, w, 1.0, 1.0, -0.5], "beta >= 0")
    q, mn, mx = run_op("QuantizedLRN_8", [x, 1.0, 2.0, w, 1.0, 1.0, 0.5])   # a range excluding 0 is accepted
    assert mn.item() == 0.0 and mx.item() > 0.0


# ---------------------------------------------------------------- L2Normalize

def test_l2normalize_by_hand():
    # op_l2normalize_8.c (the device code, issue 36). x (R64: zero code 128) = codes [[80, 128], [192, 128]] as
    # [1,1,2,2]: distances [[-48, 0], [64, 0]]; range [-1, 1] as given.
    x = u4([80, 128, 192, 128], (1, 1, 2, 2))
    # depth (hvx_l2norm_in_rows): row 0: S = 2304, l2 = 48, rsh = floor_log2(48) = 5,
    #   frac = (32768 // 48) << 5 = 682 * 32 = 21824; -48 * 21824 >> 13 = -127.875 -> -128 -> code 0; 0 -> 128.
    # row 1: S = 4096, l2 = 64 (a power of two): frac = 512 << 6 = 32768, the halfword -32768;
    #   64 * -32768 >> 14 = -128 -> code 0 (the row comes out negated, as on the device); 0 -> 128.
    q, mn, mx = run_op("L2Normalize_8", [x, *R64])
    assert q.ravel().tolist() == [0, 128, 0, 128]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # width (hvx_l2norm_in_cols, Newton reciprocal square roots): columns (-48, 64) / 80 = (-0.6, 0.8):
    # 128 + 128 y = 51.2, 230.4 (the device's 16-bit reciprocal gives 51, 230); a column of zeros -> 128.
    for axis in (2, -2):
        q, _, _ = run_op("L2Normalize_8", [x, *R64, np.array(axis, np.int32).reshape(1, 1, 1, 1)])
        assert q.ravel().tolist() == [51, 128, 230, 128]


def test_l2normalize_property():
    # Along axes other than depth the device's codes are within 3 of 128 + 128 * x / |x| (tools/hvx/op_l2norm.py).
    rng = np.random.default_rng(32)
    for axis in (2, 1, 0):
        x, r = random_case(rng, (2, 3, 4, 5))
        q, mn, mx = run_op("L2Normalize_8", [x, *r, axis])
        real = deq(x, *r)
        norm = np.sqrt(np.sum(real ** 2, axis=axis, keepdims=True))
        want = np.where(norm > 0, real / np.where(norm > 0, norm, 1), 0.0)
        assert (mn.item(), mx.item()) == (-1.0, 1.0)
        assert np.abs(q.astype(np.float64) - (128 + 128 * want)).max() <= 3


def test_l2normalize_errors():
    assert_op_error("L2Normalize_8", [u4([1]), *R64, 4], "axis 4")
    assert_op_error("L2Normalize_8", [u4([1]), *R64, -5], "axis -5")
    assert_op_error("L2Normalize_8", [u4([1]), -1.0, math.nan], "input")


# ---------------------------------------------------------------- InstanceNorm

def test_instance_norm_by_hand():
    # op_instancenorm.c execute_qinstancenorm_ref (integer statistics of the codes; the input range is not read):
    # channel 0 codes 64, 192 (x2): sm 512, ssq 81920, del = 4*81920 - 512**2 = 65536, inv = 4 / (256 + 4e-5),
    # y = (64 - 128) * inv = -s, +s; channel 1 is constant (160): skipped, its codes map to the zero code.
    # range [-s, s]: adjust_minmax_for_zero z = 127.5 -> move max to -s + 255 s / 127; codes 0, 254, zero 127
    x = u4([64, 160, 192, 160, 64, 160, 192, 160], (1, 2, 2, 2))
    q, mn, mx = run_op("QuantizedInstanceNorm_8", [x, *R64])
    assert q.ravel().tolist() == [0, 127, 254, 127, 0, 127, 254, 127]
    f = np.float32
    s = f(64) * (f(4) / (f(256) + f(f(1e-5) * f(4))))
    assert mn.item() == -s and mx.item() == f(-s - f(f(f(255) * -s) / f(127)))
    # the range of the input is not read: any range (also one excluding 0) gives the same result
    q2, mn2, mx2 = run_op("QuantizedInstanceNorm_8", [x, 0.5, 1.0])
    assert q2.tolist() == q.tolist() and (mn2.item(), mx2.item()) == (mn.item(), mx.item())


def test_instance_norm_batches_share_scratch_slots():
    # the C indexes its per-[b, d] scratch as [b*batches + d] and also stores invsqrt_variance[d]: with 2 batches
    # batch 1 overwrites batch 0's 1/stdev of channel 0. Batch 1 channel 0 = 10, 10, 200, 10: mean 57.5,
    # 1/stdev = 4 / sqrt(4*40300 - 230**2) = 0.012155; batch 0 channel 0 (+-64 around its mean) then maps to
    # +-0.778 instead of +-1. Range [-1, 1.732] (from the first pass, which still used batch 0's own 1/stdev):
    # zero code 93, so batch 0 gives 93 -+ 72 = 21, 165 (not 0, 254)
    x = u4([64, 160, 192, 160, 64, 160, 192, 160, 10, 10, 10, 10, 200, 10, 10, 10], (2, 2, 2, 2))
    q, mn, mx = run_op("QuantizedInstanceNorm_8", [x, *R64])
    assert q[0].ravel().tolist() == [21, 93, 165, 93, 21, 93, 165, 93]
    assert mn.item() == pytest.approx(-1.0, abs=1e-6) and mx.item() == pytest.approx(1.7419, abs=1e-3)


def _instance_reference(real: np.ndarray, eps: float) -> np.ndarray:
    mean = real.mean(axis=(1, 2), keepdims=True)
    var = real.var(axis=(1, 2), keepdims=True)
    return (real - mean) / np.sqrt(var + eps)


def test_instance_norm_property():
    # batch 1: no scratch aliasing; the codes follow (x - mean)/stdev within half a step plus the 10-bit scale
    rng = np.random.default_rng(33)
    x, r = random_case(rng, (1, 5, 4, 3))
    q, mn, mx = run_op("QuantizedInstanceNorm_8", [x, *r])
    want = _instance_reference(x.astype(np.float64), 0.0)
    step = (mx.item() - mn.item()) / 255
    got = mn.item() + q.astype(np.float64) * step
    assert np.max(np.abs(got - want)) <= 0.6 * step


def test_instance_norm_bg_by_hand():
    # same input, epsilon 0; gamma (P64) codes [128, 64] = [2, 1]; beta (R64) codes [160, 96] = [0.5, -0.5]
    # channel 0: +-1 * 2 + 0.5 = -1.5, 2.5; channel 1 is constant: var + eps = 0 -> normalized 0 -> beta -0.5
    # range [-1.5, 2.5]: z = 95.625, zi 95, zf 0.625; (zf-1)*mn = 0.5625 < zf*mx = 1.5625 -> grow min:
    #   min = 2.5 * 96 / (95 - 254) = -240/159, step 2.5/159, zero 96
    # q = 96 + y * 159/2.5: -1.5 -> 0.6 -> 1; 2.5 -> 255; -0.5 -> 64.2 -> 64
    x = u4([64, 160, 192, 160, 64, 160, 192, 160], (1, 2, 2, 2))
    q, mn, mx = run_op("QuantizedInstanceNormBG_8", [x, *R64, 0.0, u4([128, 64]), *P64, u4([160, 96]), *R64])
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
    x = u4([1, 2, 3, 4], (1, 2, 2, 1))
    g, b = u4([1]), u4([2])
    assert_op_error("QuantizedInstanceNorm_8", [np.zeros((1, 0, 2, 1), np.uint8), *R64], "empty")
    op = "QuantizedInstanceNormBG_8"
    assert_op_error(op, [x, *R64, -1.0, g, *P64, b, *R64], "epsilon")
    assert_op_error(op, [x, *R64, math.nan, g, *P64, b, *R64], "epsilon")
    assert_op_error(op, [x, *R64, 0.0, u4([1, 2]), *P64, b, *R64], "gamma has shape [1, 1, 1, 2]")
    assert_op_error(op, [x, *R64, 0.0, g, *P64, u4([1], (1, 1, 1, 1)).reshape(1, 1, 1, 1), 1.0, 2.0], "beta")
