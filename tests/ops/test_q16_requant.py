"""QuantizeDownAndShrinkRange_32to16 and Requantize_32to16 (op texts; SEMANTICS.md §1: one qint32
code = (max - min) / 2**32; qint16 output: symmetric, step = max / 32768)."""
from __future__ import annotations

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, i4


def test_shrink_range_keeps_codes_within_32k():
    # input +-2**15: one = 2**16 / 2**32 = 2**-16; codes within +-32768 are not scaled (text: "will not
    # scale codes by > 1.0"), range +-32768 * 2**-16 = +-0.5 ("at least 1/64k times the input range")
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to16", [i4([0, 100, -32768, 32768]), -2.0 ** 15, 2.0 ** 15])
    assert q.dtype == np.int16 and q.tolist() == [[[[0, 100, -32768, 32767]]]]
    assert (mn.item(), mx.item()) == (-0.5, 0.5)
    # all zeros: still the +-0.5 range
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to16", [i4([0, 0]), -2.0 ** 15, 2.0 ** 15])
    assert q.tolist() == [[[[0, 0]]]] and mx.item() == 0.5


def test_shrink_range_scales_larger_codes():
    # m = 65536 -> range +-65536 * 2**-16 = +-1, q = round_away(x / 2): 65536 -> 32768 -> 32767,
    # -1000 -> -500, 3 -> 1.5 -> 2, -3 -> -2
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to16",
                       [i4([0, 65536, -1000, 3, -3]), -2.0 ** 15, 2.0 ** 15])
    assert q.tolist() == [[[[0, 32767, -500, 2, -2]]]]
    assert (mn.item(), mx.item()) == (-1.0, 1.0)
    # the larger magnitude may be negative: m = 2**31 from -2**31
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to16", [i4([-2 ** 31, 2 ** 16]), -1.0, 1.0])
    assert q.tolist() == [[[[-32768, 1]]]] and mx.item() == 1.0       # one = 2**-31, 2**31 * one = 1


@pytest.mark.parametrize("seed", range(4))
def test_shrink_range_reference(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2 ** 24, 2 ** 24, (1, 3, 5, 7)).astype(np.int32)
    q, mn, mx = run_op("QuantizeDownAndShrinkRange_32to16", [x, -8.0, 8.0])
    one = 16.0 / 2 ** 32
    m = max(int(x.max()), -int(x.min()))
    assert mx.item() == pytest.approx(m * one, rel=1e-6) and mn.item() == -mx.item()
    step = m * one / 32768
    got = q.astype(np.float64) * step
    # within half a step of x * one, except the saturated top code (one step below max)
    assert np.all(np.abs(got - np.minimum(x * one, m * one - step)) <= step / 2 * (1 + 1e-6))


def test_requantize_32to16_by_hand():
    # one = 2**-16. Requested [-0.25, 0.5] -> symmetric M = 0.5, gain 2**-16 * 32768 / 0.5 = 1: codes kept
    x = i4([3, -3, 70000, -70000])
    q, mn, mx = run_op("Requantize_32to16", [x, -2.0 ** 15, 2.0 ** 15, -0.25, 0.5])
    assert q.tolist() == [[[[3, -3, 32767, -32768]]]] and (mn.item(), mx.item()) == (-0.5, 0.5)
    # requested [-1, 0.25] -> M = 1, gain 1/2: 1.5 -> 2, -1.5 -> -2, 35000 -> 32767, -35000 -> -32768
    q, mn, mx = run_op("Requantize_32to16", [x, -2.0 ** 15, 2.0 ** 15, -1.0, 0.25])
    assert q.tolist() == [[[[2, -2, 32767, -32768]]]] and (mn.item(), mx.item()) == (-1.0, 1.0)
    # a [0, 0] request uses the floor M = 1/2048 (gain 2**-16 * 32768 * 2048 = 1024)
    q, mn, mx = run_op("Requantize_32to16", [i4([1, 40]), -2.0 ** 15, 2.0 ** 15, 0.0, 0.0])
    assert q.tolist() == [[[[1024, 32767]]]] and mx.item() == 1 / 2048


def test_requantize_32to16_reference():
    x = np.random.default_rng(1).integers(-2 ** 31, 2 ** 31, (2, 2, 3, 4), dtype=np.int64).astype(np.int32)
    q, mn, mx = run_op("Requantize_32to16", [x, -3.0, 3.0, -2.0, 1.0])
    one, step = 6.0 / 2 ** 32, 2.0 / 32768
    assert (mn.item(), mx.item()) == (-2.0, 2.0)
    got = q.astype(np.float64) * step
    assert np.all(np.abs(got - np.clip(x * one, -2.0, 2.0 - step)) <= step / 2 * (1 + 1e-9))


def test_errors_name_node_and_op():
    assert_op_error("QuantizeDownAndShrinkRange_32to16", [i4([1]), 1.0, 2.0], "input", "does not contain 0")
    assert_op_error("Requantize_32to16", [i4([1]), -1.0, 1.0, -1.0, float("inf")], "requested output")
    # input +-2**30: one = 2**31 / 2**32 = 0.5; M floored to 1/2048: gain 0.5 * 32768 * 2048 = 2**25 >= 2**24
    assert_op_error("Requantize_32to16", [i4([1]), -2.0 ** 30, 2.0 ** 30, 0.0, 0.0], "gain", "2**24")
    assert_op_error("Requantize_32to16", [np.array([[[[1.5]]]], np.float32), -1.0, 1.0, -1.0, 1.0], "input data")
