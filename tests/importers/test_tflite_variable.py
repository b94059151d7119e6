"""TFLite resource variables (CALL_ONCE, VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE) as Variable / Assign: a
Runner carries the state from run to run as LiteRT's interpreter does (issue 33).

``stream_variable.tflite`` (tests/data/recurrent/make_keras_rnn.py): ``s = tanh(x W + s R)`` each call, output
``2 s``, ``s`` starting at a constant the init subgraph assigns. Eight calls in a row on both runtimes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.testing.litert import make_interpreter

MODEL = Path(__file__).resolve().parents[1] / "data" / "recurrent" / "stream_variable.tflite"
INPUT = "serving_default_x:0"


def _stream(prepared: bool, fresh_runner: bool) -> tuple[np.ndarray, np.ndarray]:
    """(engine, LiteRT) outputs of 8 calls in a row; ``fresh_runner``: a new Runner (initial state) each call."""
    g = hx.import_model(MODEL)
    g = hx.prepare(g) if prepared else g
    interp = make_interpreter(MODEL.read_bytes())
    din, dout = interp.get_input_details()[0], interp.get_output_details()[0]
    runner = hx.Runner(g)
    rng = np.random.default_rng(0)
    got, want = [], []
    for _ in range(8):
        x = rng.normal(0, 1, (1, 4)).astype(np.float32)
        interp.set_tensor(din["index"], x)
        interp.invoke()
        want.append(np.array(interp.get_tensor(dout["index"])))
        got.append(next(iter((hx.Runner(g) if fresh_runner else runner).run({INPUT: x}).values())))
    return np.asarray(got, np.float64), np.asarray(want, np.float64)


def _sqnr(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return 10 * np.log10(np.sum(want ** 2, axis=(1, 2)) / np.sum((got - want) ** 2, axis=(1, 2)))


@pytest.mark.parametrize("prepared", [False, True])
def test_state_persists_across_runs_as_in_litert(prepared: bool) -> None:
    got, want = _stream(prepared, fresh_runner=False)
    assert float(np.std(want, axis=0).mean()) > 0.1  # the outputs vary from call to call
    assert np.all(_sqnr(got, want) >= 30.0), _sqnr(got, want)


def test_a_fresh_runner_starts_from_the_initial_state() -> None:
    """Control: a new Runner each call restarts from the initial value, so after the first call it disagrees
    with LiteRT's carried state (the agreement above is the state's, not the input's)."""
    got, want = _stream(False, fresh_runner=True)
    sq = _sqnr(got, want)
    assert sq[0] >= 30.0 and np.all(sq[1:] < 20.0), sq


def test_variable_nodes_in_the_graph() -> None:
    counts = hx.import_model(MODEL).op_counts()
    assert counts["Variable"] == 1 and counts["Assign"] == 1, counts


def test_reset_state_restarts_like_litert_reset_all_variables() -> None:
    """Runner.reset_state() in mid-stream, a new LiteRT interpreter at the same point (its reset_all_variables()
    resets variable tensors, not resource variables): the calls after it agree again, and the control runner
    without the reset disagrees right after."""
    g = hx.prepare(hx.import_model(MODEL))
    interp = make_interpreter(MODEL.read_bytes())
    din, dout = interp.get_input_details()[0], interp.get_output_details()[0]
    runner, control = hx.Runner(g), hx.Runner(g)
    rng = np.random.default_rng(3)
    got, ctl, want = [], [], []
    for k in range(8):
        if k == 4:
            interp = make_interpreter(MODEL.read_bytes())
            runner.reset_state()
        x = rng.normal(0, 1, (1, 4)).astype(np.float32)
        interp.set_tensor(din["index"], x)
        interp.invoke()
        want.append(np.array(interp.get_tensor(dout["index"])))
        got.append(next(iter(runner.run({INPUT: x}).values())))
        ctl.append(next(iter(control.run({INPUT: x}).values())))
    sq = _sqnr(np.asarray(got, np.float64), np.asarray(want, np.float64))
    sq_ctl = _sqnr(np.asarray(ctl, np.float64), np.asarray(want, np.float64))
    assert np.all(sq >= 30.0), sq
    assert sq_ctl[4] < 20.0, sq_ctl
