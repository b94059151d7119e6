"""How far a reference runtime is from itself: two of its own kernel sets on the same model and input.

The end-to-end figures of :mod:`hexnn_import.testing.real_models` compare the
engine (hexagon_nn's arithmetic) with LiteRT / onnxruntime. On a deep int8
network a 1-code rounding difference in an early layer grows layer by layer,
so the agreement any second implementation can reach is bounded by how much
the runtime's own implementations agree with each other:

- ``.tflite``: LiteRT's optimized builtin kernels (the comparison's
  reference, ``kernels="builtin"``) against its reference kernels
  (``BUILTIN_REF``) and against its default XNNPACK delegate (``auto``);
- ``.onnx``: onnxruntime with every graph optimization (QDQ groups fused into
  integer kernels: the comparison's reference) against onnxruntime with none
  (a QDQ model computed as written: dequantize, float op, quantize; a
  QOperator model is unchanged by this, so its figure is its QDQ twin's run
  this way, when the manifest has one).

:func:`spread` returns the same figures as the engine comparison
(:class:`~hexnn_import.testing.real_models.OutputFigures`), per output.
:func:`least_agreeing` picks, per output, the kernel set furthest from the
reference; ``python bench/real_models.py`` prints it beside the engine's
figures, and ``tests/real`` holds the TFLite models below the end-to-end bar
to it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from hexnn_import.testing.real_models import (REAL, OutputFigures, _figures, float_inputs, output_steps,
                                               to_model_dtype)

Feed = Callable[[np.ndarray], dict[str, np.ndarray]]


def _litert(path: Path, kernels: str) -> tuple[Callable[[np.ndarray], dict[str, np.ndarray]], dict]:
    """A runner of one LiteRT kernel set: quantizes a float batch-1 input as the model's input expects."""
    from hexnn_import.testing.litert import make_interpreter

    interp = make_interpreter(path.read_bytes(), kernels=kernels)
    det = interp.get_input_details()[0]

    def run(x: np.ndarray) -> dict[str, np.ndarray]:
        dtype = np.dtype(det["dtype"]).name
        scale, zp = det["quantization"]
        interp.set_tensor(det["index"], to_model_dtype(x, dtype, scale, zp))
        interp.invoke()
        return {d["name"]: np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()}

    return run, det


def _ort(path: Path, optimize: bool) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    """A runner of one onnxruntime session, every graph optimization or none (float input expected)."""
    import onnxruntime as ort

    from hexnn_import.compare.onnx_reference import ort_reference_session

    sess = ort_reference_session(ort, str(path), threads=1, optimize=optimize)
    name, names = sess.get_inputs()[0].name, [o.name for o in sess.get_outputs()]
    return lambda x: dict(zip(names, sess.run(names, {name: x})))


def _compare(entry: Mapping[str, Any], a: Callable, b: Callable, steps: Mapping[str, float | None],
             n: int) -> list[OutputFigures]:
    x = float_inputs(entry, n)
    got_a: dict[str, list[np.ndarray]] = {}
    got_b: dict[str, list[np.ndarray]] = {}
    for k in range(n):
        for got, run in ((got_a, a), (got_b, b)):
            for name, v in run(x[k:k + 1]).items():
                got.setdefault(name, []).append(v)
    classifier = entry.get("kind") == "classifier"
    out = []
    for name in got_a:
        step = 1.0 if np.asarray(got_a[name][0]).dtype in (np.int8, np.uint8) else steps.get(name)
        out.append(_figures(name, got_a[name], got_b.get(name, got_a[name]), step, classifier))
    return out


def spread(entry: Mapping[str, Any], n: int = 24, folder: Path = REAL) -> dict[str, list[OutputFigures]]:
    """The runtime against itself on ``n`` photo crops (module doc): ``{"reference kernels": [...],
    "xnnpack": [...]}`` for a ``.tflite``, ``{"unoptimized": [...]}`` for an ``.onnx`` (QOperator: its
    QDQ twin unoptimized, or nothing without one). Empty where the runtime cannot run a kernel set."""
    path = folder / entry["file"]
    steps = output_steps(path)
    out: dict[str, list[OutputFigures]] = {}
    if path.suffix == ".tflite":
        base, _ = _litert(path, "builtin")
        for label, kernels in (("reference kernels", "reference"), ("xnnpack", "auto")):
            try:
                other, _ = _litert(path, kernels)
                out[label] = _compare(entry, base, other, steps, n)
            except RuntimeError:  # a kernel set that cannot run this model (XNNPACK on sparse weights)
                continue
        return out
    other_path = path
    if entry.get("quant") == "qoperator":
        twin = folder / entry["file"].replace("_qop.onnx", "_qdq.onnx")
        if not twin.is_file():
            return out
        other_path = twin
    out["unoptimized"] = _compare(entry, _ort(path, True), _ort(other_path, False), steps, n)
    return out


def least_agreeing(figures: Mapping[str, list[Any]], output: str) -> dict[str, Any] | None:
    """Of :func:`spread`'s kernel sets (figures as objects or as dicts), the one whose ``output`` agrees
    least with the runtime's reference kernels (lowest within-1 fraction), as a dict with its ``label``;
    None without a figure for that output."""
    best: dict[str, Any] | None = None
    for label, figs in figures.items():
        for f in figs:
            d = dict(f if isinstance(f, Mapping) else vars(f))
            if d["name"] != output or d.get("within1") is None:
                continue
            if best is None or d["within1"] < best["within1"]:
                best = dict(d, label=label)
    return best


__all__ = ["spread", "least_agreeing"]
