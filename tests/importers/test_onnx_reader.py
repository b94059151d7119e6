"""Reading ONNX models: opsets, --input-shape for symbolic dims, constant folding, the one
all-unsupported-ops error, bad files, the CLI and the emitted-op list.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import hexnn_import as hx
from hexnn_import.errors import InputDataError, ModelFormatError, UnsupportedOpsError
from hexnn_import.importers.onnx.importer import emitted_ops
from hexnn_import.ops.catalog import CATALOG
from hexnn_import.ops.registry import has_kernel
from hexnn_import.testing.onnx_compare import build_model, compare_onnx, random_feeds, run_ort

RNG = np.random.default_rng(5)
W = RNG.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32)


def _save(tmp_path: Path, model: bytes | onnx.ModelProto, name: str = "m.onnx") -> Path:
    p = tmp_path / name
    p.write_bytes(model if isinstance(model, bytes) else model.SerializeToString())
    return p


def test_unsupported_ops_are_listed_all_at_once(tmp_path: Path) -> None:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Acosh", ["c"], ["e1"]),
             helper.make_node("Acosh", ["e1"], ["e2"]), helper.make_node("Abs", ["e2"], ["a"]),
             helper.make_node("Resize", ["a", "", "s"], ["y"], mode="cubic")]
    model = build_model(nodes, {"x": (1, 3, 6, 6)}, {"y": None}, {"w": W, "s": np.array([1, 1, 2, 2], np.float32)})
    with pytest.raises(UnsupportedOpsError) as err:
        hx.import_model(_save(tmp_path, model))
    msg = err.value.listing()
    assert "Acosh x2 (e1, e2)" in msg and "Abs x1 (a)" in msg and "Resize (mode cubic) x1 (y)" in msg
    assert "Conv" not in msg


def test_old_opset_and_bad_files(tmp_path: Path) -> None:
    m = onnx.load_from_string(build_model([helper.make_node("Relu", ["x"], ["y"])], {"x": (1, 4)}, {"y": (1, 4)}))
    m.opset_import[0].version = 6
    with pytest.raises(ModelFormatError, match="opset 6"):
        hx.import_model(_save(tmp_path, m))
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    with pytest.raises(ModelFormatError):
        hx.import_model(bad)


def _symbolic_model() -> bytes:
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                           helper.make_node("Relu", ["c"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [onnx.numpy_helper.from_array(W, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def test_symbolic_dims_need_input_shape(tmp_path: Path) -> None:
    path = _save(tmp_path, _symbolic_model())
    with pytest.raises(ModelFormatError, match="--input-shape x="):
        hx.import_model(path)
    with pytest.raises(InputDataError, match="conflicts"):
        hx.import_model(path, input_shapes={"x": (2, 4, 8, 8)})
    with pytest.raises(InputDataError, match="model's inputs"):
        hx.import_model(path, input_shapes={"nope": (1, 3, 8, 8)})
    g = hx.import_model(path, input_shapes={"x": (2, 3, 6, 8)})
    assert g.inputs[0].shape == (2, 3, 6, 8) and g.outputs[0].shape == (2, 4, 6, 8)
    x = RNG.normal(size=(2, 3, 6, 8)).astype(np.float32)
    res = compare_onnx(_symbolic_model(), [{"x": x}], input_shapes={"x": (2, 3, 6, 8)})
    assert res["y"].sqnr >= 30


def test_shape_arithmetic_folds_to_constants(tmp_path: Path) -> None:
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape and Cast fold away."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("ConstantOfShape", ["cs"], ["ones"], value=helper.make_tensor("v", 1, [1], [0.5])),
             helper.make_node("Cast", ["ones"], ["half"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["r", "half"], ["y"])]
    inits = {"i0": np.array(0), "ax": np.array([0]), "minus1": np.array([-1]), "cs": np.array([1, 48])}
    model = build_model(nodes, {"x": (1, 3, 4, 4)}, {"y": (1, 48)}, inits)

    def check(g) -> None:  # type: ignore[no-untyped-def]
        ops = set(g.op_counts())
        assert not ops & {"Shape_int32", "Gather_8", "Gather_int32", "Concat_f"}, ops
        assert "QuantizedMul_8x8to32" in ops

    res = compare_onnx(model, random_feeds(model, 2, RNG), check_graph=check)
    assert res["y"].sqnr >= 30


def test_graph_io_keeps_onnx_names_shapes_and_quantized_dtypes(tmp_path: Path) -> None:
    """A uint8 graph input with a QuantizeLinear-declared scale is fed as codes; int8 outputs come back int8."""
    nodes = [helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["x"]),
             helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("QuantizeLinear", ["p", "s2", "z2"], ["y"])]
    inits = {"s": np.array(0.05, np.float32), "z": np.array(120, np.uint8), "s2": np.array(0.04, np.float32),
             "z2": np.array(-3, np.int8)}
    model = build_model(nodes, {"xq": (1, 2, 4, 4)}, {"y": (1, 2, 2, 2)}, inits, in_type=TensorProto.UINT8,
                        out_type=TensorProto.INT8)
    g = hx.import_model(_save(tmp_path, model))
    assert [(io.name, io.dtype, io.shape) for io in g.inputs] == [("xq", "uint8", (1, 2, 4, 4))]
    assert [(io.name, io.dtype, io.zero_point) for io in g.outputs] == [("y", "int8", -3)]
    xq = RNG.integers(0, 256, (1, 2, 4, 4)).astype(np.uint8)
    ours, ref = hx.Runner(g).run({"xq": xq})["y"], run_ort(model, {"xq": xq})["y"]
    assert ours.dtype == np.int8 and np.abs(ours.astype(int) - ref.astype(int)).max() <= 1


def test_emitted_ops_exist_with_kernels() -> None:
    ops = emitted_ops()
    assert {"Supernode_8x8p32to8", "QuantizedConcat_8", "QuantizedSoftmax_8", "Gather_8"} <= ops
    missing = sorted(op for op in ops if op not in CATALOG or not (op in ("INPUT", "OUTPUT", "Const")
                                                                     or has_kernel(op)))
    assert not missing, missing


def test_cli_converts_an_onnx_model(tmp_path: Path) -> None:
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])]
    path = _save(tmp_path, build_model(nodes, {"x": (1, 3, 6, 6)}, {"y": None}, {"w": W}))
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", str(path), "-o", str(tmp_path / "g.hexnn.json")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "QuantizedConv2d_8x8to32" in r.stdout
    r = subprocess.run([sys.executable, "-m", "hexnn_import.cli", "ops", "--json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    by = {row["name"]: row for row in json.loads(r.stdout)}
    assert "onnx" in by["Supernode_8x8p32to8"]["emitted_by"] and "onnx" in by["QuantizedTransposeConv2d_8x8p32to8"][
        "emitted_by"]
