"""make_autorequantize, make_autoquantize, remove_unnecessary_quants, remove_unnecessary_dequant_quants,
remove_unnecessary_requants: input graph -> expected graph, and engine results before/after.

Hand arithmetic used below (SEMANTICS §1 adjust_range): [-1, 1] has
z = 1*255/2 = 127.5, zi = 127, zf = 0.5 and (zf-1)*mn = 0.5 >= zf*mx = 0.5, so
max grows: range = 255/127, max = -1 + 255/127 = 1.0078740157 (step 1/127,
zero code 127). [-2, 2] likewise gives max = -2 + 510/127 = 2.0157480315.
"""
from __future__ import annotations

import copy

import numpy as np

from hexnn_import.graph import NNPad, Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.cleanup import RemoveDeadNodes
from hexnn_import.optimizer.quant_passes import (MakeAutoquantize, MakeAutorequantize, RemoveUnnecessaryDequantQuants,
                                                 RemoveUnnecessaryQuants, RemoveUnnecessaryRequants)
from hexnn_import.testing.prepare_graphs import QBuilder, canonical, q3, real_outputs, run_outputs

MAX_1 = float(np.float32(-1.0 + 255.0 / 127.0))   # adjust_range(-1, 1) max, as float32
MAX_2 = float(np.float32(-2.0 + 510.0 / 127.0))   # adjust_range(-2, 2) max, as float32
RNG = np.random.default_rng(7)


def after(b: QBuilder, *passes) -> QBuilder:
    """A copy of the graph with ``passes`` (then dead-node removal) applied."""
    out = copy.deepcopy(b)
    run_pipeline(out.g, [*passes, RemoveDeadNodes()])
    return out


def assert_same_outputs(before: QBuilder, after_: QBuilder, feeds: list[np.ndarray]) -> None:
    for a, c in zip(run_outputs(before.g, feeds), run_outputs(after_.g, feeds)):
        np.testing.assert_array_equal(a, c)


def q32_chain() -> tuple[QBuilder, list[Ref]]:
    b = QBuilder()
    return b, b.input((1, 2, 2, 3), "qint32", -4.0, 4.0)


def test_make_autorequantize() -> None:
    b, x = q32_chain()
    rr = b.op("RequantizationRange_32", x, (1, 1, 1, 1), "float", n_out=2, name="rr")
    rq = b.op("Requantize_32to8", [*x, Ref(rr.node_id, 0), Ref(rr.node_id, 1)], (1, 2, 2, 3), name="rq")
    b.output(q3(rq))
    want, y = q32_chain()
    want.output(q3(want.op("QuantizeDownAndShrinkRange_32to8", y, (1, 2, 2, 3), name="rq")))
    got = after(b, MakeAutorequantize())
    assert canonical(got.g) == canonical(want.g)
    feeds = [RNG.integers(-2 ** 20, 2 ** 20, (1, 2, 2, 3)).astype(np.int32)]
    assert_same_outputs(b, got, feeds)  # same arithmetic (SEMANTICS §4)


def test_make_autorequantize_needs_the_range_outputs() -> None:
    b, x = q32_chain()
    rr = b.op("RequantizationRange_32", x, (1, 1, 1, 1), "float", n_out=2)
    rq = b.op("Requantize_32to8", [*x, Ref(rr.node_id, 0), b.c(1.0)], (1, 2, 2, 3))  # max is not rr's
    b.output(q3(rq))
    assert canonical(after(b, MakeAutorequantize()).g) == canonical(b.g)


