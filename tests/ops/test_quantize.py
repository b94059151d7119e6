"""Quantize, AutoQuantize, Dequantize (SEMANTICS.md §1, §2).

Expected values are worked by hand in the comments; "step 2**-7" ranges are
chosen so the arithmetic is exact in binary floating point.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.kernels.quantize import hvx_dequant_table
from hexnn_import.testing.opcheck import assert_op_error, f4, u4



# --- Quantize -------------------------------------------------------------

def test_quantize_grows_max_to_fix_zero():
    # adjust_range(-1, 1): range 2, z = 1*255/2 = 127.5, zi 127, zf 0.5;
    # zi > 0 and (zf-1)*mn = 0.5 >= zf*mx = 0.5 -> grow max:
    # range = 255/127, max = -1 + 255/127 = 128/127; step = 1/127, zero = 127.
    # q = round_away((x + 1) * 127):
    #   -1 -> 0; 0.25 -> 158.75 -> 159; -0.3 -> 88.9 -> 89; 0 -> 127;
    #   1 -> 254; 2 -> 381 -> sat 255
    q, mn, mx = run_op("Quantize", [f4([-1, 0.25, -0.3, 0, 1, 2]), -1.0, 1.0])
    assert q.dtype == np.uint8 and q.shape == (1, 1, 1, 6)
    assert q.ravel().tolist() == [0, 159, 89, 127, 254, 255]
    assert mn.shape == (1, 1, 1, 1) and mn.dtype == np.float32
    assert mn.item() == -1.0
    assert mx.item() == np.float32(128 / 127)


def test_quantize_grows_min_to_fix_zero():
    # adjust_range(-0.2, 1): range 1.2, z = 0.2*255/1.2 = 42.5, zi 42, zf 0.5;
    # (zf-1)*mn = 0.1 < zf*mx = 0.5 -> grow min: mn = 1*(42+1)/(42-254) = -43/212;
    # range = 255/212, step = 1/212, zero = 43.  q = round_away(x*212 + 43):
    #   0.5 -> 149; -0.2 -> -42.4+43 = 0.6 -> 1; 1 -> 255; 0 -> 43; 0.1 -> 64.2 -> 64
    q, mn, mx = run_op("Quantize", [f4([0.5, -0.2, 1, 0, 0.1]), -0.2, 1.0])
    assert q.ravel().tolist() == [149, 1, 255, 43, 64]
    assert mn.item() == np.float32(-43 / 212)
    assert mx.item() == 1.0


def test_quantize_range_without_zero_is_kept_and_inf_wraps():
    # The device path (op_quantize.c quantize_execute_opt, issue 36) keeps [0.5, 2.55] (minv > 0: no zero fix)
    # and its asm adds minv's magnitude (min_offset is the mantissa of |minv|), so it codes (x + 0.5) / step,
    # step 2.05/255: 1.234 -> 1.734 * 124.39 = 215.7 -> 216; -1 -> -0.5 * 124.39 < 0 -> 0.
    # +inf: exponent field 255, common_exp = 128 (range 2.058's field) + 4 = 132, shift min(132 - 255, 31) =
    # -123, a 6-bit amount 5: 0x800000 >> 5 = 262144, + min_offset (0x800000 >> (132 - 126) = 131072, + the bias
    # rangemant >> 9 = 1053) = 394269; * scaling (0xFFFFFFFF // 539500 = 7961) >> 16 = 47894; >> 8 = 187.
    # -inf: -262144 + 132125 < 0 -> 0.
    q, mn, mx = run_op("Quantize", [f4([1.234, -1, np.inf, -np.inf]), 0.5, 2.55])
    assert q.ravel().tolist() == [216, 0, 187, 0]
    assert mn.item() == np.float32(0.5) and mx.item() == np.float32(2.55)


def test_quantize_property_within_half_step_and_zero_exact():
    rng = np.random.default_rng(1)
    for _ in range(20):
        lo, hi = -rng.uniform(0.01, 10), rng.uniform(0.01, 10)
        x = rng.uniform(lo * 1.2, hi * 1.2, size=(2, 3, 4, 5)).astype(np.float32)
        q, mn, mx = run_op("Quantize", [x, float(lo), float(hi)])
        out_min, out_max = float(mn.item()), float(mx.item())
        assert out_min <= lo * (1 - 1e-6) and out_max >= hi * (1 - 1e-6)  # range only grows
        step = (out_max - out_min) / 255
        zero = -out_min / step
        assert abs(zero - round(zero)) < 1e-3  # 0.0 is a code
        real = (q.astype(np.float64) - round(zero)) * step
        ref = np.clip(x.astype(np.float64), out_min, out_max)
        # the device's fixed point rounds down up to 0.06 of a code above a half (issue 36)
        assert np.max(np.abs(real - ref)) <= step * 0.57


# --- AutoQuantize ---------------------------------------------------------

def test_autoquantize_by_hand():
    # range [min(0,-1), max(0,0.9921875)] = [-1, 0.9921875]; z = 255/1.9921875 = 128
    # exactly -> no fix; step = 2**-7, q = round_away((x+1)*128):
    #   -1 -> 0; 0.5 -> 192; 0.9921875 -> 255; 0 -> 128; -0.25 -> 96
    x = f4([-1, 0.5, 0.9921875, 0, -0.25, 0.5], shape=(1, 2, 3, 1))
    q, mn, mx = run_op("AutoQuantize", [x])
    assert q.shape == (1, 2, 3, 1)
    assert q.ravel().tolist() == [0, 192, 255, 128, 96, 192]
    assert (mn.item(), mx.item()) == (-1.0, 0.9921875)


def test_autoquantize_positive_and_all_zero():
    # [0.5, 2] -> range [0, 2], step 2/255: 0.5 -> 63.75 -> 64; 2 -> 255
    q, mn, mx = run_op("AutoQuantize", [f4([0.5, 2.0])])
    assert q.ravel().tolist() == [64, 255]
    assert (mn.item(), mx.item()) == (0.0, 2.0) and np.signbit(mn.item())  # -0.0: no negative value
    # all zero: [-0.0, 0] raised to [-0.0, 0 + 1e-18] as the device does (op_quantize.c find_scaling_for_hvx_quant;
    # the portable C would widen it to 1e-4); every code is 0
    q, mn, mx = run_op("AutoQuantize", [np.zeros((1, 2, 2, 3), np.float32)])
    assert not q.any()
    assert (mn.item(), mx.item()) == (0.0, np.float32(1e-18)) and np.signbit(mn.item())


def test_autoquantize_property_within_half_step():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((1, 5, 6, 7)) * 3 + 1).astype(np.float32)
    q, mn, mx = run_op("AutoQuantize", [x])
    step = (float(mx.item()) - float(mn.item())) / 255
    zero = round(-float(mn.item()) / step)
    real = (q.astype(np.float64) - zero) * step
    assert np.max(np.abs(real - x)) <= step * 0.57  # the device's fixed point: up to 0.06 past a half


# --- Dequantize -----------------------------------------------------------

def bits(a: np.ndarray) -> list[str]:
    return [hex(int(v)) for v in np.asarray(a, np.float32).view(np.uint32).ravel()]


def test_dequantize_by_hand():
    # [-1, 0.9921875]: zero 128 and x = (q - 128) * step, where the step flt_div_255(1.9921875) is exactly
    # 2**-7 on the device (a fused multiply-add; the oracle builds it so); every product is then exact
    (x,) = run_op("Dequantize", [u4([0, 128, 255, 129]), -1.0, 0.9921875])
    assert x.dtype == np.float32
    assert x.ravel().tolist() == [-1.0, 0.0, 127 / 128, 1 / 128]
    assert bits(x) == ["0xbf800000", "0x0", "0x3f7e0000", "0x3c000000"]          # C oracle
    # C oracle bit patterns (libnnref: dequantize_execute, hvx_do_dequantize modelled), incl. rounded products
    (x,) = run_op("Dequantize", [u4([0, 1, 2, 3, 200]), -1.0, 1.0])
    assert bits(x) == ["0xbf7eff00", "0xbf7cfcfe", "0xbf7afafc", "0xbf78f8fa", "0x3f129293"]


def test_dequantize_rounds_ties_away():
    # hvx_dequantize_64xh rounds |d| * step to 24 bits by "+0x80, >> 8": ties go away from zero, where a
    # float32 multiply rounds to even. step = 1 + 3 * 2**-23, d = 3: exactly 3 + 4.5 ULP(3) (ULP(3) = 2**-22)
    step = np.float32(1 + 3 * 2.0 ** -23)
    t = hvx_dequant_table(0, step)
    assert float(t[3]) == 3 + 5 * 2.0 ** -22               # away from zero
    assert float(np.float32(3) * step) == 3 + 4 * 2.0 ** -22  # a float32 product: to even
    t = hvx_dequant_table(6, step)                          # d = 0 - 6 = -6: the same with the sign
    assert float(t[0]) == -(6 + 5 * 2.0 ** -21)
    assert float(t[6]) == 0.0 and not np.signbit(t[6])      # d = 0 -> +0.0
    assert float(t[7]) == float(step)                       # d = 1: exact


def test_dequantize_ranges_the_c_accepts():
    # a range excluding 0: qzero = saturate_u8(roundf_i32(-0.5 / step)) = 0 (C oracle bits)
    (x,) = run_op("Dequantize", [u4([1, 2, 255]), 0.5, 1.0])
    assert bits(x) == ["0x3b008081", "0x3b808081", "0x3f000000"]


def test_quantize_dequantize_roundtrip_on_codes():
    # every code survives Dequantize -> Quantize over the same zero-exact range
    codes = np.arange(256, dtype=np.uint8).reshape(1, 4, 8, 8)
    (x,) = run_op("Dequantize", [codes, -3.0, 2.0])  # z = 3*255/5 = 153 exactly
    q, _, _ = run_op("Quantize", [x, -3.0, 2.0])
    assert np.array_equal(q, codes)


# --- errors ---------------------------------------------------------------

def test_errors():
    x = f4([0.0, 1.0])
    assert_op_error("Quantize", [x, 1.0, -1.0], "min <= max")
    assert_op_error("Quantize", [x, float("nan"), 1.0], "input")
    assert_op_error("Quantize", [x, 0.0, float("inf")], "input")
    assert_op_error("Quantize", [f4([np.nan]), -1.0, 1.0], "NaN")
    assert_op_error("AutoQuantize", [f4([0.0, np.nan])], "NaN")
    assert_op_error("AutoQuantize", [f4([0.0, np.inf])], "Inf")
    assert_op_error("Dequantize", [u4([1, 2]), -1.0, np.inf], "not finite")
    assert_op_error("Dequantize", [np.array([[[[300]]]], np.int32), -1.0, 1.0], "outside the code range")


# --- float outputs against the C oracle, bit for bit ----------------------------------------------

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden" / "nnlib"


@pytest.mark.parametrize("stem", ["requant_Dequantize_HVX_model", "requant_Dequantize_qint32_f"])
def test_float_goldens_bit_exact(stem: str) -> None:
    """The float32 rows of tools/nnlib_ext/ext_compare_requant.py (written by tools/golden_nnlib.py):
    every value identical to the C's as a bit pattern (the shared replay compares codes as integers)."""
    path = GOLDEN / f"{stem}.npz"
    z = np.load(path)
    cases = json.loads(str(z["meta"]))["cases"]
    assert len(cases) >= 20
    for i, c in enumerate(cases):
        ins = [z[f"c{i}_in{k}"] for k in range(c["n_in"])]
        (got,) = run_op(c["op"], ins, **c["kw"])
        want = z[f"c{i}_codes"].astype(np.float32)
        assert np.array_equal(np.asarray(got, np.float32).reshape(-1).view(np.int32), want.view(np.int32)), (stem, i)
