"""ONNX LSTM / GRU / RNN unrolled onto the documented op set, against onnxruntime's float run (issue 33).

Each case is one recurrent node built with onnx.helper (random weights, outputs that vary with the
input); the engine runs it with run-time ranges and with calibrated ranges (the decomposition's own
tensors calibrated like any source tensor) and the SQNR of every output against onnxruntime is
held to a bar in dB.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import hexnn_import as hx
from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.testing.onnx_compare import build_model, compare_onnx, random_feeds, run_ort

GATE_COUNT = {"LSTM": 4, "GRU": 3, "RNN": 1}


def recurrent_model(op: str, steps: int = 6, batch: int = 1, size: int = 3, hidden: int = 5,
                    direction: str = "forward", h0: bool = False, seed: int = 0, **attrs: object) -> bytes:
    """One ``op`` node reading ``x [steps, batch, size]`` (and ``h0`` when asked) with every output bound."""
    rng = np.random.default_rng(seed)
    g, nd = GATE_COUNT[op], 2 if direction == "bidirectional" else 1
    inits = {"W": rng.normal(0, .5, (nd, g * hidden, size)).astype(np.float32),
             "R": rng.normal(0, .5, (nd, g * hidden, hidden)).astype(np.float32),
             "B": rng.normal(0, .3, (nd, 2 * g * hidden)).astype(np.float32)}
    ins, inputs = ["x", "W", "R", "B", "", ""], {"x": (steps, batch, size)}
    if h0:
        ins[5], inputs["h0"] = "h0", (nd, batch, hidden)
    outs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    node = helper.make_node(op, ins, outs, hidden_size=hidden, direction=direction, **attrs)
    return build_model([node], inputs, {o: None for o in outs}, inits)


CASES = {
    "lstm": recurrent_model("LSTM"),
    "lstm_bidirectional": recurrent_model("LSTM", direction="bidirectional", seed=1),
    "lstm_batch2_initial_state": recurrent_model("LSTM", batch=2, h0=True, seed=2),
    "gru": recurrent_model("GRU", seed=3),
    "gru_linear_before_reset": recurrent_model("GRU", seed=4, linear_before_reset=1),
    "gru_reverse_initial_state": recurrent_model("GRU", direction="reverse", h0=True, seed=5),
    "rnn": recurrent_model("RNN", seed=6),
}


def _feeds(model: bytes, n: int, seed: int) -> list[dict[str, np.ndarray]]:
    return random_feeds(model, n, np.random.default_rng(seed), scale=0.8)


@pytest.mark.parametrize("case", sorted(CASES))
def test_recurrent_against_onnxruntime(case: str) -> None:
    model = CASES[case]
    feeds = _feeds(model, 12, 1)
    spread = np.std([run_ort(model, f)["Y"] for f in feeds], axis=0)
    assert float(spread.mean()) > 0.05  # the outputs vary with the input
    run_time = compare_onnx(model, feeds)
    samples = feeds + _feeds(model, 52, 2)
    calibrated = compare_onnx(model, feeds, calibration={k: np.stack([f[k] for f in samples]) for k in feeds[0]})
    for name in run_time:
        assert run_time[name].sqnr >= 28.0, (name, run_time)
        assert calibrated[name].sqnr >= 25.0, (name, calibrated)


def test_lstm_decomposes_onto_the_documented_ops() -> None:
    """An LSTM becomes products, Sigmoid / Tanh, Mul and Add: no op outside the documented set, no Supernode
    missing where calibration fixes the ranges."""
    model = CASES["lstm"]
    feeds = _feeds(model, 16, 3)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.onnx"
        path.write_bytes(model)
        g = hx.import_model(path, calibration={"x": np.stack([f["x"] for f in feeds])})
    counts = g.op_counts()
    # 4 gates over all steps + 4 recurrent products on each of the 5 steps after the first
    assert counts["Supernode_8x8p32to8"] == 4 + 4 * 5, counts
    assert counts["QuantizedSigmoid_8"] == 3 * 6 - 1 and counts["QuantizedTanh_8"] == 2 * 6, counts
    assert "QuantizeDownAndShrinkRange_32to8" not in counts  # every range calibrated, the decomposition's too


@pytest.mark.parametrize("attrs, reason", [({"clip": 2.0}, "clip"),
                                           ({"activations": ["Relu", "Tanh", "Tanh"]}, "activations")])
def test_unsupported_attributes_are_refused_at_import(attrs: dict, reason: str) -> None:
    model = recurrent_model("LSTM", **attrs)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.onnx"
        path.write_bytes(model)
        with pytest.raises(UnsupportedOpsError) as info:
            hx.import_model(path)
    assert "LSTM" in str(info.value) and reason in str(info.value)


def _constant_weight_model(op: str, weight: float, hidden: int, direction: str = "forward") -> bytes:
    """``op`` with every W and R entry ``weight`` and no bias, over ``x [3, 1, 2]``."""
    g, nd = GATE_COUNT[op], 2 if direction == "bidirectional" else 1
    inits = {"W": np.full((nd, g * hidden, 2), weight, np.float32),
             "R": np.full((nd, g * hidden, hidden), weight, np.float32)}
    node = helper.make_node(op, ["x", "W", "R"], ["Y", "Y_h"], hidden_size=hidden, direction=direction)
    return build_model([node], {"x": (3, 1, 2)}, {"Y": None, "Y_h": None}, inits)


@pytest.mark.parametrize("op, weight, direction, x", [
    # onnx's test_gru_bidirectional, reverse half: z_pre = 22 at the first step, so 1 - z and h are code 0
    # on [0, 0]; at the next step (1 - z) n and z h are both zero with zero-width ranges
    ("GRU", 2.0, "reverse", [[[1, 2]], [[3, 4]], [[5, 6]]]),
    # a zero input without bias: x W + b and h R are both zero from the second step on
    ("LSTM", 0.5, "forward", [[[0, 0]], [[0, 0]], [[0, 0]]]),
    ("GRU", 0.5, "forward", [[[0, 0]], [[0, 0]], [[0, 0]]]),
])
def test_all_zero_operands_of_a_run_time_add_run(op: str, weight: float, direction: str, x: list) -> None:
    """An add whose two operands are all zero on run-time ranges ``[0, 0]`` (which addsub_832_execute refuses)
    runs: in the graph as imported (what calibration runs), calibrated on that input, and prepared."""
    model = _constant_weight_model(op, weight, 5, direction)
    feed = {"x": np.asarray(x, np.float32)}
    want = run_ort(model, feed)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.onnx"
        path.write_bytes(model)
        calibrated = hx.import_model(path, calibration={"x": feed["x"][None]})
        graph = hx.import_model(path)
    assert graph.op_counts()["Maximum_f"] > 0
    runs = [hx.Runner(graph).run(feed)]  # as imported (prepare rewrites the graph in place)
    runs += [hx.Runner(hx.prepare(graph)).run(feed), hx.Runner(hx.prepare(calibrated)).run(feed)]
    for got in runs:
        for name, ref in want.items():
            assert np.abs(got[name] - ref).max() <= 2.0 / 255, (name, got[name], ref)
