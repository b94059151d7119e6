"""QuantizedAdd/Sub/Mul_16 and _u16 (op texts; conventions in ops/kernels/q16_common.py).

16-bit ranges are 65536 steps wide: qint16 ``real = q * (max - min) / 65536``,
quint16 ``real = (q - zero) * (max - min) / 65536`` with ``zero = round(-min / step)``.
"""
from __future__ import annotations

import logging

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error

LOGGER = "hexnn_import.ops.kernels.q16_arith"


def s16(values, shape=None) -> np.ndarray:
    a = np.asarray(values, dtype=np.int16)
    return a.reshape(shape or (1, 1, 1, a.size))


def u16(values, shape=None) -> np.ndarray:
    a = np.asarray(values, dtype=np.uint16)
    return a.reshape(shape or (1, 1, 1, a.size))


def ends(out) -> tuple[float, float]:
    return out[1].item(), out[2].item()


def test_add_sub_16_identical_ranges_are_integer_ops():
    # text: "16-bit 'integer' ops if the ranges are all identical": gains 1, plain sums, saturated
    a, b = s16([100, -200, 32767, -32768]), s16([5, 7, 1, -1])
    out = run_op("QuantizedAdd_16", [a, b, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    assert out[0].tolist() == [[[[105, -193, 32767, -32768]]]] and ends(out) == (-1.0, 1.0)
    out = run_op("QuantizedSub_16", [a, b, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    assert out[0].tolist() == [[[[95, -207, 32766, -32767]]]]


def test_add_16_by_hand_with_gains():
    # steps: A +-1 -> 2**-15, B +-2 -> 2**-14, out +-4 -> 2**-13: ga = 1/4, gb = 1/2
    # 100/4 - 10/2 = 20;  6/4 + 3/2 = 3;  2/4 + 0 = 0.5 -> 1 (half away);  -2/4 = -0.5 -> -1
    a, b = s16([100, 6, 2, -2]), s16([-10, 3, 0, 0])
    out = run_op("QuantizedAdd_16", [a, b, -1.0, 1.0, -2.0, 2.0, -4.0, 4.0])
    assert out[0].tolist() == [[[[20, 3, 1, -1]]]] and ends(out) == (-4.0, 4.0)
    # sub: 100/4 + 10/2 = 30;  6/4 - 3/2 = 0
    out = run_op("QuantizedSub_16", [a, b, -1.0, 1.0, -2.0, 2.0, -4.0, 4.0])
    assert out[0].tolist()[0][0][0][:2] == [30, 0]


def test_add_16_small_output_range_grows_with_a_warning(caplog):
    # out range 2e-5 < 2 / 8192: the step becomes 2**-15 / 8192 = 2**-28, range +-32768 * 2**-28 = +-2**-13
    a, b = s16([1, -1]), s16([0, 0])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        out = run_op("QuantizedAdd_16", [a, b, -1.0, 1.0, -1.0, 1.0, -1e-5, 1e-5], node="add7")
    assert ends(out) == (-2.0 ** -13, 2.0 ** -13)
    # code 1 of A is 2**-15 = 8192 output steps of 2**-28
    assert out[0].tolist() == [[[[8192, -8192]]]]
    [rec] = [r for r in caplog.records if r.name == LOGGER]
    assert rec.levelno == logging.WARNING and "add7" in rec.message and "1/8192" in rec.message
    # at the bound exactly (out range = 2/8192): no warning
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        run_op("QuantizedAdd_16", [a, b, -1.0, 1.0, -1.0, 1.0, -2.0 ** -13, 2.0 ** -13])
    assert not [r for r in caplog.records if r.name == LOGGER]


def test_mul_16_integer_case_and_widening(caplog):
    # A +-1, B +-2: product of ranges 2 * 4 = 8; out range 8 / 65536 = 2**-13 (+-2**-14) -> gain 1
    a, b = s16([100, -200, 300]), s16([5, 7, 200])
    out = run_op("QuantizedMul_16", [a, b, -1.0, 1.0, -2.0, 2.0, -2.0 ** -14, 2.0 ** -14])
    assert out[0].tolist() == [[[[500, -1400, 32767]]]]
    # out range 2**-12 = 1/32768 of the product: gain 1/2, no widening (module doc on the text's bounds)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        out = run_op("QuantizedMul_16", [s16([100, 3, -3]), s16([5, 1, 1]), -1.0, 1.0, -2.0, 2.0,
                                         -2.0 ** -13, 2.0 ** -13])
    assert out[0].tolist() == [[[[250, 2, -2]]]]          # 1.5 -> 2, -1.5 -> -2
    assert not caplog.records
    # out range 2e-6 < 8 / 65536: widened to the integer case, warning logged
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        out = run_op("QuantizedMul_16", [a, b, -1.0, 1.0, -2.0, 2.0, -1e-6, 1e-6])
    assert ends(out) == (-2.0 ** -14, 2.0 ** -14) and out[0].tolist() == [[[[500, -1400, 32767]]]]
    assert "1/65536" in caplog.records[0].message and caplog.records[0].levelno == logging.WARNING


def test_add_sub_u16_by_hand():
    # A [0, 4]: step 2**-14, zero 0; B [-2, 2]: step 2**-14, zero 32768; out [-4, 4]: step 2**-13, zero 32768
    a, b = u16([100, 0]), u16([32768 + 60, 0])
    # (100 + 60) * 2**-14 = 80 out steps -> 32768 + 80;  0 + (-32768) * 2**-14 = -2.0 -> -16384 steps -> 16384
    out = run_op("QuantizedAdd_u16", [a, b, 0.0, 4.0, -2.0, 2.0, -4.0, 4.0])
    assert out[0].tolist() == [[[[32848, 16384]]]] and ends(out) == (-4.0, 4.0)
    # sub: (100 - 60) / 2 = 20 -> 32788;  0 - (-2.0) = 2.0 -> 16384 steps -> 49152
    out = run_op("QuantizedSub_u16", [a, b, 0.0, 4.0, -2.0, 2.0, -4.0, 4.0])
    assert out[0].tolist() == [[[[32788, 49152]]]]


def test_mul_u16_by_hand_and_widening(caplog):
    # A [0,4] (2**-14, zero 0), B [-2,2] (2**-14, zero 32768), out [-8,8] (2**-12, zero 32768)
    # 4096 * 2**-14 = 0.25, (40960 - 32768) * 2**-14 = 0.5; 0.125 / 2**-12 = 512 -> 33280
    out = run_op("QuantizedMul_u16", [u16([4096]), u16([40960]), 0.0, 4.0, -2.0, 2.0, -8.0, 8.0])
    assert out[0].tolist() == [[[[33280]]]] and ends(out) == (-8.0, 8.0)
    # tiny output range: step grows to a_step * b_step * 8 * 4096/4095, zero code 32768 kept
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        out = run_op("QuantizedMul_u16", [u16([4096]), u16([40960]), 0.0, 4.0, -2.0, 2.0, -1e-7, 1e-7])
    step = 2.0 ** -28 * 8 * 4096 / 4095
    assert ends(out) == (np.float32(-32768 * step), np.float32(32768 * step))
    assert caplog.records and caplog.records[0].levelno == logging.WARNING


@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)])
@pytest.mark.parametrize("signed", [True, False])
def test_against_float64_formula(op, fn, signed):
    rng = np.random.default_rng(2 * ["Add", "Sub", "Mul"].index(op) + int(signed))
    shape_a, shape_b = (2, 3, 4, 5), (1, 3, 1, 5)               # B broadcasts over b and w
    if signed:
        name, ra, rb = f"Quantized{op}_16", (-1.5, 1.5), (-0.75, 0.75)
        ro = (-2.0, 2.0) if op != "Mul" else (-0.5, 0.5)
        a = rng.integers(-32768, 32768, shape_a).astype(np.int16)
        b = rng.integers(-32768, 32768, shape_b).astype(np.int16)

        def real(q, r):
            return q.astype(np.float64) * (r[1] - r[0]) / 65536
    else:
        name, ra, rb = f"Quantized{op}_u16", (-1.0, 3.0), (-0.5, 0.25)
        ro = (-2.0, 3.5) if op != "Mul" else (-1.0, 1.0)
        a = rng.integers(0, 65536, shape_a).astype(np.uint16)
        b = rng.integers(0, 65536, shape_b).astype(np.uint16)

        def real(q, r):
            step = (r[1] - r[0]) / 65536
            return (q.astype(np.float64) - round(-r[0] / step)) * step
    out, mn, mx = run_op(name, [a, b, *map(float, ra), *map(float, rb), *map(float, ro)])
    assert out.shape == shape_a and (mn.item(), mx.item()) == ro
    expected = fn(real(a, ra), real(b, rb))
    step = (ro[1] - ro[0]) / 65536
    lo, hi = (ro[0], ro[1] - step)
    got = real(out, ro)
    # within half an output step of the float64 result clipped to the representable codes; Mul_u16 follows the
    # device's 31-bit fixed point with its range bias (op_addsubmul_16.c, issue 36): within 0.7 of a step
    tol = 0.7 if (op, signed) == ("Mul", False) else 0.5
    assert np.all(np.abs(got - np.clip(expected, lo, hi)) <= step * tol * (1 + 1e-9))


def test_errors_name_node_and_op():
    a = s16([1, 2])
    assert_op_error("QuantizedAdd_16", [a, a, -1.0, 0.5, -1.0, 1.0, -1.0, 1.0], "input A", "not symmetric")
    assert_op_error("QuantizedMul_16", [a, a, -1.0, 1.0, -1.0, 1.0, 0.5, 1.0], "output", "does not contain 0")
    assert_op_error("QuantizedAdd_16", [np.array([[[[40000]]]], np.int32), a, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0],
                    "input A data", "int16")
    assert_op_error("QuantizedSub_u16", [u16([1, 2, 3]), u16([1, 2]), -1.0, 1.0, -1.0, 1.0, -1.0, 1.0],
                    "do not broadcast")
    assert_op_error("QuantizedAdd_u16", [u16([1]), u16([1]), -1.0, 1.0, -1.0, 1.0], "got 6 inputs")
