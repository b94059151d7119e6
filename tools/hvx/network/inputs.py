"""The real inputs of the whole-network goldens (issue 36): per model, >= 4 input sets in the graph's element types
(what ``hexagon_nn_execute_new`` and the engine take: quint8 codes, int8 sources XOR 0x80; float32 for float
inputs).

- bundled ``small_int8``: photo crops (``hexnn_import.testing.photos.photo_batch``, split "test") scaled to [-1, 1];
- bundled ``digits_*``: the first samples of ``models/digits_test.npz``;
- ``models/real``: photo crops normalized as the model's manifest entry says
  (``hexnn_import.testing.real_models.float_inputs``), quantized onto the input's scale / zero point;
- the float models with run-time ranges (:data:`BLANK_MODELS`) also run a blank input (all zeros) and a constant
  one (0.5 everywhere, in the model's float input space) between the real ones (:data:`BLANK_ORDER`): there
  AutoQuantize's range is the device's ``[-0.0, 1e-18]`` unless the project floors it (issue 36).
- ``models/real/families``: the first samples of the test set the model's manifest entry names (``data``), every
  input; silero VAD: the first chunks of ``vad_stream_16k.npz`` (``hexnn_import.testing.vad.load_stream``), each
  from the zero state (``h``, ``c``) a stream starts from.

A model with several inputs gets them in INPUT-slot order (``GraphIO.index``: ``hexagon_nn_execute_new``'s
``inputs[]``, the engine's feeds).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.runner import to_graph_input
from hexnn_import.testing.families import FAMILIES, load_families
from hexnn_import.testing.photos import models_dir, photo_batch
from hexnn_import.testing.real_models import (
    float_inputs,
    load_manifest,
    manifest_shape,
    to_model_dtype,
)

N_RUNS = 4
#: the float models with run-time ranges (issue 36): their goldens add a blank and a constant input
BLANK_MODELS = ("keras_ds_cnn_float", "keras_mobilenet_v3_small_float", "mediapipe_face_landmark",
                "mediapipe_selfie_segmentation", "rapidocr_ppocr_mobile_v2_cls", "torch_efficientnet_b0_float",
                "torch_mobilenet_v3_small_float", "torch_yolo_tiny_float")
#: their run order: p = the next real input, b = blank (all zeros), c = CONSTANT everywhere
BLANK_ORDER = "pbpcpp"
CONSTANT = 0.5
#: name -> model file (relative to the repository) and how its inputs are made.
MODELS: dict[str, dict[str, Any]] = {
    "small_int8": {"file": "models/small_int8.tflite", "kind": "photos", "scale": 1 / 127.5, "offset": -1.0},
    "digits_int8": {"file": "models/digits_int8.tflite", "kind": "digits"},
    "digits_float": {"file": "models/digits_float.tflite", "kind": "digits"},
    "mobilenet_v2_int8": {"file": "models/mobilenet_v2_int8.tflite", "kind": "photos", "scale": 1 / 127.5,
                          "offset": -1.0},
    "mobilenet_v2_float": {"file": "models/mobilenet_v2_float.tflite", "kind": "photos", "scale": 1 / 127.5,
                           "offset": -1.0},
    **{e["file"].rsplit(".", 1)[0]: {"file": f"models/real/{e['file']}", "kind": "manifest", "entry": e["file"]}
       for e in load_manifest()},
}
#: the model families (models/real/families): their own test samples (manifest ``data``)
MODELS.update({e["file"].rsplit(".", 1)[0]: {"file": f"models/real/families/{e['file']}", "kind": "family",
                                             "entry": e["file"]} for e in load_families()})
#: models whose input sizes are open (the OCR models): the manifest's batch-1 shape, as ``--input-shape`` gives it.
for _e in load_manifest():
    if _e["file"].startswith("rapidocr_"):
        MODELS[_e["file"].rsplit(".", 1)[0]]["input_shapes"] = {"x": manifest_shape(_e)}


def _float_batch(name: str, graph: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``N_RUNS`` real-valued samples per input name (batch axis first), and how they were made."""
    spec = MODELS[name]
    io = graph.inputs[0]
    if spec["kind"] == "family":
        return _family_batch(spec["entry"])
    if spec["kind"] == "digits":
        with np.load(models_dir() / "digits_test.npz") as z:
            x = np.asarray(z["input"][:N_RUNS], np.float32).reshape((N_RUNS, *io.shape[1:]))
        return {io.name: x}, {"source": "models/digits_test.npz 'input'", "samples": f"0..{N_RUNS - 1}"}
    if spec["kind"] == "photos":
        _, h, w, c = io.shape
        x = photo_batch(N_RUNS, h, w, c, "test") * spec["scale"] + spec["offset"]
        return {io.name: x.astype(np.float32)}, {"source": "models/real/photos.npz crops (photo_batch, split test)",
                                                 "scale": spec["scale"], "offset": spec["offset"]}
    entry = next(e for e in load_manifest() if e["file"] == spec["entry"])
    return {io.name: float_inputs(entry, N_RUNS)}, {"source": "models/real/photos.npz crops (photo_batch, split test)",
                                                   "normalization": entry["input"]}


