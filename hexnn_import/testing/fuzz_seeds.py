"""The fuzzer's seed files: real models of every format it fuzzes.

- TFLite: the small example models in ``models/`` (int8, uint8, float);
- graph files: those models imported and written by :func:`graph_to_dict`;
- ONNX: small valid models (float, QDQ, QOperator) built here with
  onnx.helper, since ``models/`` holds no ONNX file.

The whole-pipeline fuzzer (:mod:`hexnn_import.testing.fuzz_pipeline`) adds
real converter outputs from ``models/real/`` (keras / torch models under
about 1 MB), graph files as ``hexnn-import MODEL -o g.hexnn.json`` writes
them (imported *and prepared*), and an input ``.npz`` for each model
(:func:`valid_inputs`, keyed by input name as ``run --input`` reads it):
see :func:`pipeline_seeds`.

Everything is deterministic (weights from seeded generators), so a fuzz
case index reproduces across runs.
"""
from __future__ import annotations

import io
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.testing.fuzz_labels import MALFORMED_PREFIX

OPSET = 13


def _models_dir() -> Path:
    """The repository's ``models/``: ``$HEXNN_MODELS_DIR``, else ``./models``, else beside the source tree.

    The package may be installed (not editable) while the tests run from a
    checkout, so the folder beside this file is only the last resort.
    """
    env = os.environ.get("HEXNN_MODELS_DIR")
    for cand in ([Path(env)] if env else []) + [Path.cwd() / "models", Path(__file__).resolve().parents[2] / "models"]:
        if (cand / "small_int8.tflite").is_file():
            return cand
    return Path.cwd() / "models"


MODELS = _models_dir()
TFLITE_SEEDS = ("small_int8", "small_uint8", "small_float", "digits_int8", "digits_float")
GRAPH_SEEDS = ("small_int8", "small_float", "digits_int8")


def tflite_seeds() -> list[tuple[str, bytes]]:
    """(label, bytes) of the small TFLite models in ``models/``."""
    return [(f"{name}.tflite", (MODELS / f"{name}.tflite").read_bytes()) for name in TFLITE_SEEDS]


def graph_seeds() -> list[tuple[str, bytes]]:
    """(label, bytes) of graph files made by importing some of the TFLite models."""
    from hexnn_import.api import import_model
    from hexnn_import.serialize import graph_to_dict

    out = []
    for name in GRAPH_SEEDS:
        doc = graph_to_dict(import_model(MODELS / f"{name}.tflite"))
        out.append((f"{name}.hexnn.json", json.dumps(doc, indent=1).encode()))
    return out


