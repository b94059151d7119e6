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
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.runner import to_graph_input
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
#: models whose input sizes are open (the OCR models): the manifest's batch-1 shape, as ``--input-shape`` gives it.
for _e in load_manifest():
    if _e["file"].startswith("rapidocr_"):
        MODELS[_e["file"].rsplit(".", 1)[0]]["input_shapes"] = {"x": manifest_shape(_e)}


def _float_batch(name: str, graph: Any) -> tuple[np.ndarray, dict[str, Any]]:
    spec = MODELS[name]
    io = graph.inputs[0]
    if spec["kind"] == "digits":
        with np.load(models_dir() / "digits_test.npz") as z:
            x = np.asarray(z["input"][:N_RUNS], np.float32).reshape((N_RUNS, *io.shape[1:]))
        return x, {"source": "models/digits_test.npz 'input'", "samples": f"0..{N_RUNS - 1}"}
    if spec["kind"] == "photos":
        _, h, w, c = io.shape
        x = photo_batch(N_RUNS, h, w, c, "test") * spec["scale"] + spec["offset"]
        return x.astype(np.float32), {"source": "models/real/photos.npz crops (photo_batch, split test)",
                                      "scale": spec["scale"], "offset": spec["offset"]}
    entry = next(e for e in load_manifest() if e["file"] == spec["entry"])
    return float_inputs(entry, N_RUNS), {"source": "models/real/photos.npz crops (photo_batch, split test)",
                                         "normalization": entry["input"]}


def feeds(name: str, graph: Any) -> tuple[list[list[np.ndarray]], dict[str, Any]]:
    """``N_RUNS`` input sets for ``graph`` (one input), in graph element types, and how they were made; for a
    model of :data:`BLANK_MODELS`, a blank and a constant input among them (:data:`BLANK_ORDER`)."""
    if len(graph.inputs) != 1:
        raise ValueError(f"{name}: {len(graph.inputs)} inputs; the goldens take single-input models")
    io = graph.inputs[0]
    x, how = _float_batch(name, graph)
    real = [x[i:i + 1].reshape(io.shape) for i in range(N_RUNS)]
    order = BLANK_ORDER if name in BLANK_MODELS else "p" * N_RUNS
    made = {"b": np.zeros(io.shape, np.float32), "c": np.full(io.shape, CONSTANT, np.float32)}
    floats = [real.pop(0) if k == "p" else made[k] for k in order]
    runs = [[to_graph_input(io, to_model_dtype(xi, io.dtype, io.scale, io.zero_point))] for xi in floats]
    extra = {} if name not in BLANK_MODELS else {
        "order": order, "order_key": f"p: the next real input, b: all zeros, c: {CONSTANT} everywhere"}
    return runs, {**how, "n": len(runs), "dtype": io.dtype, **extra}
