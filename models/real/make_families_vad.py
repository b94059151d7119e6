"""The pretrained Silero VAD v6 (ONNX, LSTM) that faster-whisper ships, and a labelled 16 kHz speech stream for it.

Run from the repository root (needs pip, network access to PyPI, and Debian's ``espeak-ng`` and ``sox``; numpy
and onnx only, no framework):

    python models/real/make_families_vad.py

It writes into ``models/real/families/``:

* ``silero_vad_v6.onnx``: ``faster_whisper/assets/silero_vad_v6.onnx`` from the faster-whisper 1.2.1 wheel, byte for
  byte (Silero VAD, MIT licence; faster-whisper, MIT). Inputs ``input`` float32 ``[seq, 576]`` (512 new samples of
  16 kHz audio after the last 64 of the chunk before), ``h`` / ``c`` float32 ``[1, 1, 128]`` (the LSTM state);
  outputs ``speech_probs`` ``[seq, 1]``, ``hn`` / ``cn``. A streaming caller feeds one chunk a call and the state
  back (what ``hexnn_import.testing.vad.stream`` does).
* ``vad_stream_16k.npz``: ``audio`` int16 ``[T]`` (16 kHz): phrases spoken by espeak-ng in four voices, between
  stretches of silence, with low white noise throughout (about 30 dB below the speech); ``labels`` int64 per
  512-sample chunk: 1 where the clean speech has energy (frame RMS above 1% of the loudest chunk), else 0;
  ``calibration`` float32 ``[64, 576]``: chunks of a fifth phrase, not in the stream, for ``--calibration``.
* an entry in ``manifest_vad.json`` (task ``stream-vad``): onnxruntime's own chunk accuracy on the labels.

The stream is seeded; espeak-ng's output can differ between its versions, so the data file is kept.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import wave
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "families"
WHEEL = "faster-whisper==1.2.1"
MEMBER = "faster_whisper/assets/silero_vad_v6.onnx"
PHRASES = [("en", "Turn on the kitchen light and open the window, please."),
           ("en-us", "The quick brown fox jumps over the lazy dog."),
           ("de", "Guten Morgen, wie geht es dir heute?"),
           ("fr", "Il fait beau aujourd'hui, allons au parc."),
           ("en", "Seven hundred and forty two kilometres to the coast.")]
SR, CHUNK, CONTEXT = 16000, 512, 64


def fetch_model() -> bytes:
    """The ONNX file out of the faster-whisper wheel (pip download, no dependencies)."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", WHEEL, "-d", d], check=True)
        whl = next(Path(d).glob("faster_whisper-*.whl"))
        return zipfile.ZipFile(whl).read(MEMBER)


def speak(voice: str, text: str) -> np.ndarray:
    """espeak-ng's speech resampled to 16 kHz mono by sox, float in [-1, 1]."""
    with tempfile.TemporaryDirectory() as d:
        raw, out = Path(d) / "a.wav", Path(d) / "b.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-w", str(raw), text], check=True)
        subprocess.run(["sox", str(raw), "-r", str(SR), "-c", "1", "-b", "16", str(out)], check=True)
        with wave.open(io.BytesIO(out.read_bytes())) as w:
            return np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768.0


def stream(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Silence, phrase, silence, ... with noise; returns (audio float, clean speech) of a whole number of chunks."""
    parts, clean = [], []
    for voice, text in PHRASES[:4]:
        gap = np.zeros(int(rng.uniform(0.6, 1.4) * SR), np.float32)
        s = 0.5 * speak(voice, text)
        parts += [gap, s]
        clean += [gap, s]
    parts.append(np.zeros(SR, np.float32))
    clean.append(np.zeros(SR, np.float32))
    x, c = np.concatenate(parts), np.concatenate(clean)
    n = len(x) // CHUNK * CHUNK
    x, c = x[:n], c[:n]
    x = x + rng.normal(0, 0.003, size=n).astype(np.float32)
    return np.clip(x, -1, 1), c


def chunks_with_context(audio: np.ndarray) -> np.ndarray:
    """``[n, 576]``: each 512-sample chunk after the last 64 samples of the one before (zeros first)."""
    b = audio.reshape(-1, CHUNK)
    ctx = np.concatenate([np.zeros((1, CONTEXT), np.float32), b[:-1, -CONTEXT:]])
    return np.concatenate([ctx, b], axis=1).astype(np.float32)


def ort_stream(model: bytes, x: np.ndarray) -> np.ndarray:
    """onnxruntime's speech probability per chunk, one chunk a call, the state fed back."""
    import onnxruntime as ort

    s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    h = c = np.zeros((1, 1, 128), np.float32)
    out = []
    for k in range(len(x)):
        p, h, c = s.run(None, {"input": x[k:k + 1], "h": h, "c": c})
        out.append(float(np.asarray(p).reshape(-1)[0]))
    return np.array(out)


def main() -> None:
    rng = np.random.default_rng(20261129)
    model = fetch_model()
    (HERE / "silero_vad_v6.onnx").write_bytes(model)
    audio, clean = stream(rng)
    rms = np.sqrt(np.mean(clean.reshape(-1, CHUNK) ** 2, axis=1))
    labels = (rms > 0.01 * rms.max()).astype(np.int64)
    s5 = 0.5 * speak(*PHRASES[4])
    s5 = s5[:len(s5) // CHUNK * CHUNK]
    cal = chunks_with_context(s5 + rng.normal(0, 0.003, size=len(s5)).astype(np.float32))
    cal = cal[np.linspace(0, len(cal) - 1, 64).astype(int)]
    np.savez_compressed(HERE / "vad_stream_16k.npz", audio=np.round(audio * 32767).astype(np.int16),
                        labels=labels, calibration=cal)
    probs = ort_stream(model, chunks_with_context(np.round(audio * 32767).astype(np.float32) / 32767))
    entry = {"file": "silero_vad_v6.onnx", "family": "sequence", "task": "stream-vad",
             "source": "Silero VAD v6 as shipped in the faster-whisper 1.2.1 wheel (faster_whisper/assets), "
                       "pretrained; STFT-like Conv front end, 4 Conv + ReLU, one LSTM(128) step per call, "
                       "Conv + Sigmoid head; opset 18",
             "quant": "float", "float_reference": None,
             "inputs": [{"name": "input", "shape": [1, 576], "dtype": "float32"},
                        {"name": "h", "shape": [1, 1, 128], "dtype": "float32"},
                        {"name": "c", "shape": [1, 1, 128], "dtype": "float32"}],
             "data": "vad_stream_16k.npz", "chunks": int(len(labels)), "speech_chunks": int(labels.sum()),
             "runtime_accuracy": float(np.mean((probs > 0.5) == labels)),
             "runtime_speech_recall": float(np.mean(probs[labels == 1] > 0.5)),
             "output_std": float(probs.std()), "made_by": "models/real/make_families_vad.py"}
    (HERE / "manifest_vad.json").write_text(json.dumps([entry], indent=1) + "\n")
    print(json.dumps(entry, indent=1))


if __name__ == "__main__":
    main()