def _model(nodes: list, inputs: list, outputs: list, inits: list, name: str) -> bytes:
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hexnn-robust")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def float_cnn() -> bytes:
    """Conv + Relu + MaxPool + Reshape + Gemm + Softmax on a 1x3x8x8 float input."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.normal(0, 0.1, (4,)).astype(np.float32), "b")
    fw = numpy_helper.from_array(rng.normal(0, 0.2, (5, 64)).astype(np.float32), "fw")
    fb = numpy_helper.from_array(np.zeros(5, np.float32), "fb")
    shape = numpy_helper.from_array(np.array([1, 64], np.int64), "flat")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "flat"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["g"], transB=1),
        helper.make_node("Softmax", ["g"], ["y"], axis=1),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], [w, b, fw, fb, shape], "float_cnn")


def qdq_cnn() -> bytes:
    """QuantizeLinear/DequantizeLinear around a Conv with int8 weights, an Add and an AveragePool."""
    rng = np.random.default_rng(2)
    inits = [
        numpy_helper.from_array(np.array(0.02, np.float32), "s_x"),
        numpy_helper.from_array(np.array(-3, np.int8), "z_x"),
        numpy_helper.from_array(rng.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8), "wq"),
        numpy_helper.from_array(np.array(0.004, np.float32), "s_w"),
        numpy_helper.from_array(np.array(0, np.int8), "z_w"),
        numpy_helper.from_array(rng.normal(0, 0.1, (4,)).astype(np.float32), "b"),
        numpy_helper.from_array(np.array(0.05, np.float32), "s_y"),
        numpy_helper.from_array(np.array(5, np.int8), "z_y"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_x", "z_x"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s_x", "z_x"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "s_w", "z_w"], ["wd"]),
        helper.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "s_y", "z_y"], ["cq"]),
        helper.make_node("DequantizeLinear", ["cq", "s_y", "z_y"], ["cd"]),
        helper.make_node("Add", ["cd", "cd"], ["a"]),
        helper.make_node("QuantizeLinear", ["a", "s_y", "z_y"], ["aq"]),
        helper.make_node("DequantizeLinear", ["aq", "s_y", "z_y"], ["ad"]),
        helper.make_node("AveragePool", ["ad"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("QuantizeLinear", ["p", "s_y", "z_y"], ["pq"]),
        helper.make_node("DequantizeLinear", ["pq", "s_y", "z_y"], ["y"]),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 3])], inits, "qdq_cnn")


def qop_cnn() -> bytes:
    """QOperator form: QLinearConv then QLinearMatMul on a uint8 input."""
    rng = np.random.default_rng(3)
    inits = [
        numpy_helper.from_array(np.array(0.03, np.float32), "s_x"),
        numpy_helper.from_array(np.array(120, np.uint8), "z_x"),
        numpy_helper.from_array(rng.integers(0, 255, (2, 1, 3, 3)).astype(np.uint8), "w"),
        numpy_helper.from_array(np.array(0.01, np.float32), "s_w"),
        numpy_helper.from_array(np.array(128, np.uint8), "z_w"),
        numpy_helper.from_array(np.array(0.1, np.float32), "s_c"),
        numpy_helper.from_array(np.array(10, np.uint8), "z_c"),
        numpy_helper.from_array(rng.integers(0, 255, (4, 3)).astype(np.uint8), "m"),
        numpy_helper.from_array(np.array(0.02, np.float32), "s_m"),
        numpy_helper.from_array(np.array(127, np.uint8), "z_m"),
        numpy_helper.from_array(np.array(0.2, np.float32), "s_y"),
        numpy_helper.from_array(np.array(100, np.uint8), "z_y"),
    ]
    nodes = [
        helper.make_node("QLinearConv", ["x", "s_x", "z_x", "w", "s_w", "z_w", "s_c", "z_c"], ["c"]),
        helper.make_node("QLinearMatMul", ["c", "s_c", "z_c", "m", "s_m", "z_m", "s_y", "z_y"], ["y"]),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 6, 6])],
                  [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 2, 4, 3])], inits, "qop_cnn")


def onnx_seeds() -> list[tuple[str, bytes]]:
    """(label, bytes) of the ONNX seed models."""
    return [("float_cnn.onnx", float_cnn()), ("qdq_cnn.onnx", qdq_cnn()), ("qop_cnn.onnx", qop_cnn())]


# ---- the whole-pipeline fuzzer's seeds (fuzz_pipeline) ---------------------------------------------
#: models per format and size ("ci": the suite's, each case fast; "bench": more real converter outputs).
#: Paths are relative to ``models/``; ``onnx:NAME`` is a model built above.
PIPELINE_MODELS: dict[str, dict[str, tuple[str, ...]]] = {
    "tflite": {
        "ci": ("small_int8.tflite", "small_uint8.tflite", "small_float.tflite", "digits_int8.tflite",
               "digits_float.tflite", "real/keras_cnn_int8.tflite", "real/keras_ds_cnn_int8.tflite",
               "real/keras_sparse_int8.tflite", "real/keras_cnn_uint8_v1.tflite",
               # issue 38: a long chain of same-range ADDs (shared tables), and what convert must refuse
               "chain:60", "malformed:tflite_reshape_minus_two", "malformed:tflite_writes_constant",
               "malformed:tflite_softmax_beta_nan", "malformed:tflite_denormal_scale"),
        "bench": ("real/keras_cnn_float.tflite", "real/keras_cnn_int8_floatio.tflite",
                  "real/keras_cnn_uint8_uint8io.tflite", "real/keras_ds_cnn_float.tflite",
                  "real/keras_ds_cnn_int8_floatio.tflite", "real/keras_sparse_float.tflite"),
    },
    "onnx": {
        "ci": ("onnx:float_cnn", "onnx:qdq_cnn", "onnx:qop_cnn", "real/torch_resnet18_qop.onnx",
               "malformed:onnx_duplicate_outputs", "malformed:onnx_writes_input", "malformed:onnx_writes_initializer",
               "malformed:onnx_opset_999999", "malformed:onnx_gather_out_of_range"),
        "bench": ("real/torch_resnet18_qdq.onnx", "real/torch_mobilenet_v3_small_qop.onnx",
                  "real/torch_yolo_tiny_qdq.onnx", "real/torch_resnet18_float.onnx"),
    },
    "graph": {
        "ci": ("small_int8.tflite", "small_float.tflite", "digits_int8.tflite", "real/keras_cnn_int8.tflite"),
        "bench": ("real/keras_ds_cnn_int8.tflite", "real/torch_resnet18_qop.onnx"),
    },
    "npz": {
        "ci": ("small_int8.tflite", "small_uint8.tflite", "small_float.tflite", "digits_int8.tflite",
               "real/keras_cnn_int8.tflite", "real/keras_ds_cnn_float.tflite",
               # issue 38: compare's findings as rows (testing/fuzz_compare_cases.py), run unmutated
               "compare:resume_stray_shard", "compare:readonly_results", "compare:image_bomb",
               "compare:generated_huge"),
        "bench": ("real/keras_sparse_int8.tflite", "real/torch_resnet18_qop.onnx"),
    },
}
_BUILT_ONNX = {"float_cnn": float_cnn, "qdq_cnn": qdq_cnn, "qop_cnn": qop_cnn}
#: model path -> its imported and prepared graph, filled by :func:`pipeline_seeds` ("npz") before the
#: fuzzer forks its workers, which run each mutated input on it
PREPARED: dict[str, Any] = {}


@dataclass(frozen=True)
class PipelineSeed:
    """One artefact the pipeline fuzzer mutates: ``label`` (unique file name), ``data``, and for an input
    file the ``model`` (path) it is an input of."""

    label: str
    data: bytes
    model: str = ""


def valid_inputs(graph: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """A valid feed for every graph input, by its shape and source dtype (what ``run --input`` takes).

    Floats in [0, 1) (the real models' pixel scale), int8 / uint8 over their whole range, other integers
    0 or 1 (safe as indices), bools at random; deterministic in ``seed``.
    """
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for gio in graph.inputs:
        shape = tuple(int(d) for d in gio.shape)
        dt = np.dtype(gio.dtype)
        if dt.kind == "f":
            out[gio.name] = rng.random(shape).astype(dt)
        elif dt in (np.dtype(np.int8), np.dtype(np.uint8)):
            info = np.iinfo(dt)
            out[gio.name] = rng.integers(int(info.min), int(info.max) + 1, shape).astype(dt)
        elif dt.kind in "iu":
            out[gio.name] = rng.integers(0, 2, shape).astype(dt)
        elif dt.kind == "b":
            out[gio.name] = rng.random(shape) < 0.5
        else:
            out[gio.name] = np.zeros(shape, dt)
    return out


def _npz(arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _model_file(name: str, folder: Path) -> Path:
    """``models/NAME``, a built ONNX model (``onnx:NAME``), a malformed model convert must refuse
    (``malformed:NAME``, :data:`~hexnn_import.testing.malformed_models.MALFORMED`; its file is named
    ``malformed_NAME``: the fuzz expects such a seed rejected) or a long ADD chain (``chain:N``), written into
    ``folder``."""
    if name.startswith("malformed:"):
        from hexnn_import.testing.malformed_models import MALFORMED

        suffix, build, _ = MALFORMED[name[10:]]
        path = folder / f"{MALFORMED_PREFIX}{name[10:]}{suffix}"
        path.write_bytes(build())
        return path
    if name.startswith("chain:"):
        from hexnn_import.testing.hostile_chains import add_chain_tflite

        path = folder / f"add_chain_{name[6:]}.tflite"
        path.write_bytes(add_chain_tflite(int(name[6:])))
        return path
    if name.startswith("onnx:"):
        path = folder / f"{name[5:]}.onnx"
        path.write_bytes(_BUILT_ONNX[name[5:]]())
        return path
    return MODELS / name


def pipeline_seeds(fmt: str, size: str = "ci") -> list[PipelineSeed]:
    """The pipeline fuzzer's seeds of ``fmt`` ("tflite", "onnx", "graph", "npz"); "bench" adds more models.

    Graph files are what ``hexnn-import MODEL -o g.hexnn.json`` writes (imported, prepared, saved);
    inputs are one valid ``.npz`` per model (compressed for every other model, to reach the deflate
    path too), whose prepared graph is kept in :data:`PREPARED`.
    """
    from hexnn_import.api import import_model, prepare
    from hexnn_import.emit import emit_graph

    names = PIPELINE_MODELS[fmt]["ci"] + (PIPELINE_MODELS[fmt]["bench"] if size == "bench" else ())
    out: list[PipelineSeed] = []
    with tempfile.TemporaryDirectory(prefix="hexnn-seeds-") as tmp:
        for k, name in enumerate(names):
            if name.startswith("compare:"):  # a compare row on the small int8 model: its artefact, not an input
                from hexnn_import.testing.fuzz_compare_cases import ROWS, row_label

                out.append(PipelineSeed(row_label(name[8:]), ROWS[name[8:]][0](), str(MODELS / "small_int8.tflite")))
                continue
            path = _model_file(name, Path(tmp))
            label = path.name
            if fmt in ("tflite", "onnx"):
                out.append(PipelineSeed(label, path.read_bytes()))
                continue
            graph = prepare(import_model(path))
            if fmt == "graph":
                target = Path(tmp) / (path.stem + ".hexnn.json")
                emit_graph(graph, "json", target, source=str(path))
                out.append(PipelineSeed(target.name, target.read_bytes()))
            else:
                PREPARED[str(path)] = graph
                data = _npz(valid_inputs(graph, k), compressed=k % 2 == 1)
                out.append(PipelineSeed(path.stem + ".npz", data, str(path)))
    return out


def int8_weights(model: bytes | Path) -> bool:
    """Whether an ONNX model holds int8 weights (an initializer of two or more dimensions), which XS3 lowers."""
    proto = onnx.load_from_string(model) if isinstance(model, bytes) else onnx.load(str(model))
    return any(t.data_type == onnx.TensorProto.INT8 and len(t.dims) >= 2 for t in proto.graph.initializer)


#: format name (as in ``fuzz.FORMATS``) -> its seeds
SEEDS = {"tflite": tflite_seeds, "graph": graph_seeds, "onnx": onnx_seeds}

__all__ = ["SEEDS", "tflite_seeds", "graph_seeds", "onnx_seeds", "float_cnn", "qdq_cnn", "qop_cnn",
           "PIPELINE_MODELS", "PREPARED", "MALFORMED_PREFIX", "PipelineSeed", "int8_weights", "pipeline_seeds", "valid_inputs"]
