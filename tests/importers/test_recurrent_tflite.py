"""Keras 3 LSTM / GRU / SimpleRNN converted to TFLite (a WHILE loop with cond and body subgraphs), unrolled,
against LiteRT's float run (issue 33).

The models are made by tests/data/recurrent/make_keras_rnn.py (random weights, outputs that vary with
the input). Each runs with run-time ranges and with calibrated ranges (the unrolled cell's tensors
calibrated like any source tensor); the SQNR of the output against LiteRT is held to a bar in dB.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.errors import UnsupportedOpsError
from hexnn_import.importers.tflite.importer import TFLiteImporter, load_handlers, load_tflite
from hexnn_import.testing.litert import run_litert
from hexnn_import.testing.tflite_compare import compare_tflite

DATA = Path(__file__).resolve().parents[1] / "data" / "recurrent"
MODELS = ("keras_lstm_seq", "keras_lstm_last", "keras_gru_seq", "keras_gru_last", "keras_simple_rnn_seq",
          "keras_bilstm_seq")
INPUT = "serving_default_x:0"


def _feed(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {INPUT: rng.normal(0, 1, (1, 6, 4)).astype(np.float32)}


@pytest.mark.parametrize("name", MODELS)
def test_keras_loop_against_litert(name: str) -> None:
    model = (DATA / f"{name}.tflite").read_bytes()
    rng = np.random.default_rng(1)
    outs = [next(iter(run_litert(model, _feed(rng), as_dict=True).values())) for _ in range(8)]
    assert float(np.std(outs, axis=0).mean()) > 0.05  # the outputs vary with the input
    run_time = compare_tflite(model, n=10, seed=2, feed_fn=_feed)
    calibration = {INPUT: np.random.default_rng(3).normal(0, 1.2, (64, 1, 6, 4)).astype(np.float32)}
    calibrated = compare_tflite(model, n=10, seed=2, feed_fn=_feed, calibration=calibration)
    for out in run_time:
        assert run_time[out].sqnr >= 30.0, (name, run_time)
        assert calibrated[out].sqnr >= 25.0, (name, calibrated)


def test_loop_becomes_the_unrolled_cell() -> None:
    """No WHILE, no subgraph left: 4 input products over all steps, 4 recurrent products per step after the
    first, one sigmoid per gate (i, o; f from the second step) and tanh of g and of c per step."""
    g = hx.import_model(DATA / "keras_lstm_seq.tflite")
    counts = g.op_counts()
    assert counts["QuantizedConv2d_8x8to32"] == 4 + 4 * 5, counts
    assert counts["QuantizedSigmoid_8"] == 3 * 6 - 1 and counts["QuantizedTanh_8"] == 2 * 6, counts


def test_a_loop_that_is_not_a_keras_cell_is_refused() -> None:
    """The LSTM body with its input gate's sigmoid made a tanh: the loop is refused, with the reason."""
    load_handlers()
    model, _ = load_tflite(DATA / "keras_lstm_seq.tflite")
    body = model.subgraphs[model.operators[[op.opname for op in model.operators].index("WHILE")].options
                           .BodySubgraphIndex()]
    split = next(op for op in body.operators if op.opname == "SPLIT")
    first = next(op for op in body.operators if op.inputs and op.inputs[0] == split.outputs[0])
    first.opname = "TANH"
    with pytest.raises(UnsupportedOpsError) as info:
        TFLiteImporter(model, "mutated").run()
    assert "WHILE" in str(info.value) and "sigmoid / tanh in the order i, f, c, o" in str(info.value)


@pytest.mark.parametrize("name", ["tfk_lstm_seq_float", "tfk_bilstm_seq"])
def test_sequence_lstm_float_against_litert(name: str) -> None:
    """tf_keras's LSTM as UNIDIRECTIONAL_SEQUENCE_LSTM (float; Bidirectional: a second one between two REVERSE_V2):
    the unrolled cell within 30 dB of LiteRT."""
    model = (DATA / f"{name}.tflite").read_bytes()
    res = compare_tflite(model, n=10, seed=4, feed_fn=_feed)
    assert all(a.sqnr >= 30.0 for a in res.values()), res


