"""The real-model acceptance runs: every model of ``models/real/`` against its own runtime.

``models/real/manifest_*.json`` lists each converter-made file with how its
input is normalized. :func:`evaluate` imports a model with no options (as
``hexnn-import MODEL`` does), prepares it, runs it on crops of real
photographs (:mod:`hexnn_import.testing.photos`) and compares with LiteRT
(``.tflite``) or onnxruntime (``.onnx``) on the same inputs:

- quantized outputs (int8 / uint8 codes, or floats leaving a DEQUANTIZE /
  DequantizeLinear whose step is known): the fraction of elements within 1
  LSB, exactly equal, and the worst difference in LSBs;
- every output: SQNR (dB) against the reference;
- classifiers: top-1 agreement over the inputs;
- float models: once with run-time ranges and once calibrated on other crops
  (``split="calib"``) of the same photographs.

``python bench/real_models.py`` prints the table for every model.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from hexnn_import.compare.metrics import sqnr_db, topk_agreement
from hexnn_import.compare.onnx_reference import ort_reference_session
from hexnn_import.testing.photos import models_dir, photo_batch

REAL = models_dir() / "real"


def load_manifest(folder: Path = REAL) -> list[dict[str, Any]]:
    """Every entry of ``manifest_*.json`` whose file exists, sorted by file name."""
    out = []
    for mf in sorted(folder.glob("manifest_*.json")):
        for e in json.loads(mf.read_text()):
            if (folder / e["file"]).is_file():
                out.append(dict(e, manifest=mf.name))
    return sorted(out, key=lambda e: e["file"])


@dataclass
class OutputFigures:
    """Agreement of one output over all inputs."""

    name: str
    sqnr_db: float
    lsb: float | None = None
    within1: float | None = None
    exact: float | None = None
    worst_lsb: float | None = None
    top1: float | None = None
    max_abs: float | None = None


@dataclass
class ModelFigures:
    """One model's run: its outputs' figures (run-time ranges, and calibrated for float models)."""

    file: str
    quant: str
    n_inputs: int
    outputs: list[OutputFigures] = field(default_factory=list)
    calibrated: list[OutputFigures] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---- inputs ----------------------------------------------------------------------------
def float_inputs(entry: Mapping[str, Any], n: int, split: str = "test") -> np.ndarray:
    """``n`` photo crops normalized as the manifest says, in the model's layout (float32)."""
    spec = entry["input"]
    x = photo_batch(n, int(spec["height"]), int(spec["width"]), int(spec.get("channels", 3)), split)
    if "mean" in spec:
        mean = np.asarray(spec["mean"], np.float32)
        std = np.asarray(spec["std"], np.float32)
        x = (x / 255.0 - mean) / std
    else:
        x = x * float(spec.get("scale", 1.0)) + float(spec.get("offset", 0.0))
    if spec.get("layout", "NHWC") == "NCHW":
        x = x.transpose(0, 3, 1, 2)
    return np.ascontiguousarray(x, dtype=np.float32)


def manifest_shape(entry: Mapping[str, Any]) -> tuple[int, ...]:
    """The batch-1 input shape the manifest gives (for models whose height and width are dynamic)."""
    spec = entry["input"]
    h, w, c = int(spec["height"]), int(spec["width"]), int(spec.get("channels", 3))
    return (1, c, h, w) if spec.get("layout", "NHWC") == "NCHW" else (1, h, w, c)


