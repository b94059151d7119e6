"""Graph and test ops: INPUT, OUTPUT, Const, Nop, Sink, Check, Close_*, PPrint_*, Variable, Assign,
and the early name QuantizedAdd_8x8to8 (op texts, first section of hexagon_nn_ops.txt)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from hexnn_import.ops import run_op
from hexnn_import.testing.opcheck import assert_op_error, f4, i4, u4

PPRINT_LOGGER = "hexnn_import.ops.kernels.graph_pprint"


# ---- INPUT / OUTPUT / Const / Nop / Sink ------------------------------------

def test_input_output_const_outside_the_engine():
    a, b = f4([1.0, 2.0]), u4([3])
    out = run_op("INPUT", [], state={"feeds": [a, b]}, n_outputs=2)
    assert out[0] is a and out[1] is b
    state: dict = {}
    assert run_op("OUTPUT", [a, b], state=state) == () and state["results"] == [a, b]
    (c,) = run_op("Const", [], state={"data": b})
    assert np.array_equal(c, b)
    assert_op_error("INPUT", [], "feeds")
    assert_op_error("INPUT", [], "declares 1 outputs", state={"feeds": [a, b]}, n_outputs=1)
    assert_op_error("Const", [], "ctx.state['data']")


def test_nop_copies_and_sink_does_nothing():
    a, b = f4([1.5]), i4([7, 8])
    out = run_op("Nop", [a, b], n_outputs=2)
    assert [o.tolist() for o in out] == [a.tolist(), b.tolist()]
    assert out[0] is not a and out[0].dtype == a.dtype
    assert_op_error("Nop", [a, b], "declares 1 outputs", n_outputs=1)
    assert run_op("Sink", [a, b, u4([1])]) == ()


# ---- Check / Close ----------------------------------------------------------

def test_check_equal_and_mismatch():
    a = i4([1, 2, 3, 4]).reshape(1, 1, 2, 2)
    assert run_op("Check", [a, a.copy()]) == ()
    b = a.copy()
    b[0, 0, 1, 0] = 9
    msg = assert_op_error("Check", [b, a], "check failed", "1 of 4", "[0,0,1,0]", "expected 3", "got 9")
    assert "exact" in msg
    assert_op_error("Check", [a, a.reshape(1, 1, 1, 4)], "shapes differ", "[1, 1, 2, 2]", "[1, 1, 1, 4]")
    nan = f4([np.nan, 1.0])
    assert run_op("Check", [nan, nan.copy()]) == ()


def test_close_f_tolerance_is_a_fraction_of_the_reference_range():
    # reference [0, 1, 2, -2]: range max(0, 2) - min(0, -2) = 4; default 0.07 -> 0.28
    ref = f4([0.0, 1.0, 2.0, -2.0])
    assert run_op("Close_f", [f4([0.25, 1.0, 2.0, -2.0]), ref]) == ()
    msg = assert_op_error("Close_f", [f4([0.3, 1.0, 2.0, -2.2]), ref], "check failed", "1 of 4",
                          "[0,0,0,0]", "expected 0.0", "got 0.3", "0.07 x reference range 4)")
    assert "0.28" in msg
    # input 2 = 0.1 -> 0.4: passes
    assert run_op("Close_f", [f4([0.3, 1.0, 2.0, -2.0]), ref, 0.1]) == ()
    assert_op_error("Close_f", [f4([np.nan, 1.0, 2.0, -2.0]), ref], "check failed", "got nan")
    assert_op_error("Close_f", [ref, ref, -0.1], "tolerance (input 2)")
    assert_op_error("Close_f", [ref, f4([0.0])], "shapes differ")


def test_close_on_integer_codes():
    # quint8: 0.07 * max(ref) = 0.07 * 100 = 7
    ref = u4([100, 50])
    assert run_op("Close_quint8", [u4([107, 50]), ref]) == ()
    assert_op_error("Close_quint8", [u4([108, 50]), ref], "expected 100", "got 108", "7")
    # int32 / qint32: 0.07 * max|ref| = 0.07 * 1000 = 70
    ref32 = i4([-1000, 10])
    for op in ("Close_int32", "Close_qint32"):
        assert run_op(op, [i4([-930, 80]), ref32]) == ()
        assert_op_error(op, [i4([-929, 81]), ref32], "2 of 2", "expected", "largest reference magnitude 1000")
    # a reference of zeros needs an exact match
    assert_op_error("Close_int32", [i4([1]), i4([0])], "1 of 1")


def test_close_q_quint8_error_ratio():
    # dut on [0, 2.55]: step 0.01; reference on [0, 5.1]: step 0.02, range 5.1. ref code 50 = 1.0
    ref = u4([50])
    ins = lambda d: [u4([d]), 0.0, 2.55, ref, 0.0, 5.1]        # noqa: E731
    assert run_op("Close_q_quint8", ins(100)) == ()            # 1.0 vs 1.0
    assert run_op("Close_q_quint8", ins(135)) == ()            # 0.35 / 5.1 = 0.0686 <= 0.07
    msg = assert_op_error("Close_q_quint8", ins(136), "error ratio 0.07", "codes there: dut 136, reference 50")
    assert "[0,0,0,0]" in msg                                    # 0.36 / 5.1 = 0.0706
    # a 7th float input is the error ratio; with 8 inputs input 6 is the offset index
    assert run_op("Close_q_quint8", ins(136) + [0.1]) == ()
    assert run_op("Close_q_quint8", ins(136) + [i4([0]), 0.1]) == ()
    assert_op_error("Close_q_quint8", ins(136) + [i4([0])], "error ratio 0.07")
    assert_op_error("Close_q_quint8", [u4([1]), 0.0, 1.0, ref, 1.0, 2.0], "reference", "does not contain 0")


# ---- PPrint -----------------------------------------------------------------

def test_pprint_logs_the_tensor(caplog):
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    with caplog.at_level(logging.INFO, logger=PPRINT_LOGGER):
        assert run_op("PPrint_8", [x], node="pp") == ()
    [rec] = caplog.records
    assert rec.name == PPRINT_LOGGER and rec.levelno == logging.INFO
    assert "node pp (PPrint_8)" in rec.message and "[1, 2, 3, 4]" in rec.message and "23" in rec.message


def test_pprint_range_limiting(caplog):
    # depth (dim 3) from 1 up to (not including) 3: values 4k + 1, 4k + 2 only
    x = np.arange(24, dtype=np.int32).reshape(1, 2, 3, 4)
    with caplog.at_level(logging.INFO, logger=PPRINT_LOGGER):
        run_op("PPrint_32", [x, i4([3]), i4([1]), i4([3])])
    shown = caplog.records[-1].message.split("\n", 1)[1]
    values = sorted(int(v) for v in shown.replace("[", " ").replace("]", " ").split())
    assert values == sorted(4 * k + d for k in range(6) for d in (1, 2))
    assert "D 1..2" in caplog.records[-1].message
    # stop defaults to start + 1; dim -1 shows everything; stop past the end is truncated
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=PPRINT_LOGGER):
        run_op("PPrint_f", [x.astype(np.float32), i4([1]), i4([1])])
        run_op("PPrint_f", [f4([np.nan, 1.0]), i4([-1])])
        run_op("PPrint_8", [u4([1, 2, 3]), i4([3]), i4([2]), i4([99])])
    assert "H 1..1" in caplog.records[0].message and "nan" in caplog.records[1].message
    assert "D 2..2" in caplog.records[2].message
    assert_op_error("PPrint_8", [u4([1, 2]), i4([4])], "dimension (input 1) is 4")
    assert_op_error("PPrint_8", [u4([1, 2]), i4([3]), i4([5])], "selects nothing")


# ---- Variable / Assign (engine behaviour: tests/test_engine_variable.py) ------

def test_variable_and_assign_outside_the_engine():
    state: dict = {}
    (v,) = run_op("Variable", [f4([1.0, 2.0])], state=state, n_outputs=1)
    assert v.tolist() == [[[[1.0, 2.0]]]]
    # later executions ignore the inputs: the value lives in the state
    (v2,) = run_op("Variable", [f4([9.0, 9.0])], state=state, n_outputs=1)
    assert v2.tolist() == [[[[1.0, 2.0]]]]
    (copy,) = run_op("Assign", [v2, f4([5.0, 6.0])], n_outputs=1)
    assert copy.tolist() == [[[[5.0, 6.0]]]] and copy is not v2
    # the Variable output is a reference: the write is seen through it and through the state
    assert v2.tolist() == [[[[5.0, 6.0]]]] and state["variable_values"][0] is v2
    (v3,) = run_op("Variable", [f4([9.0, 9.0])], state=state, n_outputs=1)
    assert v3.tolist() == [[[[5.0, 6.0]]]] and v2 is not v3       # fresh array each execution
    # muted outputs: zero-size elements, no copy
    (muted,) = run_op("Assign", [v3, f4([7.0, 8.0])], state={"muted_outputs": frozenset({0})}, n_outputs=1)
    assert muted.dtype.itemsize == 0 and muted.shape == (1, 1, 1, 2)
    assert run_op("Assign", [v3, f4([1.0, 1.0])], n_outputs=0) == ()


def test_variable_assign_errors():
    (v,) = run_op("Variable", [f4([1.0, 2.0])], n_outputs=1)
    assert_op_error("Assign", [v, f4([1.0])], "shape [1, 1, 1, 1]", "must match")
    assert_op_error("Assign", [v, i4([1, 2])], "dtype int32")
    assert_op_error("Assign", [v, f4([1.0, 2.0]), v], "pairs")
    assert_op_error("Assign", [v, f4([1.0, 2.0])], "declares 2 outputs", n_outputs=2)
    assert_op_error("Variable", [f4([1.0]), f4([2.0])], "2 inputs and 1 outputs", n_outputs=1)
    zero_length = np.zeros((1, 1, 1, 3), np.dtype("V0"))
    assert_op_error("Variable", [zero_length], "zero-length Const", "output defs", n_outputs=1)


# ---- early name -------------------------------------------------------------

def test_quantized_add_8x8to8_is_the_8p8to8_add():
    # [0, 2.55]: step 0.01, zero 0 for all three ranges: codes add, 200 + 100 saturates at 255
    a, b = u4([10, 200]), u4([20, 100])
    q, mn, mx = run_op("QuantizedAdd_8x8to8", [a, b, 0.0, 2.55, 0.0, 2.55, 0.0, 2.55])
    assert q.tolist() == [[[[30, 255]]]] and mx.item() == pytest.approx(2.55)
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 256, (1, 2, 3, 4)).astype(np.uint8), rng.integers(0, 256, (1, 1, 1, 4)).astype(np.uint8)
    ins = [a, b, -1.0, 1.0, -0.5, 2.0, -2.0, 3.0]
    for x, y in zip(run_op("QuantizedAdd_8x8to8", ins), run_op("QuantizedAdd_8p8to8", ins)):
        assert np.array_equal(x, y)
    assert_op_error("QuantizedAdd_8x8to8", ins[:6], "got 6 inputs")
