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
from hexnn_import.testing.opcheck import assert_op_error, random_operands, u4

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
    # op_addsubmul_8to32.c addsub_832_execute: steps 2**-7 (A) and 2**-6 (B), zeros 128; B's step is the larger,
    # so kb = 0x7F80 = 32640 and ka = roundf(2**-7 * 32640 / 2**-6) = 16320; acc = 16320 da + 32640 db (Sub: -32640 db)
    # A [1,1,2,1] = [130, 0] (da 2, -128) broadcast against B [1,1,1,2] = [125, 128] (db -3, 0):
    #   add: (2,-3) 32640 - 97920 = -65280; (2,0) 32640; (-128,-3) -2088960 - 97920 = -2186880; (-128,0) -2088960
    #   sub: 32640 + 97920 = 130560; 32640; -2088960 + 97920 = -1991040; -2088960
    # range +-(float)(2**31 / 32640.0) * 2**-6 in float32 (one code = 2**-6 / 32640: -65280 codes = -2/64 = 2/128 - 3/64)
    a, b = u4([130, 0], shape=(1, 1, 2, 1)), u4([125, 128])
    out, mn, mx = run_op("QuantizedAdd_8p8to32", [a, b, *A, *B])
    assert out.dtype == np.int32 and out.shape == (1, 1, 2, 2)
    assert out.ravel().tolist() == [-65280, 32640, -2186880, -2088960]
    want_max = float(np.float32(2.0 ** 31 / 32640) * np.float32(2.0 ** -6))
    assert (mn.item(), mx.item()) == (-want_max, want_max)
    out, _, _ = run_op("QuantizedSub_8p8to32", [a, b, *A, *B])
    assert out.ravel().tolist() == [130560, 32640, -1991040, -2088960]


def test_add_sub_8p8to32_close_to_float_and_any_range():
    # the int16 gains are the steps' ratio rounded to an integer (the larger 32640): the result is the exact sum
    # up to 255 * (half a gain unit) of the larger step per operand; ranges excluding 0 compute as the C does
    rng = np.random.default_rng(8)
    for k, [(a, ra), (b4, rb)] in enumerate(random_operands(rng, 8, random_range, (2, 3, 4, 5), (2, 1, 4, 1))):
        if k % 4 == 3:
            ra = (0.5, 2.5)  # excludes 0: zero code saturates to 0, codes still mean min + q * step
        big = max(ra[1] - ra[0], rb[1] - rb[0]) / 255
        for op, sign in (("QuantizedAdd_8p8to32", 1), ("QuantizedSub_8p8to32", -1)):
            out, mn, mx = run_op(op, [a, b4, *ra, *rb])
            one = mx.item() / 2.0 ** 31
            real_a = (a.astype(np.int64) - min(255, max(0, zero_of(*ra)))) * (ra[1] - ra[0]) / 255
            want = real_a + sign * real(b4, *rb)
            assert np.max(np.abs(out * one - want)) <= 255 * big / 32640 + 1e-9


def test_add_8p8to32_two_zero_width_ranges_is_an_error():
    # "bad input scale": the larger step is 0
    assert_op_error("QuantizedAdd_8p8to32", [u4([3, 9]), u4([0, 200]), 0.0, 0.0, 0.0, 0.0], "bad input scale")


# --- Mul -----------------------------------------------------------------------

def test_mul_8x8to32_by_hand():
    # op_addsubmul_8to32.c mul_832_execute: (a - 128) * (b - 128) * 128: a [0, 255] x scalar b 130
    # -> -128*2*128 = -32768, 127*2*128 = 32512; range +-a_step*b_step*2**24 ~ +-2**-13 * 2**24 = +-2048
    # (one code ~ 2**-20: -32768 codes = -1/32, the real product -1 * 2/64). The steps are
    # flt_div_255(255/128) and flt_div_255(255/64): on the device a fused multiply-add, exactly 2**-7 and
    # 2**-6, so the range is exactly +-2048 (nnlib's x86 branch, two roundings, gives +-2047.999755859375)
    out, mn, mx = run_op("QuantizedMul_8x8to32", [u4([0, 255]), u4([130]), *A, *B])
    assert out.ravel().tolist() == [-32768, 32512]
    assert (mn.item(), mx.item()) == (-2048.0, 2048.0)


