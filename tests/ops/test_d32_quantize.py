"""AutoQuantize_d32, QuantizeForTest_d32 / QuantizeForTestd32, QuantizeForTest_16b_d32 (SEMANTICS.md §2, §4, §7)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.ops.d32 import D32Tensor, to_d32
from hexnn_import.testing.opcheck import assert_op_error, f4, i32

RNG = np.random.default_rng(3232)
# [-1, 0, 0.5, 3]: adjust_range(-1, 3): z = 255/4 = 63.75, zi 63, zf 0.75; (zf-1)*mn = 0.25 < zf*mx = 2.25,
# so min grows: mn = 3 * 64 / (63 - 254) = -192/191; step = (3 + 192/191) / 255 = 3/191, zero 64.
# codes: -1 -> 64 - 63.67 = 0.33 -> 0;  0 -> 64;  0.5 -> 64 + 31.83 = 95.83 -> 96;  3 -> 64 + 191 = 255
X4 = f4([-1.0, 0.0, 0.5, 3.0], (1, 1, 2, 2))
CODES = [0, 64, 96, 255]
MIN = -192 / 191


def test_autoquantize_d32_by_hand_with_padding_inputs():
    q, mn, mx = run_op("AutoQuantize_d32", [X4])
    assert isinstance(q, D32Tensor) and q.padding == (4, 4, 4, 2, 0, 30)  # defaults; 4 + 2 -> 8: right 2
    assert q.logical().reshape(-1).tolist() == CODES
    assert mn.item() == np.float32(MIN) and mx.item() == 3.0
    # before 2, left 1, min right 0 (1 + 2 -> 4: right 1), top/bottom 0
    q, _, _ = run_op("AutoQuantize_d32", [X4, i32([2]), i32([1]), i32([0]), i32([0])])
    assert q.padding == (0, 0, 1, 1, 2, 28) and q.logical().reshape(-1).tolist() == CODES


@pytest.mark.parametrize("op", ["QuantizeForTest_d32", "QuantizeForTestd32"])
def test_quantize_for_test_by_hand(op):
    # op_quantfortest_d32.c: output 3 = (float)q * deqscale + min in float32, deqscale = (3 + 192/191) / 255:
    # [-192/191, 0, 96/191, 3] up to float32 rounding - code 64 gives 64 * 0.015706806f - 1.0052356f
    # = 1.1920929e-07, not 0 (the C adds, it does not subtract a zero code)
    q, _, _, ref = run_op(op, [X4, i32([1])])
    assert q.logical().reshape(-1).tolist() == CODES and q.before == 1
    np.testing.assert_allclose(ref.reshape(-1), [-192 / 191, 0.0, 96 / 191, 3.0], rtol=1e-6, atol=2e-7)
    deq, mn = np.float32(np.float32(3.0) - np.float32(MIN)) / np.float32(255.0), np.float32(MIN)
    assert ref.reshape(-1)[1] == np.float32(np.float32(64.0) * deq) + mn
    assert ref.dtype == np.float32 and ref.shape == (1, 1, 2, 2)
    out = run_op(op, [X4], n_outputs=3)  # the float copy is optional
    assert len(out) == 3


def test_quantize_for_test_16b_by_hand():
    # [-1, 0, 0.5, 2]: lo -1, hi 2, M = max(1, 2) = 2, range (-2, 2); q = round_away(x * 32768 / 2):
    # [-16384, 0, 8192, 32768 -> sat 32767]; float copy q * 2 / 32768 = [-1, 0, 0.5, 1.99993896484375]
    q, mn, mx, ref = run_op("QuantizeForTest_16b_d32", [f4([-1.0, 0.0, 0.5, 2.0], (1, 2, 1, 2))])
    assert isinstance(q, D32Tensor) and q.dtype == np.int16
    assert q.logical().reshape(-1).tolist() == [-16384, 0, 8192, 32767]
    assert (mn.item(), mx.item()) == (-2.0, 2.0)
    assert ref.reshape(-1).tolist() == [-1.0, 0.0, 0.5, 32767 / 16384]


@pytest.mark.parametrize("seed", range(6))
def test_d32_quantizers_match_flat_autoquantize(seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 9)), int(rng.integers(1, 70)))
    x = (rng.standard_normal(shape) * rng.uniform(0.01, 50) + rng.uniform(-5, 5)).astype(np.float32)
    flat_q, flat_mn, flat_mx = run_op("AutoQuantize", [x])
    pads = [i32([int(rng.integers(0, 32))]), i32([int(rng.integers(0, 8))]), i32([int(rng.integers(0, 8))]),
            i32([int(rng.integers(0, 5))])]
    q, mn, mx = run_op("AutoQuantize_d32", [x, *pads])
    np.testing.assert_array_equal(q.logical(), flat_q)
    assert (mn.item(), mx.item()) == (flat_mn.item(), flat_mx.item())
    assert q.w_total % 4 == 0 and q.before == pads[0].item() and q.left == pads[1].item()
    for op in ("QuantizeForTest_d32", "QuantizeForTestd32"):
        # op_quantfortest_d32.c: its own float32 rule; every value within half a step of its code (ties
        # aside), the float copy the code's value on the reported range, within a float32 rounding
        q, mn, mx, ref = run_op(op, [x, *pads])
        lo, hi = mn.item(), mx.item()
        step = (hi - lo) / 255
        assert lo <= min(0.0, float(x.min())) and hi >= max(0.0, float(x.max()))
        assert abs(-lo / step - round(-lo / step)) < 1e-3  # 0 is a code
        codes = q.logical().astype(np.float64)
        assert np.all(np.abs(codes * step + lo - x) <= step * 0.5001)
        np.testing.assert_allclose(ref, codes * step + lo, rtol=0, atol=4e-7 * max(1.0, hi - lo))
        assert q.w_total % 4 == 0 and q.before == pads[0].item() and q.left == pads[1].item()
    # 16-bit: every finite value within half a step of its code, except the top end which saturates
    q, mn, mx, ref = run_op("QuantizeForTest_16b_d32", [x, *pads])
    m = mx.item()
    assert mn.item() == -m and m >= max(-float(x.min()), float(x.max())) * (1 - 1e-7)
    codes = q.logical().astype(np.float64)
    np.testing.assert_array_equal(ref, (codes * m / 32768).astype(np.float32))
    inside = codes < 32767
    assert (np.abs(codes * m / 32768 - x)[inside] <= m / 65536 * (1 + 1e-6)).all()


def test_quantize_errors():
    assert_op_error("AutoQuantize_d32", [f4([1.0, np.nan])], "NaN")
    assert_op_error("QuantizeForTest_16b_d32", [f4([np.inf])], "Inf")
    assert_op_error("AutoQuantize_d32", [X4, i32([40])], "depth-before padding (input 1) is 40")
    assert_op_error("QuantizeForTest_d32", [X4, 0, 4, 0, i32([-1])], "top/bottom padding")
    assert_op_error("QuantizeForTest_d32", [to_d32(np.zeros((1, 1, 1, 1), np.uint8))], "must be a flat tensor")
