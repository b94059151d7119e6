"""The real inputs of the whole-network goldens (issue 36): per model, >= 4 input sets in the graph's element types
(what ``hexagon_nn_execute_new`` and the engine take: quint8 codes, int8 sources XOR 0x80; float32 for float
inputs).

- bundled ``small_int8``: photo crops (``hexnn_import.testing.photos.photo_batch``, split "test") scaled to [-1, 1];
- bundled ``digits_*``: the first samples of ``models/digits_test.npz``;
- ``models/real``: photo crops normalized as the model's manifest entry says
  (``hexnn_import.testing.real_models.float_inputs``), quantized onto the input's scale / zero point.
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
    """``N_RUNS`` input sets for ``graph`` (one input), in graph element types, and how they were made."""
    if len(graph.inputs) != 1:
        raise ValueError(f"{name}: {len(graph.inputs)} inputs; the goldens take single-input models")
    io = graph.inputs[0]
    x, how = _float_batch(name, graph)
    runs = []
    for i in range(N_RUNS):
        xi = to_model_dtype(x[i:i + 1].reshape(io.shape), io.dtype, io.scale, io.zero_point)
        runs.append([to_graph_input(io, xi)])
    return runs, {**how, "n": N_RUNS, "dtype": io.dtype}