def test_mul_8x8to32_exact_with_broadcast():
    rng = np.random.default_rng(9)
    (a, ra), (b, rb) = next(random_operands(rng, 1, random_range, (2, 1, 3, 1), (1, 4, 1, 5)))
    out, mn, mx = run_op("QuantizedMul_8x8to32", [a, b, *ra, *rb])
    want = (a.astype(np.int64) - zero_of(*ra)) * (b.astype(np.int64) - zero_of(*rb)) * 128
    assert out.shape == (2, 4, 3, 5) and np.array_equal(out, want)
    one = (ra[1] - ra[0]) / 255 * (rb[1] - rb[0]) / 255
    assert mx.item() == pytest.approx(2.0 ** 24 * one, rel=1e-6) and mn.item() == -mx.item()


def test_mul_8x8to8_by_hand():
    # op_mul.c mul_8x8to8_execute, general path: products p = da * db; observed [-16256, 16384] (with 0);
    # range [pmin, pmax] * 2**-13 = [-1.984375, 2], zero-fixed by adjust_minmax_for_zero
    a = u4([129, 127, 131, 228, 0, 0])
    b = u4([192, 192, 133, 228, 0, 255])
    q, mn, mx = run_op("QuantizedMul_8x8to8", [a, b, *A, *B])
    lo, hi = mn.item(), mx.item()
    assert lo <= -1.984375 and hi >= 2.0
    da, db = np.array([1, -1, 3, 100, -128, -128]), np.array([64, 64, 5, 100, -128, 127])
    want = da / 128 * db / 64
    assert np.max(np.abs(real(q, lo, hi) - want)) <= 0.51 * (hi - lo) / 255


def test_mul_8x8to8_scalar_operand_paths():
    # a [1,1,1,1] B: s = code - zero; s > 0 copies A's codes and scales A's range by s * step;
    # s == 0 gives zeros on [0, 1]; s < 0 gives 255 - code on the flipped range
    a = u4([0, 77, 255])
    q, mn, mx = run_op("QuantizedMul_8x8to8", [a, u4([130]), *A, *B])     # s = 2: x 2/64
    assert q.ravel().tolist() == [0, 77, 255] and (mn.item(), mx.item()) == (-1.0 / 32, 0.9921875 / 32)
    q, mn, mx = run_op("QuantizedMul_8x8to8", [a, u4([128]), *A, *B])     # s = 0
    assert q.ravel().tolist() == [0, 0, 0] and (mn.item(), mx.item()) == (0.0, 1.0)
    q, mn, mx = run_op("QuantizedMul_8x8to8", [u4([64]), a, *A, *B])     # A is the scalar, s = -64: x -0.5
    assert q.ravel().tolist() == [255, 178, 0] and (mn.item(), mx.item()) == (-0.9921875, 1.0)


def test_mul_8x8to8_within_half_step_of_float():
    rng = np.random.default_rng(10)
    for (a, ra), (b, rb) in random_operands(rng, 6, random_range, (1, 3, 1, 4), (2, 1, 5, 4)):
        q, mn, mx = run_op("QuantizedMul_8x8to8", [a, b, *ra, *rb])
        lo, hi = mn.item(), mx.item()
        prod = real(a, *ra) * real(b, *rb)
        # the output range holds every product computed (and 0), zero-fixed
        assert lo <= min(0.0, prod.min()) + 1e-6 and hi >= max(0.0, prod.max()) - 1e-6
        assert np.max(np.abs(real(q, lo, hi) - prod)) <= 0.51 * (hi - lo) / 255


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
    # nnlib op_add.c addsub_flat_direct_execute, A + A, both ends auto:
    # first run: 1/8 of [a_min + b_min, a_max + b_max] = [-0.25, 0.248046875] (zero 128 exactly, kept).
    # set_addsub_scaling: out_scl 512, scales 512 * 2**-7 = 4 each, sum 8 -> exponent 4 -> rsh 2,
    #   a_scale = b_scale = 4 * 4 * 256 = 4096 (high byte 32, low 7 bits 0): inter = 16 (a + b);
    #   intzero = (128 * 4096 * 2) >> 8 = 4096; offset = 128 * 4 - 4096 = -3584;
    #   q = (16 (a + b) - 3584 + 2) >> 2 = 128 + 4 (da + db): (3, 4) -> 156;  (-10, -5) -> 68
    state: dict = {}
    q, mn, mx = run_op("QuantizedAdd_8p8to8", [u4([131, 118]), u4([132, 123]), *A, *A], state=state)
    assert q.ravel().tolist() == [156, 68]
    assert (mn.item(), mx.item()) == (-0.25, 0.248046875)
    # (100, 0) saturates (528); the intermediate max 16 * 356 = 5696 is the real 1600 / 2048 = 0.78125 > max:
    # re-run on span + 15%: actual [-0.1171875, 0.78125] (min 3856 from (-10, -5)): span 0.8984375 + 0.134765625,
    # max = -0.1171875 + 1.033203125 = 0.916015625; min kept -0.25, then zero-fixed (constraint 0):
    # z = 63.75 / 1.166015625 = 54.67, (zf - 1) * mn < zf * mx -> min moves: mn = 0.916015625 * 55 / (55 - 255)
    q, mn, mx = run_op("QuantizedAdd_8p8to8", [u4([228, 118]), u4([128, 123]), *A, *A], state=state)
    f = np.float32
    assert mn.item() == f(f(f(0.916015625) * f(55.0)) / f(-200.0)) and mx.item() == 0.916015625
    lo, hi = mn.item(), mx.item()
    assert np.all(np.abs(real(q, lo, hi) - np.array([0.78125, -0.1171875])) <= (hi - lo) / 255)
    # the range is the node's state: a later run starts from it (1/32 rule: 3.98 < 32 * 1.17, unchanged)
    q, mn2, mx2 = run_op("QuantizedAdd_8p8to8", [u4([131]), u4([132]), *A, *A], state=state)
    assert (mn2.item(), mx2.item()) == (lo, hi)
    # -inf / +inf ends are auto too: same as absent on a fresh state
    q, mn, mx = run_op("QuantizedAdd_8p8to8", [u4([131]), u4([132]), *A, *A, -math.inf, math.inf])
    assert q.item() == 156 and (mn.item(), mx.item()) == (-0.25, 0.248046875)