def test_make_autoquantize_from_min_max() -> None:
    b = QBuilder()
    x = b.input((1, 2, 2, 3), "float")
    mn = b.op("Min_f", x, (1, 1, 1, 1), "float", n_out=1)
    mx = b.op("Max_f", x, (1, 1, 1, 1), "float", n_out=1)
    b.output(q3(b.op("Quantize", [x[0], Ref(mn.node_id, 0), Ref(mx.node_id, 0)], (1, 2, 2, 3), name="q")))
    want = QBuilder()
    y = want.input((1, 2, 2, 3), "float")
    want.output(q3(want.op("AutoQuantize", y, (1, 2, 2, 3), name="q")))
    got = after(b, MakeAutoquantize())
    assert canonical(got.g) == canonical(want.g)
    # data of both signs: Quantize(x, min, max) and AutoQuantize(x) zero-fix the same range
    assert_same_outputs(b, got, [RNG.uniform(-3, 2, (1, 2, 2, 3)).astype(np.float32)])


def test_make_autoquantize_folds_a_float_const() -> None:
    """AutoQuantize([-1, 0, 0.5, 1]): range [-1, 1] -> [-1, 1.0078740] (step 1/127, zero 127);
    codes (x + 1) * 127 = 0, 127, 190.5, 254, the half code 190.5 rounded DOWN to 190 as the device's
    autoquantize_execute_opt does (quantize_floats_to_8b_asm: the half-code bias ``rangemant >> 9`` times the
    truncated 16-bit ``scaling`` falls just short of the next code), so the folded constant is the device's."""
    b = QBuilder()
    aq = b.op("AutoQuantize", [b.c([-1.0, 0.0, 0.5, 1.0])], (1, 1, 1, 4), name="aq")
    b.output(q3(aq))
    got = after(b, MakeAutoquantize())
    ((op, _, _, ins, _),) = canonical(got.g)
    assert op == "OUTPUT"
    assert ins == (("const", "|u1", (0, 127, 190, 254), (1, 1, 1, 4)),
                   ("const", "<f4", (-1.0,), (1, 1, 1, 1)), ("const", "<f4", (MAX_1,), (1, 1, 1, 1)))
    assert_same_outputs(b, got, [])


def test_remove_unnecessary_quants() -> None:
    b = QBuilder()
    x = b.input((1, 3, 3, 2), lo=-1.0, hi=MAX_1)
    d = b.op("Dequantize", x, (1, 3, 3, 2), "float", n_out=1)
    aq = b.op("AutoQuantize", [Ref(d.node_id, 0)], (1, 3, 3, 2))
    b.output(q3(b.op("QuantizedRelu_8", q3(aq), (1, 3, 3, 2), name="relu")))
    want = QBuilder()
    y = want.input((1, 3, 3, 2), lo=-1.0, hi=MAX_1)
    want.output(q3(want.op("QuantizedRelu_8", y, (1, 3, 3, 2), name="relu")))
    got = after(b, RemoveUnnecessaryQuants())
    assert canonical(got.g) == canonical(want.g)
    # the Relu now works on the input's range instead of the data's own: within one step of the coarser
    feeds = [RNG.integers(0, 256, (1, 3, 3, 2)).astype(np.uint8)]
    (r0, s0), (r1, s1) = real_outputs(run_outputs(b.g, feeds)), real_outputs(run_outputs(got.g, feeds))
    assert np.max(np.abs(r0 - r1)) <= max(s0, s1) * (1 + 1e-6)


def dequant_quant(lo: float, hi: float) -> QBuilder:
    b = QBuilder()
    x = b.input((1, 2, 3, 4), lo=-1.0, hi=MAX_1)
    d = b.op("Dequantize", x, (1, 2, 3, 4), "float", n_out=1)
    q = b.op("Quantize", [Ref(d.node_id, 0), b.c(lo), b.c(hi)], (1, 2, 3, 4), name="q")
    b.output(q3(b.op("QuantizedMaxPool_8", [*q3(q), b.g.shape_ref((1, 1, 1, 1)), b.g.shape_ref((1, 1, 1, 1))],
                     (1, 2, 3, 4), padding=NNPad.VALID, name="pool")))
    return b


