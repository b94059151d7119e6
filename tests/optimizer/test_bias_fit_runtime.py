"""A conv reading a run-time data range with no floor (QuantizeDownAndShrinkRange_32to8 after a product) never
meets fill_bias_buf's refusal ("Final too big") at run time: optimizer/bias_fit_floor.py rewrites that shrink
as hexagon_nn's own RequantizationRange_32 -> Maximum_f(max, W) -> Requantize_32to8 (the same bits wherever
the data reach W) with the least W at which the fused node holds its bias.

- the rewrite against the shrink it replaces (op_requantize.c: both ops, run alone) and against the real
  values of the data when the floor bites;
- the reproducer (float TFLite, x*x -> conv + RELU, bias 1): prepare.c's fused node refuses a nearly blank
  input; now it runs and agrees with LiteRT there and on varied inputs;
- the helpers: the bisection, the floor seen by the consumer, MirrorPad_8 passing AutoQuantize's floor on.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hexnn_import.ops import run_op
from hexnn_import.optimizer import supernodes
from hexnn_import.optimizer.bias_fit_floor import floor_range, least_floor
from hexnn_import.optimizer.bias_fit_inputs import input_floor
from hexnn_import.optimizer.editor import GraphEditor

import hexnn_import as hx
from hexnn_import.compare.metrics import sqnr_db
from hexnn_import.errors import OpError
from hexnn_import.graph import Ref
from hexnn_import.testing import TFLiteBuilder
from hexnn_import.testing.litert import run_litert
from hexnn_import.testing.prepare_graphs import QBuilder, q3


def _floored(x: np.ndarray, lo: float, hi: float, width: float) -> tuple[np.ndarray, ...]:
    mn, mx = run_op("RequantizationRange_32", [x, lo, hi])
    mx2 = run_op("Maximum_f", [mx, np.full((1, 1, 1, 1), width, np.float32)])[0]
    return run_op("Requantize_32to8", [x, lo, hi, mn, mx2])


def test_floored_shrink_is_the_shrink_where_the_data_reach_the_floor() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(-2 ** 24, 2 ** 26, (1, 4, 4, 8)).astype(np.int32)
    want = run_op("QuantizeDownAndShrinkRange_32to8", [x, -64.0, 64.0])
    got = _floored(x, -64.0, 64.0, 2.0 ** -20)    # the data's max (about 0.98) is far above the floor
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_floor_bites_only_where_the_data_are_narrower() -> None:
    """Data 0..3 qint32 steps of 2**-25 (max ~9e-8): the shrink's range is that narrow; floored at 2**-16 the
    range is [0, 2**-16] and each value is within half a step of it (2**-16 / 510) of the real one."""
    lo, hi = -64.0, 64.0
    level = (hi - lo) / 2 ** 32
    x = np.arange(64, dtype=np.int32).reshape(1, 4, 4, 4) % 4
    q, mn, mx = _floored(x, lo, hi, 2.0 ** -16)
    assert float(mn.reshape(-1)[0]) == 0.0 and float(mx.reshape(-1)[0]) == 2.0 ** -16
    real = q.astype(np.float64) * (2.0 ** -16 / 255)
    assert np.abs(real - x * level).max() <= 2.0 ** -16 / 510 + 1e-18
    _, _, shrink_max = run_op("QuantizeDownAndShrinkRange_32to8", [x, lo, hi])
    assert float(shrink_max.reshape(-1)[0]) == pytest.approx(3 * level)


def square_conv_float() -> bytes:
    """x -> MUL(x, x) -> 1x1 conv 8 -> 8 + RELU, weights N(0, 0.5), bias 1.0. Without calibration the square
    is a QuantizeDownAndShrinkRange_32to8 (the data's own range): x = 1e-3 everywhere makes it ~1e-6 wide,
    and the fused conv would need ``1 / (1e-6 / 255 * w_level)`` ~ 2e10 accumulator units for its bias."""
    rng = np.random.default_rng(1)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 8), np.float32)
    sq = b.add_tensor("sq", (1, 4, 4, 8), np.float32)
    y = b.add_tensor("y", (1, 4, 4, 8), np.float32)
    b.add_operator("MUL", [x, x], [sq], {})
    b.add_operator("CONV_2D", [sq, b.add_const("w", rng.normal(0, 0.5, (8, 1, 1, 8)).astype(np.float32)),
                               b.add_const("b", np.ones(8, np.float32))], [y], {"padding": "VALID"},
                   fused_activation="RELU")
    b.set_io([x], [y])
    return b.build()


def _import(model: bytes, tmp_path: Path) -> hx.Graph:
    path = tmp_path / "square.tflite"
    path.write_bytes(model)
    return hx.prepare(hx.import_model(path))


def refused_in_prepare_c_s_form(model: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    """Check that ``model`` fused as prepare.c fuses it (no bias-fit check) refuses a faint input; returns it."""
    faint = np.full((1, 4, 4, 8), 1e-3, np.float32)
    with monkeypatch.context() as m:
        m.setattr(supernodes, "unfused_reason", lambda *a: None)
        with pytest.raises(OpError, match='fill_bias_buf: "Final too big, will cause overflow"'):
            hx.Runner(_import(model, tmp_path)).run({"x": faint})
    return faint


def test_conv_after_a_shrink_refused_by_prepare_c_s_form_now_runs(tmp_path, monkeypatch) -> None:
    model = square_conv_float()
    faint = refused_in_prepare_c_s_form(model, tmp_path, monkeypatch)
    graph = _import(model, tmp_path)
    ops = [n.op for n in graph.nodes]
    assert {"RequantizationRange_32", "Maximum_f"} <= set(ops) and "QuantizeDownAndShrinkRange_32to8" not in ops
    assert any("floored at" in n and "holds its bias for every input" in n for n in graph.meta["notes"])
    runner, rng = hx.Runner(graph), np.random.default_rng(2)
    for x in (rng.uniform(-2, 2, (1, 4, 4, 8)).astype(np.float32), faint, np.zeros_like(faint), -faint):
        ref, ours = run_litert(model, {"x": x})[0], runner.run({"x": x})["y"]
        assert sqnr_db(ref, ours) >= 30.0


def test_least_floor_is_the_least_power_of_two() -> None:
    assert least_floor(lambda w: w >= 3e-7) == 2.0 ** -21
    assert least_floor(lambda w: True) == 2.0 ** -64
    assert least_floor(lambda w: False) is None


def test_the_consumer_sees_the_floor_and_mirror_pad_passes_autoquantize_s() -> None:
    b = QBuilder()
    x = b.input((1, 3, 3, 2), dtype="float")
    aq = b.op("AutoQuantize", x, (1, 3, 3, 2))
    pad = b.op("MirrorPad_8", [Ref(aq.node_id, 0), b.g.shape_ref((1, 1, 1, 1)), Ref(aq.node_id, 1),
                               Ref(aq.node_id, 2)], (1, 3, 3, 2))
    p0, p1, p2 = q3(pad)
    acc = b.op("QuantizedMul_8x8to32", [p0, p0, p1, p2, p1, p2], (1, 3, 3, 2), "qint32")
    shrink = b.op("QuantizeDownAndShrinkRange_32to8", q3(acc), (1, 3, 3, 2))
    ed = GraphEditor(b.g)
    assert input_floor(ed, Ref(pad.node_id, 1), Ref(pad.node_id, 2)) == (float(np.float32(1e-18)), False)
    assert input_floor(ed, Ref(shrink.node_id, 1), Ref(shrink.node_id, 2)) is None
    rq = floor_range(ed, shrink, 2.0 ** -10)
    assert rq.node_id == shrink.node_id and rq.op == "Requantize_32to8"
    assert input_floor(ed, Ref(rq.node_id, 1), Ref(rq.node_id, 2)) == (2.0 ** -10, False)
    floor_range(ed, rq, 2.0 ** -8)    # another consumer needs more: the same node, raised
    assert input_floor(ed, Ref(rq.node_id, 1), Ref(rq.node_id, 2)) == (2.0 ** -8, False)


def square_conv_through(kind: str) -> bytes:
    """:func:`square_conv_float` with the square passed through a SPLIT (YOLOv8's C2f splits a SiLU's output
    between convs) or a CONCATENATION with a second square (its neck's Concat) before the conv."""
    rng = np.random.default_rng(1)
    b = TFLiteBuilder()
    x = b.add_tensor("x", (1, 4, 4, 8), np.float32)
    sq = b.add_tensor("sq", (1, 4, 4, 8), np.float32)
    b.add_operator("MUL", [x, x], [sq], {})
    if kind == "split":
        parts = [b.add_tensor(f"p{i}", (1, 4, 4, 4), np.float32) for i in range(2)]
        b.add_operator("SPLIT", [b.add_const("axis", np.array(3, np.int32)), sq], parts, {"num_splits": 2})
        mid, c_in, extra = parts[0], 4, parts[1:]
    else:
        sq2 = b.add_tensor("sq2", (1, 4, 4, 8), np.float32)
        b.add_operator("MUL", [sq, sq], [sq2], {})
        mid, c_in, extra = b.add_tensor("cat", (1, 4, 4, 16), np.float32), 16, []
        b.add_operator("CONCATENATION", [sq, sq2], [mid], {"axis": 3})
    y = b.add_tensor("y", (1, 4, 4, 8), np.float32)
    b.add_operator("CONV_2D", [mid, b.add_const("w", rng.normal(0, 0.5, (8, 1, 1, c_in)).astype(np.float32)),
                               b.add_const("b", np.ones(8, np.float32))], [y], {"padding": "VALID"},
                   fused_activation="RELU")
    b.set_io([x], [y, *extra])
    return b.build()


@pytest.mark.parametrize("kind", ["split", "concat"])
def test_a_shrink_read_through_a_split_or_a_concat_is_floored(kind: str, tmp_path, monkeypatch) -> None:
    """The untrained YOLOv8n's refusals (its C2f Split, then its neck's Concat): the floor now follows a split's
    range (outputs n, n + 1) and floors one part of a concat (whose range is the union of its parts')."""
    model = square_conv_through(kind)
    faint = refused_in_prepare_c_s_form(model, tmp_path, monkeypatch)
    graph = _import(model, tmp_path)
    assert any("floored at" in n for n in graph.meta["notes"]), graph.meta["notes"]
    runner, rng = hx.Runner(graph), np.random.default_rng(2)
    for x in (rng.uniform(-2, 2, (1, 4, 4, 8)).astype(np.float32), faint, np.zeros_like(faint), -faint):
        ref, ours = run_litert(model, {"x": x})[0], runner.run({"x": x})["y"]
        # >= 25 dB: the output's own auto range keeps the varied input's width (its step ~0.075 around 1.0)
        assert sqnr_db(ref, ours) >= 25.0