def test_add_8p8to8_property():
    # 14-bit fixed point: within one output step of the float sum (same shapes, op_add.c direct path);
    # broadcast shapes take nnlib's qadd_888_hvx path (sum rounded to the smaller input step first): 1.5 steps,
    # for an output step at least the smaller input step (do_quantized_add_888 clips its scale to 1 there).
    rng = np.random.default_rng(12)
    for k in range(6):
        ra, rb = random_range(rng), random_range(rng)
        a = rng.integers(0, 256, size=(2, 3, 1, 4)).astype(np.uint8)
        b = rng.integers(0, 256, size=(1, 3, 5, 1) if k % 2 else (2, 3, 1, 4)).astype(np.uint8)
        tol = 1.5 if k % 2 else 1.0
        want = real(a, *ra) + real(b, *rb)
        given = (ra[0] + rb[0], ra[1] + rb[1]) if k % 2 else (-1.0, 1.0)
        q, mn, mx = run_op("QuantizedAdd_8p8to8", [a, b, *ra, *rb, *given])
        lo, hi = mn.item(), mx.item()
        assert np.max(np.abs(real(q, lo, hi) - np.clip(want, lo, hi))) <= tol * (hi - lo) / 255
        # auto range: nothing saturates once the re-run widened it
        q, mn, mx = run_op("QuantizedAdd_8p8to8", [a, b, *ra, *rb], state={})
        lo, hi = mn.item(), mx.item()
        assert np.max(np.abs(real(q, lo, hi) - want)) <= tol * (hi - lo) / 255


def test_add_8p8to8_nnlib_range_errors():
    # nnlib accepts any input range; set_addsub_scaling fails when the scales are not finite (NaN / inf ranges)
    x = np.zeros((1, 1, 2, 3), np.uint8)
    for bad in ((math.nan, 1.0), (0.0, math.inf)):
        assert_op_error("QuantizedAdd_8p8to8", [x, x, *bad, -1.0, 1.0], "scaling failed")
    assert_op_error("QuantizedAdd_8p8to8", [x, x, *A, *B, math.nan, 1.0], "scaling failed")
    # a range excluding 0 is computed with its zero code saturated (get_qu8_level_size_zero: round(-0.5 / step)
    # -> 0): code c counts as c * step, i.e. [0.5, 1] acts as [0, 0.5]: 255 + 255 -> 1.0 -> code 128 on [0, 2]
    q, _, _ = run_op("QuantizedAdd_8p8to8", [u4([255, 0]), u4([255, 0]), 0.5, 1.0, 0.5, 1.0, 0.0, 2.0])
    assert q.ravel().tolist() == [128, 0]
    # nnlib minmax_execute: "minimum/maximum output min >= output max"
    assert_op_error("QuantizedMax_8", [x, x, *A, *B, 1.0, 1.0], "output min 1.0 >= output max 1.0")
    assert_op_error("QuantizedMinimum", [x, x, *A, *B, 2.0], "output min 2.0 >= output max")


# --- Maximum / Minimum / Max_8 / Min_8 --------------------------------------------

