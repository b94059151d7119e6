"""A streaming voice-activity model run as its users run it: one chunk a call, the LSTM state fed back.

``models/real/families/silero_vad_v6.onnx`` (pretrained, from the faster-whisper wheel; see
``models/real/make_families_vad.py``) takes ``input [1, 576]`` (a 512-sample chunk of 16 kHz audio after the
last 64 samples of the chunk before) and the state ``h``, ``c`` ``[1, 1, 128]``; it returns the speech
probability and the next state. :func:`stream` runs any ``step(feed) -> outputs`` over a whole stream, each
runtime carrying its own state (free-running, as on a device); :func:`evaluate_vad` does it for the engine
and onnxruntime on ``vad_stream_16k.npz`` and measures both against the labels and each other.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from hexnn_import.testing.families import FAMILIES

CHUNK, CONTEXT, STATE = 512, 64, (1, 1, 128)
Step = Callable[[Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


def chunks_with_context(audio: np.ndarray) -> np.ndarray:
    """``[n, 576]`` float32: each 512-sample chunk after the last 64 samples of the one before (zeros first)."""
    b = np.asarray(audio, np.float32).reshape(-1, CHUNK)
    ctx = np.concatenate([np.zeros((1, CONTEXT), np.float32), b[:-1, -CONTEXT:]])
    return np.concatenate([ctx, b], axis=1)


def stream(step: Step, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Speech probability per chunk and the state after each, one chunk a call from a zero state."""
    h = c = np.zeros(STATE, np.float32)
    probs, states = [], []
    for k in range(len(x)):
        out = step({"input": x[k:k + 1], "h": h, "c": c})
        h, c = np.asarray(out["hn"], np.float32), np.asarray(out["cn"], np.float32)
        probs.append(float(np.asarray(out["speech_probs"]).reshape(-1)[0]))
        states.append(h)
    return np.array(probs), states


@dataclass
class VadFigures:
    """Engine and onnxruntime on one labelled stream (free-running, each with its own state)."""

    chunks: int
    engine_accuracy: float
    runtime_accuracy: float
    decision_agreement: float  # share of chunks where both say speech / not speech alike (threshold 0.5)
    max_prob_diff: float
    mean_prob_diff: float
    output_std: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_stream(folder: Path = FAMILIES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(chunks [n, 576], labels [n], calibration chunks [64, 576])`` of ``vad_stream_16k.npz``."""
    d = np.load(folder / "vad_stream_16k.npz")
    return chunks_with_context(d["audio"].astype(np.float32) / 32767.0), d["labels"], d["calibration"]


def evaluate_vad(graph: Any, n: int | None = None, folder: Path = FAMILIES) -> VadFigures:
    """The engine running ``graph`` (an imported, prepared silero_vad_v6.onnx) and onnxruntime on the file,
    each streamed over the first ``n`` chunks (all when None)."""
    import hexnn_import as hx
    from hexnn_import.testing.real_models import Reference

    x, labels, _ = load_stream(folder)
    x, labels = (x, labels) if n is None else (x[:n], labels[:n])
    runner, ref = hx.Runner(graph), Reference(folder / "silero_vad_v6.onnx")
    ours, _ = stream(runner.run, x)
    theirs, _ = stream(ref.run, x)
    d = np.abs(ours - theirs)
    return VadFigures(len(x), float(np.mean((ours > 0.5) == labels)), float(np.mean((theirs > 0.5) == labels)),
                      float(np.mean((ours > 0.5) == (theirs > 0.5))), float(d.max()), float(d.mean()),
                      float(ours.std()))


def calibration_feed(folder: Path = FAMILIES) -> dict[str, np.ndarray]:
    """Samples for ``calibration=`` of every input, ``[64, *shape]`` each: the calibration chunks and the
    states onnxruntime holds before each of them when streaming them (the state inputs need ranges too)."""
    from hexnn_import.testing.real_models import Reference

    _, _, cal = load_stream(folder)
    ref = Reference(folder / "silero_vad_v6.onnx")
    h = c = np.zeros(STATE, np.float32)
    hs, cs = [], []
    for k in range(len(cal)):
        hs.append(h)
        cs.append(c)
        out = ref.run({"input": cal[k:k + 1], "h": h, "c": c})
        h, c = np.asarray(out["hn"], np.float32), np.asarray(out["cn"], np.float32)
    return {"input": cal[:, None], "h": np.stack(hs), "c": np.stack(cs)}


__all__ = ["chunks_with_context", "stream", "load_stream", "evaluate_vad", "calibration_feed", "VadFigures"]
