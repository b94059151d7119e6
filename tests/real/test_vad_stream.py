"""Acceptance: a pretrained streaming voice-activity model (Silero VAD v6, ONNX, an LSTM step per call, as the
faster-whisper wheel ships it) converts with no flags and runs as its users run it, one 32 ms chunk a call with
the state fed back, on a labelled 16 kHz speech stream (espeak-ng phrases in four voices between silences, low
noise throughout; models/real/make_families_vad.py).

The file is float: the engine runs it in 8 bits with run-time ranges (no flags) or ranges calibrated on a phrase
that is not in the stream. Bars, on the first 120 chunks (3.8 s of audio), each runtime free-running with its own
state: onnxruntime's own accuracy on the labels is what the manifest says (the stream is informative: speech and
silence both present, probabilities spread); the engine's speech / not-speech decisions agree with onnxruntime's
on >= 90% of chunks and its accuracy on the labels is within 7 points of onnxruntime's (the 8-bit LSTM state costs
that much: ``python bench/families.py`` prints the whole-stream figures).
"""
from __future__ import annotations

import json

import pytest

import hexnn_import as hx
from hexnn_import.testing.families import FAMILIES
from hexnn_import.testing.vad import calibration_feed, evaluate_vad, load_stream

MODEL = FAMILIES / "silero_vad_v6.onnx"
N = 120


def test_the_stream_is_informative() -> None:
    _, labels, _ = load_stream()
    assert 0.3 < labels[:N].mean() < 0.8  # speech and silence both present in the part the tests run
    entry = json.loads((FAMILIES / "manifest_vad.json").read_text())[0]
    assert entry["runtime_accuracy"] > 0.9 and entry["output_std"] > 0.3


@pytest.mark.parametrize("calibrated", [False, True], ids=["runtime-ranges", "calibrated"])
def test_vad_streams_like_onnxruntime(calibrated: bool) -> None:
    g = hx.prepare(hx.import_model(MODEL, calibration=calibration_feed() if calibrated else None))
    fig = evaluate_vad(g, n=N)
    assert fig.runtime_accuracy > 0.9, fig
    assert fig.output_std > 0.3, fig  # the engine's probabilities move with the audio
    assert fig.decision_agreement >= 0.9, fig
    assert fig.engine_accuracy >= fig.runtime_accuracy - 0.07, fig
    assert fig.mean_prob_diff <= 0.15, fig  # measured 0.061 / 0.083 on the whole stream (docs/real_models.md)