def test_max_min_by_hand():
    # A and C = [-1, 2.984375] (step 2**-6, zero 64); nnlib op_minimum_maximum.c requantize_to_outrange:
    # mult = round(4096 * step_in / step_out), q = (((x - zero_in) * mult + 2048) >> 12) + zero_out
    # both ops: default range [min(a_min, b_min), max(a_max, b_max)] = C itself (c unchanged);
    #   a onto C (mult 2048): 64 + floor((da + 1) / 2): [0, 129, 130, 131, 255] -> [0, 65, 65, 66, 128]
    # max with c [64, 64, 64, 65, 100] -> [64, 65, 65, 66, 128];  min -> [0, 64, 64, 65, 100]
    #   min with a -> [0, 128, 128, 130, 200]
    a, c = u4([0, 129, 130, 131, 255]), u4([64, 64, 64, 65, 100])
    C = (-1.0, 2.984375)
    for op in ("QuantizedMaximum", "QuantizedMax_8"):
        q, mn, mx = run_op(op, [a, c, *A, *C])
        assert q.ravel().tolist() == [64, 65, 65, 66, 128] and (mn.item(), mx.item()) == C
    for op in ("QuantizedMinimum", "QuantizedMin_8"):
        q, mn, mx = run_op(op, [a, c, *A, *C])
        assert q.ravel().tolist() == [0, 64, 64, 65, 100] and (mn.item(), mx.item()) == C
    # given range B (step 2**-6, zero 128): a -> 128 + round_away(da/2), c real (dc' = c - 64) -> 128 + dc'
    #   a [0, 129, 255] -> [64, 129, 192]; c [0, 64, 100] -> [64, 128, 164] (c=0 is real -1)
    #   min -> [64, 128, 164];  broadcast [1,1,3,1] x [1,1,1,1] scalar c=100 -> min(a', 164) = [64, 129, 164]
    q, mn, mx = run_op("QuantizedMin_8", [u4([0, 129, 255]), u4([0, 64, 100]), *A, *C, *B])
    assert q.ravel().tolist() == [64, 128, 164] and (mn.item(), mx.item()) == B
    q, _, _ = run_op("QuantizedMinimum", [u4([0, 129, 255], shape=(1, 1, 3, 1)), u4([100]), *A, *C, *B])
    assert q.shape == (1, 1, 3, 1) and q.ravel().tolist() == [64, 129, 164]


def test_max_min_property():
    rng = np.random.default_rng(13)
    for (a, ra), (b, rb) in random_operands(rng, 6, random_range, (2, 1, 4, 3), (1, 5, 4, 1)):
        for op, f in (("QuantizedMax_8", np.maximum), ("QuantizedMinimum", np.minimum)):
            q, mn, mx = run_op(op, [a, b, *ra, *rb])
            lo, hi = mn.item(), mx.item()
            assert q.shape == (2, 5, 4, 3)
            assert np.max(np.abs(real(q, lo, hi) - f(real(a, *ra), real(b, *rb)))) <= 0.5001 * (hi - lo) / 255


NNLIB_ANY_RANGE = ("QuantizedAdd_8p8to8", "QuantizedAdd_8p8to32", "QuantizedSub_8p8to32", "QuantizedMul_8x8to8",
                   "QuantizedMaximum", "QuantizedMinimum", "QuantizedMax_8", "QuantizedMin_8")


def test_binary_errors():
    x, y = np.zeros((1, 1, 2, 3), np.uint8), np.zeros((1, 1, 3, 3), np.uint8)
    for op in ("QuantizedAdd_8p8to8", "QuantizedAdd_8p8to32", "QuantizedSub_8p8to32", "QuantizedMul_8x8to32",
               "QuantizedMul_8x8to8", "QuantizedMaximum", "QuantizedMinimum", "QuantizedMax_8", "QuantizedMin_8"):
        assert_op_error(op, [x, y, *A, *B], "do not broadcast", "input A [1,1,2,3]", "input B [1,1,3,3]")
        if op in NNLIB_ANY_RANGE:  # nnlib's Add_8p8to8 / Maximum / Minimum compute with any input range
            continue
        if op != "QuantizedMul_8x8to32":  # mul_832_execute computes with any input range
            assert_op_error(op, [x, x, 0.5, 1.0, *B], "input A", "does not contain 0")
        assert_op_error(op, [x, x, math.nan, 1.0, *B], "input A")
    assert_op_error("QuantizedMul_8x8to32", [np.full((1, 1, 1, 1), 300, np.int32), x, *A, *B], "outside the code range")