def _family_batch(file: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The first ``N_RUNS`` samples of a family model's test set (its manifest's ``data``); silero VAD: the first
    chunks of its labelled stream, each from the zero state."""
    entry = next(e for e in load_families() if e["file"] == file)
    if entry["task"] == "stream-vad":
        from hexnn_import.testing.vad import STATE, load_stream

        chunks = load_stream()[0][:N_RUNS]
        zero = np.zeros((N_RUNS, *STATE), np.float32)
        return {"input": chunks, "h": zero, "c": zero}, {
            "source": f"models/real/families/{entry['data']} (testing.vad.load_stream chunks), zero h / c",
            "samples": f"0..{N_RUNS - 1}"}
    with np.load(FAMILIES / entry["data"]) as z:
        x = {i["name"]: np.asarray(z[i["name"]][:N_RUNS], np.float32) for i in entry["inputs"]}
    return x, {"source": f"models/real/families/{entry['data']}", "samples": f"0..{N_RUNS - 1}"}


def feeds(name: str, graph: Any) -> tuple[list[list[np.ndarray]], dict[str, Any]]:
    """``N_RUNS`` input sets for ``graph``, each input in graph element type in INPUT-slot order, and how they
    were made; for a model of :data:`BLANK_MODELS` (one input), a blank and a constant input among them
    (:data:`BLANK_ORDER`)."""
    x, how = _float_batch(name, graph)
    ios = sorted(graph.inputs, key=lambda io: io.index)
    missing = [io.name for io in ios if io.name not in x]
    if missing:
        raise ValueError(f"{name}: no real samples for input(s) {missing}")
    if name in BLANK_MODELS:
        if len(ios) != 1:
            raise ValueError(f"{name}: {len(ios)} inputs; the blank / constant runs take single-input models")
        io = ios[0]
        real = [x[io.name][i:i + 1].reshape(io.shape) for i in range(N_RUNS)]
        made = {"b": np.zeros(io.shape, np.float32), "c": np.full(io.shape, CONSTANT, np.float32)}
        floats = [real.pop(0) if k == "p" else made[k] for k in BLANK_ORDER]
        runs = [[to_graph_input(io, to_model_dtype(xi, io.dtype, io.scale, io.zero_point))] for xi in floats]
        return runs, {**how, "n": len(runs), "dtype": io.dtype, "order": BLANK_ORDER,
                      "order_key": f"p: the next real input, b: all zeros, c: {CONSTANT} everywhere"}
    runs = []
    for i in range(N_RUNS):
        runs.append([to_graph_input(io, to_model_dtype(x[io.name][i:i + 1].reshape(io.shape), io.dtype, io.scale,
                                                        io.zero_point)) for io in ios])
    dtypes = [io.dtype for io in ios]
    return runs, {**how, "n": N_RUNS, "dtype": dtypes[0] if len(dtypes) == 1 else dtypes}
