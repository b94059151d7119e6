"""Binary quint8 ops: Add/Sub_8p8to32, Mul_8x8to32, Mul_8x8to8, Add_8p8to8, Maximum/Minimum,
Max_8/Min_8, and the broadcast helper (SEMANTICS.md §1, §3, §6).

Ranges used by hand (zero-exact):
  A = [-1, 0.9921875]: step 2**-7, zero 128, real = da / 128   (da = a - 128)
  B = [-2, 1.984375]:  step 2**-6, zero 128, real = db / 64    (db = b - 128)
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hexnn_import.errors import OpError
from hexnn_import.ops import KernelContext, run_op
from hexnn_import.ops.broadcast import broadcast_onto, broadcast_pair
from hexnn_import.testing.opcheck import assert_op_error, u4

A = (-1.0, 0.9921875)
B = (-2.0, 1.984375)


def zero_of(mn: float, mx: float) -> int:
    """Code of 0.0 (independent of the code under test)."""
    step = (mx - mn) / 255
    return math.floor(-mn / step + 0.5)


def real(q: np.ndarray, mn: float, mx: float) -> np.ndarray:
    return (q.astype(np.float64) - zero_of(mn, mx)) * (mx - mn) / 255


def random_range(rng: np.random.Generator) -> tuple[float, float]:
    lo = float(np.float32(-rng.uniform(0, 3) * rng.integers(0, 2)))
    return lo, float(np.float32(rng.uniform(0.05, 3)))


# --- broadcast helper ----------------------------------------------------------

def test_broadcast_helper():
    ctx = KernelContext(node="n1", op="QuantizedAdd_8p8to32")
    a, b = broadcast_pair(ctx, np.zeros((1, 2, 1, 3)), np.zeros((4, 1, 5, 1)))
    assert a.shape == b.shape == (4, 2, 5, 3)
    a, b = broadcast_pair(ctx, np.zeros((1, 1, 1, 1)), np.zeros((3,)))  # scalar and 1-D
    assert a.shape == b.shape == (1, 1, 1, 3)
    with pytest.raises(OpError, match=r"node n1 \(QuantizedAdd_8p8to32\).*axis 2 \(w\) has sizes \[2, 3\]"):
        broadcast_pair(ctx, np.zeros((1, 1, 2, 3)), np.zeros((1, 1, 3, 3)))
    assert broadcast_onto(ctx, np.zeros(3), (2, 4, 4, 3), "alphas").shape == (2, 4, 4, 3)
    with pytest.raises(OpError, match="alphas has shape"):
        broadcast_onto(ctx, np.zeros((1, 1, 4, 3)), (1, 4, 1, 3), "alphas")


# --- Add / Sub 8p8to32 -----------------------------------------------------------

def test_add_sub_8p8to32_by_hand():
    # M = max(1, 0.99, 2, 1.98) * 2**17 = 2**18; one = 2**19 / 2**32 = 2**-13; gains 2**-7/2**-13 = 64, 2**-6/2**-13 = 128
    # A [1,1,2,1] = [130, 0] (da 2, -128) broadcast against B [1,1,1,2] = [125, 128] (db -3, 0):
    #   add: trunc(64 da + 128 db + 0.5): (2,-3) -255.5 -> -255; (2,0) 128.5 -> 128; (-128,-3) -8575.5 -> -8575; (-128,0) -8191
    #   sub: trunc(64 da - 128 db + 0.5): 512.5 -> 512; 128; -7807.5 -> -7807; -8191
    a, b = u4([130, 0], shape=(1, 1, 2, 1)), u4([125, 128])
    out, mn, mx = run_op("QuantizedAdd_8p8to32", [a, b, *A, *B])
    assert out.dtype == np.int32 and out.shape == (1, 1, 2, 2)
    assert out.ravel().tolist() == [-255, 128, -8575, -8191]
    assert (mn.item(), mx.item()) == (-262144.0, 262144.0)
    out, _, _ = run_op("QuantizedSub_8p8to32", [a, b, *A, *B])
    assert out.ravel().tolist() == [512, 128, -7807, -8191]


def test_add_8p8to32_equals_bias_add_and_float():
    rng = np.random.default_rng(8)
    for _ in range(6):
        ra, rb = random_range(rng), random_range(rng)
        a = rng.integers(0, 256, size=(2, 3, 4, 5)).astype(np.uint8)
        b = rng.integers(0, 256, size=(1, 1, 1, 5)).astype(np.uint8)
        add = run_op("QuantizedAdd_8p8to32", [a, b, *ra, *rb])
        bias = run_op("QuantizedBiasAdd_8p8to32", [a, b, *ra, *rb])
        assert all(np.array_equal(x, y) for x, y in zip(add, bias))
        b4 = rng.integers(0, 256, size=(2, 1, 4, 1)).astype(np.uint8)
        for op, sign in (("QuantizedAdd_8p8to32", 1), ("QuantizedSub_8p8to32", -1)):
            out, mn, mx = run_op(op, [a, b4, *ra, *rb])
            one = (mx.item() - mn.item()) / 2.0 ** 32
            want = real(a, *ra) + sign * real(b4, *rb)
            assert np.max(np.abs(out * one - want)) <= 1.501 * one  # trunc(v + 0.5): up to 1.5 codes below 0


# --- Mul -----------------------------------------------------------------------

def test_mul_8x8to32_by_hand():
    # (a - 128) * (b - 128): a [0, 255] x scalar b 130 -> -128*2 = -256, 127*2 = 254
    # range: one = 2**-7 * 2**-6 = 2**-13 -> +-2**31 * 2**-13 = +-262144
    out, mn, mx = run_op("QuantizedMul_8x8to32", [u4([0, 255]), u4([130]), *A, *B])
    assert out.ravel().tolist() == [-256, 254]
    assert (mn.item(), mx.item()) == (-262144.0, 262144.0)


def test_mul_8x8to32_exact_with_broadcast():
    rng = np.random.default_rng(9)
    ra, rb = random_range(rng), random_range(rng)
    a = rng.integers(0, 256, size=(2, 1, 3, 1)).astype(np.uint8)
    b = rng.integers(0, 256, size=(1, 4, 1, 5)).astype(np.uint8)
    out, mn, mx = run_op("QuantizedMul_8x8to32", [a, b, *ra, *rb])
    want = (a.astype(np.int64) - zero_of(*ra)) * (b.astype(np.int64) - zero_of(*rb))
    assert out.shape == (2, 4, 3, 5) and np.array_equal(out, want)
    one = (ra[1] - ra[0]) / 255 * (rb[1] - rb[0]) / 255
    assert mx.item() == pytest.approx(2.0 ** 31 * one, rel=1e-7) and mn.item() == -mx.item()


def test_mul_8x8to8_by_hand():
    # A x B: end products 2, -1.984375, -1.984375, 1.96875 -> out [-1.984375, 2]: step 2**-6, zero 127
    # q = round_away((v - out_min) / step) = round_away(127 + 64 * (da/128) * (db/64)) = round_away(127 + da * db / 128)
    # (round_away acts on the code, which is >= 0 here, so ties go up):
    #   (1, 64) 127.5 -> 128;  (-1, 64) 126.5 -> 127;  (3, 5) 127.117 -> 127
    #   (100, 100) 205.125 -> 205;  (-128, -128) 255 -> 255;  (-128, 127) 0 -> 0
    a = u4([129, 127, 131, 228, 0, 0])
    b = u4([192, 192, 133, 228, 0, 255])
    q, mn, mx = run_op("QuantizedMul_8x8to8", [a, b, *A, *B])
    assert q.ravel().tolist() == [128, 127, 127, 205, 255, 0]
    assert (mn.item(), mx.item()) == (-1.984375, 2.0)


def test_mul_8x8to8_within_half_step_of_float():
    rng = np.random.default_rng(10)
    for _ in range(6):
        ra, rb = random_range(rng), random_range(rng)
        a = rng.integers(0, 256, size=(1, 3, 1, 4)).astype(np.uint8)
        b = rng.integers(0, 256, size=(2, 1, 5, 4)).astype(np.uint8)
        q, mn, mx = run_op("QuantizedMul_8x8to8", [a, b, *ra, *rb])
        lo, hi = mn.item(), mx.item()
        assert lo <= min(x * y for x in ra for y in rb) + 1e-6 and hi >= max(x * y for x in ra for y in rb) - 1e-6
        got = real(q, lo, hi)
        assert np.max(np.abs(got - real(a, *ra) * real(b, *rb))) <= 0.5001 * (hi - lo) / 255


# --- Add_8p8to8 ---------------------------------------------------------------------

def test_add_8p8to8_given_range_by_hand():
    # out [-4, 3.96875]: step 2**-5, zero 128; q = round_away((v + 4) * 32) = round_away(128 + da/4 + db/2)
    #   (2, 0) 128.5 -> 129;  (-2, 0) 127.5 -> 128 (tie away from zero in code space);  (1, 1) 128.75 -> 129
    #   (127, 127) 223.25 -> 223;  (-128, -128) 32 -> 32
    a = u4([130, 126, 129, 255, 0])
    b = u4([128, 128, 129, 255, 0])
    q, mn, mx = run_op("QuantizedAdd_8p8to8", [a, b, *A, *B, -4.0, 3.96875])
    assert q.ravel().tolist() == [129, 128, 129, 223, 32]
    assert (mn.item(), mx.item()) == (-4.0, 3.96875)
    # broadcast [1,2,1,1] x [1,1,1,3]: da = [2, -2], db = [0, 1, -1]:
    #   128.5 + [0, .5, -.5] = [128.5, 129, 128] -> [129, 129, 128];  127.5 + ... = [127.5, 128, 127] -> [128, 128, 127]
    q, _, _ = run_op("QuantizedAdd_8p8to8", [u4([130, 126], shape=(1, 2, 1, 1)), u4([128, 129, 127]), *A, *B, -4.0, 3.96875])
    assert q.shape == (1, 2, 1, 3) and q.ravel().tolist() == [129, 129, 128, 128, 128, 127]


def test_add_8p8to8_auto_range_by_hand():
    state: dict = {}
    # A + A, auto: start 0.125 * [-2, 1.984375] = [-0.25, 0.248046875]: zero-exact (z = 128), step 2**-9
    # q = 128 + round_away(512 * (da + db) / 128) = 128 + 4 (da + db): (3, 4) -> 156;  (-10, -5) -> 68
    q, mn, mx = run_op("QuantizedAdd_8p8to8", [u4([131, 118]), u4([132, 123]), *A, *A], state=state)
    assert q.ravel().tolist() == [156, 68]
    assert (mn.item(), mx.item()) == (-0.25, 0.248046875)
    # (100, 0): 0.78125 -> code 528 > 255 on the auto max: max -> 1.15 * 0.78125 = 0.8984375;
    # adjust_range(-0.25, 0.8984375): z = 0.25*255/1.1484375 = 55.51 -> zi 55, zf .51; (zf-1)*mn = .122 < zf*mx = .458
    # -> grow min: mn = 0.8984375 * 56 / (55 - 254) = -50.3125/199; zero 56; step = (229.1015625/199) / 255
    #   0.78125 / step = 0.78125 * 199 * 255 / 229.1015625 = 173.04 -> 56 + 173 = 229
    #   (-10, -5): -0.1171875 / step = -25.96 -> 56 - 26 = 30
    q, mn, mx = run_op("QuantizedAdd_8p8to8", [u4([228, 118]), u4([128, 123]), *A, *A], state=state)
    assert q.ravel().tolist() == [229, 30]
    assert mn.item() == np.float32(-50.3125 / 199) and mx.item() == 0.8984375
    # the widened range is kept: a later small input runs on it (codes 56 + round_away(0.0546875 / step) = 56 + 12)
    q, mn2, mx2 = run_op("QuantizedAdd_8p8to8", [u4([131]), u4([132]), *A, *A], state=state)
    assert (mn2.item(), mx2.item()) == (mn.item(), mx.item()) and q.item() == 68
    # -inf / +inf ends are auto too: same as absent on a fresh state
    q, mn, mx = run_op("QuantizedAdd_8p8to8", [u4([131]), u4([132]), *A, *A, -math.inf, math.inf])
    assert q.item() == 156 and (mn.item(), mx.item()) == (-0.25, 0.248046875)


def test_add_8p8to8_property():
    rng = np.random.default_rng(12)
    for _ in range(6):
        ra, rb = random_range(rng), random_range(rng)
        a = rng.integers(0, 256, size=(2, 3, 1, 4)).astype(np.uint8)
        b = rng.integers(0, 256, size=(1, 3, 5, 1)).astype(np.uint8)
        want = real(a, *ra) + real(b, *rb)
        # given range: within half a step of the clipped float sum
        q, mn, mx = run_op("QuantizedAdd_8p8to8", [a, b, *ra, *rb, -1.0, 1.0])
        lo, hi = mn.item(), mx.item()
        assert np.max(np.abs(real(q, lo, hi) - np.clip(want, lo, hi))) <= 0.5001 * (hi - lo) / 255
        # auto range: widened so nothing saturates
        q, mn, mx = run_op("QuantizedAdd_8p8to8", [a, b, *ra, *rb], state={})
        lo, hi = mn.item(), mx.item()
        assert np.max(np.abs(real(q, lo, hi) - want)) <= 0.5001 * (hi - lo) / 255


# --- Maximum / Minimum / Max_8 / Min_8 --------------------------------------------

def test_max_min_by_hand():
    # A and C = [-1, 2.984375] (step 2**-6, zero 64)
    # max: default range [max(-1,-1), max(0.99, 2.98)] = C itself; a moved onto C: 64 + round_away(da / 2)
    #   a [0, 129, 130, 131, 255] -> [0, 65, 65, 66, 128]; max with c [64, 64, 64, 65, 100] -> [64, 65, 65, 66, 128]
    # min: default [-1, min(0.99, 2.98)] = A itself; c moved onto A: 128 + 2 dc -> [128, 128, 128, 130, 200]
    #   min with a -> [0, 128, 128, 130, 200]
    a, c = u4([0, 129, 130, 131, 255]), u4([64, 64, 64, 65, 100])
    C = (-1.0, 2.984375)
    for op in ("QuantizedMaximum", "QuantizedMax_8"):
        q, mn, mx = run_op(op, [a, c, *A, *C])
        assert q.ravel().tolist() == [64, 65, 65, 66, 128] and (mn.item(), mx.item()) == C
    for op in ("QuantizedMinimum", "QuantizedMin_8"):
        q, mn, mx = run_op(op, [a, c, *A, *C])
        assert q.ravel().tolist() == [0, 128, 128, 130, 200] and (mn.item(), mx.item()) == A
    # given range B (step 2**-6, zero 128): a -> 128 + round_away(da/2), c real (dc' = c - 64) -> 128 + dc'
    #   a [0, 129, 255] -> [64, 129, 192]; c [0, 64, 100] -> [64, 128, 164] (c=0 is real -1)
    #   min -> [64, 128, 164];  broadcast [1,1,3,1] x [1,1,1,1] scalar c=100 -> min(a', 164) = [64, 129, 164]
    q, mn, mx = run_op("QuantizedMin_8", [u4([0, 129, 255]), u4([0, 64, 100]), *A, *C, *B])
    assert q.ravel().tolist() == [64, 128, 164] and (mn.item(), mx.item()) == B
    q, _, _ = run_op("QuantizedMinimum", [u4([0, 129, 255], shape=(1, 1, 3, 1)), u4([100]), *A, *C, *B])
    assert q.shape == (1, 1, 3, 1) and q.ravel().tolist() == [64, 129, 164]


def test_max_min_property():
    rng = np.random.default_rng(13)
    for _ in range(6):
        ra, rb = random_range(rng), random_range(rng)
        a = rng.integers(0, 256, size=(2, 1, 4, 3)).astype(np.uint8)
        b = rng.integers(0, 256, size=(1, 5, 4, 1)).astype(np.uint8)
        for op, f in (("QuantizedMax_8", np.maximum), ("QuantizedMinimum", np.minimum)):
            q, mn, mx = run_op(op, [a, b, *ra, *rb])
            lo, hi = mn.item(), mx.item()
            assert q.shape == (2, 5, 4, 3)
            assert np.max(np.abs(real(q, lo, hi) - f(real(a, *ra), real(b, *rb)))) <= 0.5001 * (hi - lo) / 255


def test_binary_errors():
    x, y = np.zeros((1, 1, 2, 3), np.uint8), np.zeros((1, 1, 3, 3), np.uint8)
    for op in ("QuantizedAdd_8p8to8", "QuantizedAdd_8p8to32", "QuantizedSub_8p8to32", "QuantizedMul_8x8to32",
               "QuantizedMul_8x8to8", "QuantizedMaximum", "QuantizedMinimum", "QuantizedMax_8", "QuantizedMin_8"):
        assert_op_error(op, [x, y, *A, *B], "do not broadcast", "input A [1,1,2,3]", "input B [1,1,3,3]")
        assert_op_error(op, [x, x, 0.5, 1.0, *B], "input A", "does not contain 0")
    assert_op_error("QuantizedAdd_8p8to8", [x, x, *A, *B, 1.0, -1.0], "min 1.0 > max -1.0")
    assert_op_error("QuantizedAdd_8p8to8", [x, x, *A, *B, math.nan, 1.0], "output range")
    assert_op_error("QuantizedMax_8", [x, x, *A, *B, math.nan, 1.0], "output range")
    assert_op_error("QuantizedMul_8x8to32", [np.full((1, 1, 1, 1), 300, np.int32), x, *A, *B], "outside the code range")
