"""Runners (LiteRT, onnxruntime, Hexagon) and the sample handling of the comparator."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import hexnn_import as hx
from hexnn_import.compare.runners import HexagonRunner, LiteRTRunner, OnnxRuntimeRunner
from hexnn_import.datasets.samples import random_dataset
from hexnn_import.errors import InputDataError, ModelFormatError
from hexnn_import.graph import GraphIO
from hexnn_import.testing.litert import run_litert

MODELS = Path(__file__).resolve().parents[2] / "models"
DIGITS = ("input", "conv1", "pool1", "conv2", "pool2", "flatten", "logits")


def _onnx(nodes: list, inputs: list, outputs: list, inits: dict[str, np.ndarray]) -> bytes:
    g = helper.make_graph(nodes, "t", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()


def test_litert_runner_dequantizes_every_tensor() -> None:
    model = (MODELS / "digits_int8.tflite").read_bytes()
    r = LiteRTRunner(model, per_layer=True)
    assert r.quantized and r.outputs == ["logits"] and r.inputs[0].dtype == "int8"
    x = np.random.default_rng(0).integers(-128, 128, size=(1, 8, 8, 1), dtype=np.int8)
    out = r.infer({"input": x})
    assert next(iter(out)) == "logits" and set(DIGITS) <= set(out)
    q = run_litert(model, [x])[0]
    spec = next(d for d in r.interp.get_output_details())
    scale, zp = spec["quantization"]
    np.testing.assert_allclose(out["logits"], (q.astype(np.float64) - zp) * scale)
    assert r.steps["logits"] == pytest.approx(scale)
    with pytest.raises(InputDataError, match="takes"):
        r.infer({"input": x.astype(np.float32)})


def test_onnxruntime_runner_marks_every_node_output() -> None:
    rng = np.random.default_rng(0)
    w = rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
    g = rng.normal(size=(10, 64)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["conv"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["relu"]),
             helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["pool"], ["flat"]),
             helper.make_node("Gemm", ["flat", "g"], ["y"], transB=1)]
    model = _onnx(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], {"w": w, "g": g})
    r = OnnxRuntimeRunner(model, per_layer=True)
    assert not r.quantized and r.outputs == ["y"] and r.inputs == [GraphIO("x", (1, 3, 8, 8), "float32")]
    x = rng.normal(size=(1, 3, 8, 8)).astype(np.float32)
    out = r.infer({"x": x})
    assert {k: v.shape for k, v in out.items()} == {"x": (1, 3, 8, 8), "y": (1, 10), "conv": (1, 4, 8, 8),
                                                    "relu": (1, 4, 8, 8), "pool": (1, 4, 4, 4), "flat": (1, 64)}
    np.testing.assert_allclose(out["relu"], np.maximum(out["conv"], 0))
    np.testing.assert_allclose(out["y"], out["flat"] @ g.T.astype(np.float64), rtol=1e-5, atol=1e-5)
    plain = OnnxRuntimeRunner(model).infer({"x": x})
    assert list(plain) == ["y"]


def test_onnxruntime_runner_dequantizes_qdq_tensors() -> None:
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
             helper.make_node("Relu", ["xd"], ["y"])]
    model = _onnx(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                  {"s": np.array(0.25, np.float32), "z": np.array(3, np.int8)})
    r = OnnxRuntimeRunner(model, per_layer=True)
    out = r.infer({"x": np.array([[0.3, -0.5, 1.0, 0.2]], np.float32)})
    assert r.quantized and r.steps == {"xq": 0.25}
    np.testing.assert_allclose(out["xq"], [[0.25, -0.5, 1.0, 0.25]])  # codes 4, 1, 7, 4 around zero point 3


def test_unreadable_models_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelFormatError, match="bad.onnx"):
        OnnxRuntimeRunner(bad)
    with pytest.raises(ModelFormatError, match="cannot read"):
        LiteRTRunner(tmp_path / "missing.tflite")


def test_hexagon_runner_float_model_reports_the_output_step() -> None:
    g = hx.prepare(hx.import_model(MODELS / "digits_float.tflite"))
    r = HexagonRunner(g)
    out = r.infer({"input": np.zeros((1, 8, 8, 1), np.float32)})
    assert list(out) == ["logits"] and out["logits"].dtype == np.float64 and r.steps["logits"] > 0


def test_onnx_model_compares_per_layer_in_onnx_layout(tmp_path: Path) -> None:
    """An ONNX float model against itself in onnxruntime: NHWC tensors are transposed back to NCHW."""
    from hexnn_import.compare.comparator import run_comparison

    rng = np.random.default_rng(3)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["relu"]),
             helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2])]
    path = tmp_path / "net.onnx"
    path.write_bytes(_onnx(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                           [helper.make_tensor_value_info("pool", TensorProto.FLOAT, [1, 4, 4, 4])],
                           {"w": rng.normal(size=(4, 3, 3, 3)).astype(np.float32),
                            "b": rng.normal(size=4).astype(np.float32)}))
    hexagon = HexagonRunner(hx.prepare(hx.import_model(path)), per_layer=True)
    ref = OnnxRuntimeRunner(path, per_layer=True, name="float")
    comp = run_comparison(hexagon, [ref], random_dataset(3, hexagon.inputs)).comparisons[0]
    assert {"x", "relu", "pool"} <= set(comp.layers)
    assert all(comp.layers[n].sqnr_db > 30 for n in ("x", "relu", "pool")), {n: s.sqnr_db for n, s in
                                                                             comp.layers.items()}
    assert comp.outputs["pool"].sqnr_db > 30