def test_dequant_quant_on_the_same_range_is_bypassed_exactly() -> None:
    b = dequant_quant(-1.0, 1.0)  # zero-fixed: [-1, 1.0078740] = the input's range
    want = QBuilder()
    y = want.input((1, 2, 3, 4), lo=-1.0, hi=MAX_1)
    ones = [want.g.shape_ref((1, 1, 1, 1)), want.g.shape_ref((1, 1, 1, 1))]
    want.output(q3(want.op("QuantizedMaxPool_8", [*y, *ones], (1, 2, 3, 4), padding=NNPad.VALID, name="pool")))
    got = after(b, RemoveUnnecessaryDequantQuants())
    assert canonical(got.g) == canonical(want.g)
    assert_same_outputs(b, got, [np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4) * 10])


def test_dequant_quant_on_another_range_becomes_requantize_8to8() -> None:
    b = dequant_quant(-2.0, 2.0)  # zero-fixed: [-2, 2.0157480]
    got = after(b, RemoveUnnecessaryDequantQuants())
    rq = [n for n in canonical(got.g) if n[0] == "Requantize_8to8"]
    assert len(rq) == 1 and rq[0][1] == "q"
    assert rq[0][3][3:] == (("const", "<f4", (-2.0,), (1, 1, 1, 1)), ("const", "<f4", (MAX_2,), (1, 1, 1, 1)))
    assert not any(n[0] in ("Dequantize", "Quantize") for n in canonical(got.g))
    # fixed-point gain (SEMANTICS §4) instead of float dequantize/quantize: within one output step
    feeds = [np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4) * 11]
    (r0, s0), (r1, s1) = real_outputs(run_outputs(b.g, feeds)), real_outputs(run_outputs(got.g, feeds))
    assert s0 == s1 and np.max(np.abs(r0 - r1)) <= s0 * (1 + 1e-6)


def test_requantize_dequantize_quantize_on_one_range() -> None:
    """prepare.c's case: Requantize_32to8 (Const range) -> Dequantize -> Quantize (same Const range)."""
    b, x = q32_chain()
    rq = b.op("Requantize_32to8", [*x, b.c(-1.0), b.c(1.0)], (1, 2, 2, 3), name="rq")
    d = b.op("Dequantize", q3(rq), (1, 2, 2, 3), "float", n_out=1)
    b.output(q3(b.op("Quantize", [Ref(d.node_id, 0), b.c(-1.0), b.c(1.0)], (1, 2, 2, 3))))
    want, y = q32_chain()
    want.output(q3(want.op("Requantize_32to8", [*y, want.c(-1.0), want.c(1.0)], (1, 2, 2, 3), name="rq")))
    got = after(b, RemoveUnnecessaryDequantQuants())
    assert canonical(got.g) == canonical(want.g)
    assert_same_outputs(b, got, [RNG.integers(-2 ** 30, 2 ** 30, (1, 2, 2, 3)).astype(np.int32)])


def requant_8to8(lo: float, hi: float) -> QBuilder:
    b, x = q32_chain()
    rq = b.op("Requantize_32to8", [*x, b.c(-1.0), b.c(1.0)], (1, 2, 2, 3), name="rq")
    b.output(q3(b.op("Requantize_8to8", [*q3(rq), b.c(lo), b.c(hi)], (1, 2, 2, 3))))
    return b


def test_remove_unnecessary_requants() -> None:
    b = requant_8to8(-1.0, MAX_1)  # the range Requantize_32to8 already reports
    want, y = q32_chain()
    want.output(q3(want.op("Requantize_32to8", [*y, want.c(-1.0), want.c(1.0)], (1, 2, 2, 3), name="rq")))
    got = after(b, RemoveUnnecessaryRequants())
    assert canonical(got.g) == canonical(want.g)
    assert_same_outputs(b, got, [RNG.integers(-2 ** 30, 2 ** 30, (1, 2, 2, 3)).astype(np.int32)])
    other = requant_8to8(-2.0, MAX_2)
    assert canonical(after(other, RemoveUnnecessaryRequants()).g) == canonical(other.g)
