"""Semantic checks with clear messages (issue [Robust], "Deliver"), one test per check.

Each bad value is refused with the project's own error naming the tensor,
node, input or file, never a numpy error or a silent wrong result:
quantization scales and zero points, windows / strides / enums / tensor
sizes no model could have, ranges (min > max, no 0 inside), ranks above 4,
dynamic dimensions, NaN / Inf fed at run time, calibration and input data of
the wrong names / shapes / dtypes, output folders that cannot be written.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
import tflite
from onnx import TensorProto, helper

from hexnn_import.api import Runner, import_model
from hexnn_import.errors import HexnnError, InputDataError, ModelFormatError, OpError, UnsupportedOpsError
from hexnn_import.serialize import graph_to_dict, load_graph, save_graph
from hexnn_import.testing import tflite_serialize
from hexnn_import.testing.fuzz_seeds import float_cnn
from hexnn_import.testing.tflite_builder import TFLiteBuilder

MODELS = Path(__file__).resolve().parents[2] / "models"


def _relu(tmp_path: Path, dtype: Any = np.int8, scale: Any = 0.05, zero_point: Any = 0,
          shape: list[int] | None = None, **tensor: Any) -> Path:
    """A one-op RELU model written to ``tmp_path`` (both tensors quantized alike when ``scale`` is not None)."""
    b = TFLiteBuilder()
    shape = shape or [1, 4]
    quant = {} if scale is None else {"scale": scale, "zero_point": zero_point}
    x = b.add_tensor("input", shape, dtype, **quant, **tensor)
    y = b.add_tensor("output", shape, dtype, **quant)
    b.add_operator("RELU", [x], [y])
    b.set_io([x], [y])
    path = tmp_path / "relu.tflite"
    path.write_bytes(b.build())
    return path


def _error(exc_type: type[Exception], fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg and msg.strip()
    return msg


# ---- scales and zero points ---------------------------------------------------------------------
@pytest.mark.parametrize("scale", [0.0, -0.05, math.nan, math.inf])
def test_a_zero_negative_or_nan_scale_is_refused(tmp_path: Path, scale: float) -> None:
    msg = _error(ModelFormatError, import_model, _relu(tmp_path, scale=scale))
    assert "tensor input" in msg and f"scale {float(np.float32(scale))}" in msg and "positive finite" in msg


def test_a_bad_per_channel_scale_is_named(tmp_path: Path) -> None:
    b = TFLiteBuilder()
    x = b.add_tensor("input", [1, 4, 4, 2], np.int8, scale=0.1, zero_point=0)
    w = b.add_const("weights", np.ones((2, 1, 1, 2), np.int8), scale=[0.1, 0.0], zero_point=[0, 0])
    bias = b.add_const("bias", np.zeros(2, np.int32), scale=[0.01, 0.01], zero_point=[0, 0])
    y = b.add_tensor("output", [1, 4, 4, 2], np.int8, scale=0.1, zero_point=0)
    b.add_operator("CONV_2D", [x, w, bias], [y])
    b.set_io([x], [y])
    (tmp_path / "conv.tflite").write_bytes(b.build())
    msg = _error(ModelFormatError, import_model, tmp_path / "conv.tflite")
    assert "tensor weights" in msg and "scale 0.0" in msg


@pytest.mark.parametrize("dtype,zero_point,bounds", [(np.int8, 128, "[-128, 127]"), (np.int8, -129, "[-128, 127]"),
                                                     (np.uint8, 256, "[0, 255]"), (np.uint8, -1, "[0, 255]")])
def test_a_zero_point_outside_its_type_is_refused(tmp_path: Path, dtype: Any, zero_point: int, bounds: str) -> None:
    msg = _error(ModelFormatError, import_model, _relu(tmp_path, dtype=dtype, zero_point=zero_point))
    assert f"zero point {zero_point}" in msg and bounds in msg and "tensor input" in msg


def test_an_onnx_zero_scale_is_refused(tmp_path: Path) -> None:
    from hexnn_import.testing.fuzz_seeds import qdq_cnn

    m = onnx.load_from_string(qdq_cnn())
    next(t for t in m.graph.initializer if t.name == "s_x").float_data[:] = [0.0]
    next(t for t in m.graph.initializer if t.name == "s_x").ClearField("raw_data")
    onnx.save(m, tmp_path / "m.onnx")
    msg = _error(HexnnError, import_model, tmp_path / "m.onnx")
    assert "s_x" in msg and "positive scale" in msg


def test_graph_file_io_with_a_bad_scale_or_zero_point_is_refused(tmp_path: Path) -> None:
    doc = graph_to_dict(import_model(MODELS / "small_int8.tflite"))
    for key, value, words in (("scale", 0.0, "scale 0.0"), ("zero_point", 200, "zero point 200")):
        d = json.loads(json.dumps(doc))
        d["inputs"][0][key] = value
        (tmp_path / "g.hexnn.json").write_text(json.dumps(d))
        msg = _error(ModelFormatError, load_graph, tmp_path / "g.hexnn.json")
        assert words in msg and "input" in msg


# ---- sizes, windows and enums the TFLite reader checks -------------------------------------------
def _pool(tmp_path: Path, **options: Any) -> Path:
    b = TFLiteBuilder()
    x = b.add_tensor("input", [1, 8, 8, 2], np.float32)
    y = b.add_tensor("output", [1, 8, 8, 2], np.float32)
    b.add_operator("MAX_POOL_2D", [x], [y], {"padding": "SAME", **options})
    b.set_io([x], [y])
    (tmp_path / "pool.tflite").write_bytes(b.build())
    return tmp_path / "pool.tflite"


@pytest.mark.parametrize("field,value", [("filter_height", 1 << 29), ("stride_w", 0), ("filter_width", -3)])
def test_a_window_or_stride_no_tensor_could_have_is_refused(tmp_path: Path, field: str, value: int) -> None:
    msg = _error(ModelFormatError, import_model, _pool(tmp_path, **{field: value}))
    assert "operator 0 (MAX_POOL_2D)" in msg and f" {value} is outside [1, 8]" in msg


def test_an_enum_value_the_schema_lacks_is_refused(tmp_path: Path) -> None:
    msg = _error(ModelFormatError, import_model, _pool(tmp_path, fused_activation_function=77))
    assert "FusedActivationFunction 77" in msg and "[0, 1, 2, 3, 4, 5]" in msg


def test_a_tensor_larger_than_a_hexagon_nn_tensor_is_refused(tmp_path: Path) -> None:
    # 2**33 float32 values = 32 GiB; hexagon_nn_tensordef.dataLen is a C int: 2**31 - 1 bytes at most
    path = _relu(tmp_path, dtype=np.float32, scale=None, shape=[1, 65536, 65536, 2])
    msg = _error(HexnnError, import_model, path)
    assert "input" in msg and "32.0 GiB" in msg and "2147483647" in msg


# ---- ranges ---------------------------------------------------------------------------------------
def test_a_recorded_range_with_min_above_max_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def quantization(fb: Any, t: Any) -> int:  # the builder's table plus min / max vectors
        vecs = [fb.CreateNumpyVector(np.asarray(v, dtype=dt)) for v, dt in
                ((t.scale, np.float32), (t.zero_point, np.int64), ([1.0], np.float32), ([-1.0], np.float32))]
        tflite.QuantizationParametersStart(fb)
        tflite.QuantizationParametersAddScale(fb, vecs[0])
        tflite.QuantizationParametersAddZeroPoint(fb, vecs[1])
        tflite.QuantizationParametersAddMin(fb, vecs[2])
        tflite.QuantizationParametersAddMax(fb, vecs[3])
        return tflite.QuantizationParametersEnd(fb)

    monkeypatch.setattr(tflite_serialize, "_quantization", quantization)
    msg = _error(ModelFormatError, import_model, _relu(tmp_path))
    assert "tensor input" in msg and "[1.0, -1.0]" in msg and "min <= max" in msg


def _with_const(name: str, value: float) -> tuple[Runner, dict[str, np.ndarray]]:
    """small_int8.tflite with the Const ``name`` set to ``value``: its runner and a feed."""
    g = import_model(MODELS / "small_int8.tflite")
    node = next(n for n in g.nodes if n.name == name)
    node.data = np.full_like(node.data, value)
    return Runner(g), {"input": np.zeros(g.inputs[0].shape, np.int8)}


def _run_with_const(name: str, value: float) -> str:
    runner, feed = _with_const(name, value)
    return _error(OpError, runner.run, feed)


def test_a_range_with_min_above_max_fails_at_the_node_that_reads_it() -> None:
    msg = _run_with_const("input/min", 2.0)
    assert "conv1/relu" in msg and "Supernode_8x8p32to8" in msg and "min 2.0 > max" in msg


def test_a_range_without_zero_fails_at_the_node_that_reads_it() -> None:
    """hexagon_nn refuses a supernode output range without 0 (supernode_utils.h
    setup_initial_output_range: "supernode: invalid input min/max")."""
    msg = _run_with_const("conv1/relu/out/min", 0.1)
    assert "conv1/relu" in msg and "Supernode_8x8p32to8" in msg and "output range [0.1" in msg
    assert "invalid input min/max" in msg and "min <= 0 <= max" in msg


def test_a_weight_range_without_zero_runs_as_in_the_c() -> None:
    """hexagon_nn's supernode accepts a filter range without 0 (its zero code saturates to 0):
    no error, codes out."""
    runner, feed = _with_const("conv1/relu/weights/min", 0.1)
    assert all(np.all(np.isfinite(v)) for v in runner.run(feed).values())


def test_a_non_finite_range_fails_at_the_node_that_reads_it() -> None:
    """A range with a non-finite end is an error naming the node (docs/semantics.md)."""
    msg = _run_with_const("conv1/relu/weights/min", -math.inf)
    assert "conv1/relu" in msg and "Supernode_8x8p32to8" in msg and "weights range [-inf" in msg
    assert "not finite" in msg


# ---- ranks and dynamic dimensions ---------------------------------------------------------------
def test_a_tflite_tensor_of_rank_5_is_refused_by_name(tmp_path: Path) -> None:
    msg = _error(UnsupportedOpsError, import_model, _relu(tmp_path, dtype=np.float32, scale=None,
                                                          shape=[2, 2, 2, 3, 4]))
    assert "RELU" in msg and "rank 5 > 4" in msg


def test_an_onnx_tensor_of_rank_5_is_refused_by_name(tmp_path: Path) -> None:
    shape = [2, 2, 2, 3, 4]
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "m.onnx")
    msg = _error(UnsupportedOpsError, import_model, tmp_path / "m.onnx")
    assert "Relu" in msg and "rank 5 > 4" in msg


def test_a_graph_file_shape_of_rank_5_is_refused(tmp_path: Path) -> None:
    d = graph_to_dict(import_model(MODELS / "small_int8.tflite"))
    next(n for n in d["nodes"] if n["op"] != "Const")["outputs"][0]["shape"] = [1, 1, 24, 24, 3]
    (tmp_path / "g.hexnn.json").write_text(json.dumps(d))
    # the graph verifier's rank rule names the node and the shape (issue 24)
    assert "node INPUT (INPUT): output 0 has shape [1, 1, 24, 24, 3], not 4-D" in _error(
        ModelFormatError, load_graph, tmp_path / "g.hexnn.json")


def test_a_dynamic_tflite_batch_defaults_to_1_and_other_dims_are_refused(tmp_path: Path) -> None:
    path = _relu(tmp_path, dtype=np.float32, scale=None, shape_signature=[-1, 4])
    g = import_model(path)
    assert g.inputs[0].shape == (1, 4) and any("dynamic batch set to 1" in n for n in g.meta["notes"])
    assert import_model(path, input_shapes={"input": (3, 4)}).inputs[0].shape == (3, 4)
    path = _relu(tmp_path, dtype=np.float32, scale=None, shape_signature=[1, -1])
    msg = _error(ModelFormatError, import_model, path)
    assert "dynamic dimensions [1, -1]" in msg and "only a dynamic batch" in msg


def test_a_symbolic_onnx_batch_defaults_to_1_and_other_dims_are_refused(tmp_path: Path) -> None:
    m = onnx.load_from_string(float_cnn())
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(m, tmp_path / "m.onnx")
    g = import_model(tmp_path / "m.onnx")
    assert g.inputs[0].shape[0] == 1 and any("dynamic batch set to 1" in n for n in g.meta["notes"])
    msg = _error(HexnnError, import_model, tmp_path / "m.onnx", input_shapes={"x": (2, 3, 8, 8)})
    assert "node f" in msg and "hard-codes batch 1" in msg  # its Flatten is a Reshape to [1, 64]
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "H"
    onnx.save(m, tmp_path / "h.onnx")
    msg = _error(ModelFormatError, import_model, tmp_path / "h.onnx")
    assert "--input-shape x=" in msg


# ---- run-time inputs ----------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_or_inf_fed_to_autoquantize_is_refused(bad: float) -> None:
    """AutoQuantize (run-time ranges): NaN or Inf in the input is an error (SEMANTICS §2)."""
    g = import_model(MODELS / "digits_float.tflite")
    x = np.zeros(g.inputs[0].shape, np.float32)
    x.flat[5] = bad
    msg = _error(OpError, Runner(g).run, {"input": x})
    assert "AutoQuantize" in msg and ("NaN" if math.isnan(bad) else "Inf") in msg


def test_nan_fed_to_quantize_is_refused_and_inf_saturates() -> None:
    """Quantize (calibrated ranges): NaN is an error, +-Inf saturates to code 255 / 0 (its kernel's reading)."""
    g = import_model(MODELS / "digits_float.tflite", calibration=MODELS / "digits_calibration.npz")
    x = np.zeros(g.inputs[0].shape, np.float32)
    x.flat[5] = math.nan
    msg = _error(OpError, Runner(g).run, {"input": x})
    assert "(Quantize)" in msg and "NaN" in msg
    x.flat[5] = math.inf
    assert np.all(np.isfinite(next(iter(Runner(g).run({"input": x}).values()))))


@pytest.mark.parametrize("feed,words", [
    ({"image": np.zeros((1, 24, 24, 3), np.int8)}, ("['input'] missing", "['image'] unknown")),
    ({"input": np.zeros((1, 24, 24), np.int8)}, ("shape [1, 24, 24]", "[1, 24, 24, 3]")),
    ({"input": np.zeros((1, 24, 24, 3), np.float32)}, ("dtype float32", "int8")),
    ({"input": np.zeros((1, 24, 24, 3), np.uint8)}, ("dtype uint8", "int8")),
])
def test_input_data_of_the_wrong_name_shape_or_dtype(feed: dict[str, np.ndarray], words: tuple[str, ...]) -> None:
    msg = _error(InputDataError, Runner(import_model(MODELS / "small_int8.tflite")).run, feed)
    assert all(w in msg for w in words), msg


@pytest.mark.parametrize("data,words", [
    ({"image": np.zeros((4, 8, 8, 1), np.float32), "mask": np.zeros(4)}, ("'image', 'mask'", "['input'] are missing")),
    ({"input": np.zeros((4, 3, 3), np.float32)}, ("shape [3, 3]", "[1, 8, 8, 1]")),
    ({"input": np.zeros((0, 8, 8, 1), np.float32)}, ("same number of samples",)),
    ({"input": np.full((4, 1, 8, 8, 1), "x")}, ("calibration array 'input'", "dtype <U1", "float32")),
    ({"input": np.zeros((4, 1, 8, 8, 1), np.int32)}, ("dtype int32",)),
    ({"input": np.zeros((4, 1, 8, 8, 1), np.complex64)}, ("dtype complex64",)),
    ({"input": np.array([None] * 4)}, ("dtype object",)),
    ({"input": np.full((4, 1, 8, 8, 1), np.nan, np.float32)}, ("NaN or Inf",)),
])
def test_calibration_data_of_the_wrong_name_shape_or_dtype(data: dict[str, Any], words: tuple[str, ...]) -> None:
    msg = _error(InputDataError, import_model, MODELS / "digits_float.tflite", calibration=data)
    assert all(w in msg for w in words), msg


def test_calibration_file_that_is_not_npz(tmp_path: Path) -> None:
    (tmp_path / "c.npz").write_text("no")
    assert "not a readable .npz" in _error(InputDataError, import_model, MODELS / "digits_float.tflite",
                                           calibration=tmp_path / "c.npz")


# ---- output folders ------------------------------------------------------------------------------
def test_an_output_folder_that_does_not_exist(tmp_path: Path) -> None:
    g = import_model(MODELS / "small_int8.tflite")
    msg = _error(HexnnError, save_graph, g, tmp_path / "missing" / "g.hexnn.json")
    assert "cannot write" in msg and "does not exist" in msg


def test_an_output_folder_that_is_a_file_or_a_target_that_is_a_folder(tmp_path: Path) -> None:
    g = import_model(MODELS / "small_int8.tflite")
    (tmp_path / "plain").write_text("x")
    assert "cannot write" in _error(HexnnError, save_graph, g, tmp_path / "plain" / "g.hexnn.json")
    (tmp_path / "folder.hexnn.json").mkdir()
    assert "cannot write" in _error(HexnnError, save_graph, g, tmp_path / "folder.hexnn.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.hexnn.json", "plain"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        msg = _error(HexnnError, save_graph, import_model(MODELS / "small_int8.tflite"), folder / "g.hexnn.json")
        assert "cannot write" in msg
    finally:
        folder.chmod(0o700)


def test_the_cli_names_an_unwritable_output(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from hexnn_import.cli import cli

    result = CliRunner().invoke(cli, [str(MODELS / "small_int8.tflite"), "-o", str(tmp_path / "no" / "g.json")])
    assert result.exit_code == 2 and result.stderr.startswith("error: cannot write")
    assert "Traceback" not in result.stderr