def test_sequence_lstm_int8_within_lsbs_of_litert() -> None:
    """The full-integer UNIDIRECTIONAL_SEQUENCE_LSTM (16-bit cell state in both, 16-bit gates in LiteRT, 8-bit
    here): measured 97.1% of the int8 outputs within 1 code of LiteRT's, at most 3 apart (random weights
    N(0, 0.5), 6 steps: the 8-bit gates and the 8-bit tanh input are the difference)."""
    model = (DATA / "tfk_lstm_seq_int8.tflite").read_bytes()
    g = hx.import_model(DATA / "tfk_lstm_seq_int8.tflite")
    scale, zp = g.inputs[0].scale, g.inputs[0].zero_point

    def feed(rng: np.random.Generator) -> dict[str, np.ndarray]:
        real = rng.normal(0, 1, (1, 6, 4))
        return {INPUT: np.clip(np.round(real / scale) + zp, -128, 127).astype(np.int8)}

    res = compare_tflite(model, n=20, seed=5, feed_fn=feed)
    spread = np.std([run_litert(model, feed(np.random.default_rng(k)), as_dict=True)[g.outputs[0].name]
                     for k in range(6)], axis=0)
    assert float(spread.mean()) > 3.0  # the codes vary with the input
    for a in res.values():
        assert a.within1 >= 0.95 and a.worst <= 3, a


def test_sequence_lstm_with_peepholes_is_refused() -> None:
    load_handlers()
    model, _ = load_tflite(DATA / "tfk_lstm_seq_float.tflite")
    op = next(op for op in model.operators if op.opname == "UNIDIRECTIONAL_SEQUENCE_LSTM")
    op.inputs[9] = op.inputs[12]  # a [H] constant in the cell-to-input peephole slot
    with pytest.raises(UnsupportedOpsError) as info:
        TFLiteImporter(model, "mutated").run()
    assert "UNIDIRECTIONAL_SEQUENCE_LSTM" in str(info.value) and "peephole" in str(info.value)


@pytest.mark.parametrize("dtype, axis", [("int8", 0), ("int8", 1), ("float32", -1)])
def test_unpack_against_litert(dtype: str, axis: int) -> None:
    """UNPACK (Keras unroll=True cuts its sequence with it): each slice, int8 bit for bit with LiteRT, float
    within the 8-bit quantization of the input."""
    from hexnn_import.testing.tflite_builder import TFLiteBuilder

    shape = [3, 2, 4]
    b = TFLiteBuilder()
    q = {"scale": 0.05, "zero_point": 3} if dtype == "int8" else {}
    x = b.add_tensor("x", shape, dtype, **q)
    n = shape[axis]
    part = [s for k, s in enumerate(shape) if k != axis % 3]
    outs = [b.add_tensor(f"y{k}", part, dtype, **q) for k in range(n)]
    b.add_operator("UNPACK", [x], outs, {"num": n, "axis": axis})
    b.set_io([x], outs)
    res = compare_tflite(b.build(), n=4, seed=6)
    assert len(res) == n
    for a in res.values():
        if dtype == "int8":
            assert a.worst == 0, a
        else:
            assert a.sqnr >= 38.0, a


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_reverse_int8_bit_exact(axis: int) -> None:
    """REVERSE_V2 along one axis moves codes only: int8 bit for bit with LiteRT."""
    from hexnn_import.testing.tflite_builder import TFLiteBuilder

    b = TFLiteBuilder()
    x = b.add_tensor("x", [2, 5, 3], "int8", scale=0.05, zero_point=-2)
    ax = b.add_const("axis", np.array([axis], np.int32))
    y = b.add_tensor("y", [2, 5, 3], "int8", scale=0.05, zero_point=-2)
    b.add_operator("REVERSE_V2", [x, ax], [y])
    b.set_io([x], [y])
    for a in compare_tflite(b.build(), n=3, seed=7).values():
        assert a.worst == 0, a