def to_model_dtype(x: np.ndarray, dtype: str, scale: float | None, zero_point: int | None) -> np.ndarray:
    """A float batch quantized onto an int8 / uint8 / int16 input (round half to even, as numpy rounds), else
    float32."""
    if dtype in ("int8", "uint8", "int16"):
        assert scale is not None and zero_point is not None
        lo, hi = (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
        return np.clip(np.round(x / scale) + zero_point, lo, hi).astype(dtype)
    return x.astype(np.float32)


# ---- references ------------------------------------------------------------------------
class Reference:
    """LiteRT or onnxruntime on one model file, one sample at a time, outputs by name."""

    def __init__(self, path: Path):
        self.path = path
        self.onnx = path.suffix == ".onnx"
        if self.onnx:
            import onnxruntime as ort

            self.sess = ort_reference_session(ort, str(path), threads=1)
            self.names = [o.name for o in self.sess.get_outputs()]
        else:
            from hexnn_import.testing.litert import make_interpreter

            self.interp = make_interpreter(path.read_bytes())
            self.names = [d["name"] for d in self.interp.get_output_details()]

    def run(self, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self.onnx:
            return dict(zip(self.names, self.sess.run(self.names, dict(feed))))
        from hexnn_import.testing.litert import _feed

        _feed(self.interp, feed)
        self.interp.reset_all_variables()  # a fused LSTM's state tensors start at zero each sample
        self.interp.invoke()
        return {d["name"]: np.array(self.interp.get_tensor(d["index"])) for d in self.interp.get_output_details()}


def output_steps(path: Path) -> dict[str, float | None]:
    """The LSB of each output: its own scale when quantized, else the scale of the DEQUANTIZE /
    DequantizeLinear that writes it (None for a truly float output)."""
    if path.suffix == ".onnx":
        import onnx

        from hexnn_import.testing.onnx_compare import output_lsb

        raw = path.read_bytes()
        m = onnx.load_from_string(raw)
        return {o.name: output_lsb(raw, o.name) for o in m.graph.output}
    from hexnn_import.importers.tflite.reader import read_tflite

    m = read_tflite(path)
    writer = {o: op for op in m.operators for o in op.outputs}
    out: dict[str, float | None] = {}
    for i in m.outputs:
        t = m.tensors[i]
        q = t.quant
        if q is None and i in writer and writer[i].opname == "DEQUANTIZE":
            q = m.tensors[writer[i].inputs[0]].quant
        out[t.name] = float(q.scale[0]) if q is not None and q.scale.size == 1 else None
    return out


# ---- the run ---------------------------------------------------------------------------
def _figures(name: str, refs: list[np.ndarray], ours: list[np.ndarray], step: float | None,
             classifier: bool) -> OutputFigures:
    r = np.stack([np.asarray(a, np.float64) for a in refs])
    o = np.stack([np.asarray(a, np.float64) for a in ours])
    fig = OutputFigures(name, float(sqnr_db(r, o)), max_abs=float(np.max(np.abs(r - o))) if r.size else 0.0)
    if step:
        # float outputs of a DEQUANTIZE are (q - zp) * scale in float32 on either side: a code apart is
        # 1 +- 1e-5 steps, so counts allow 1e-3 of a step
        d = np.abs(r - o) / step
        fig.lsb, fig.within1 = step, float(np.mean(d <= 1.0 + 1e-3))
        fig.exact, fig.worst_lsb = float(np.mean(d <= 1e-3)), float(np.round(d.max(), 2))
    if classifier:
        fig.top1 = float(topk_agreement(r.reshape(len(refs), -1), o.reshape(len(ours), -1), 1))
    return fig


def is_float_model(entry: Mapping[str, Any]) -> bool:
    """A model whose activations are float (its ranges come from calibration or run time)."""
    q = str(entry.get("quant", ""))
    return q == "float" or "dynamic" in q or "weight" in q


def evaluate(entry: Mapping[str, Any], n: int = 24, folder: Path = REAL, calibrate: bool | None = None,
             n_calib: int = 64, runtime_ranges: bool = True,
             input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> ModelFigures:
    """Run one manifest entry (module doc). ``calibrate`` defaults to True for float models;
    ``runtime_ranges=False`` skips the uncalibrated run (slow on big float models); ``input_shapes``
    as in :func:`hexnn_import.import_model` (models whose height and width are dynamic)."""
    import hexnn_import as hx

    path = folder / entry["file"]
    graph = hx.prepare(hx.import_model(path, input_shapes=input_shapes))
    fig = ModelFigures(entry["file"], entry.get("quant", "?"), n, notes=list(graph.meta.get("notes", [])))
    x = float_inputs(entry, n)
    io = graph.inputs[0]
    ref = Reference(path)
    steps = output_steps(path)
    classifier = entry.get("kind") == "classifier"
    if runtime_ranges or not is_float_model(entry):
        fig.outputs = _run(graph, ref, x, io, steps, classifier)
    if calibrate is None:
        calibrate = is_float_model(entry)
    if calibrate:
        cal = float_inputs(entry, n_calib, "calib")
        g2 = hx.prepare(hx.import_model(path, calibration={io.name: cal[:, None]}, input_shapes=input_shapes))
        fig.calibrated = _run(g2, ref, x, io, steps, classifier)
    return fig


def _run(graph: Any, ref: Reference, x: np.ndarray, io: Any, steps: Mapping[str, float | None],
         classifier: bool) -> list[OutputFigures]:
    import hexnn_import as hx

    runner = hx.Runner(graph)
    refs: dict[str, list[np.ndarray]] = {}
    ours: dict[str, list[np.ndarray]] = {}
    for k in range(len(x)):
        xi = to_model_dtype(x[k:k + 1], io.dtype, io.scale, io.zero_point)
        if tuple(xi.shape) != tuple(io.shape):
            xi = xi.reshape(io.shape)
        got = runner.run({io.name: xi})
        want = ref.run({io.name: xi})
        for name, v in want.items():
            refs.setdefault(name, []).append(v)
            ours.setdefault(name, []).append(got[name])
    out = []
    for name in refs:
        # integer outputs are codes (1 LSB = 1); float outputs use the step of the DEQUANTIZE writing them
        step = 1.0 if np.asarray(refs[name][0]).dtype in (np.int8, np.uint8) else steps.get(name)
        out.append(_figures(name, refs[name], ours[name], step, classifier))
    return out


__all__ = ["REAL", "load_manifest", "evaluate", "is_float_model", "float_inputs", "manifest_shape", "to_model_dtype", "ModelFigures", "OutputFigures",
           "Reference", "output_steps"]
