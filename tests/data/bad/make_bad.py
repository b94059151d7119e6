"""Write the broken inputs of this folder (run from the repository root: ``python tests/data/bad/make_bad.py``).

Every file is small and deterministic; README.md says what each one is and
tests/robust/test_bad_inputs.py what the command line must say about it.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.api import import_model
from hexnn_import.serialize import graph_to_dict
from hexnn_import.testing.fuzz_seeds import float_cnn, qdq_cnn
from hexnn_import.testing.tflite_builder import TFLiteBuilder

HERE = Path(__file__).resolve().parent
MODELS = HERE.parents[2] / "models"


def relu_int8(scale: float = 0.05, zero_point: int = -3) -> bytes:
    """A one-op int8 model, input -> RELU -> output, both tensors quantized with ``scale`` / ``zero_point``."""
    b = TFLiteBuilder()
    x = b.add_tensor("input", [1, 4], np.int8, scale=scale, zero_point=zero_point)
    y = b.add_tensor("output", [1, 4], np.int8, scale=scale, zero_point=zero_point)
    b.add_operator("RELU", [x], [y])
    b.set_io([x], [y])
    return b.build()


def tflite_files() -> dict[str, bytes]:
    small = (MODELS / "small_int8.tflite").read_bytes()
    out = {
        "empty.tflite": b"",
        "not_a_model.tflite": b"this is a text file, not a TFLite flatbuffer\n",
        "truncated.tflite": small[: len(small) // 2],
        "root_offset_past_end.tflite": struct.pack("<I", 0x7FFFFF00) + small[4:],
        "zero_scale.tflite": relu_int8(scale=0.0),
        "negative_scale.tflite": relu_int8(scale=-0.05),
        "nan_scale.tflite": relu_int8(scale=float("nan")),
        "zero_point_out_of_range.tflite": relu_int8(zero_point=300),
    }
    b = TFLiteBuilder()
    x = b.add_tensor("input", [1, 4], np.float32)
    y = b.add_tensor("doubled", [1, 4], np.float32)
    z = b.add_tensor("output", [1, 4], np.float32)
    b.add_operator("ADD", [x, x], [y], options_type="MulOptions")
    b.add_operator("RELU", [y], [z])
    b.set_io([x], [z])
    out["options_of_another_op.tflite"] = b.build()
    b = TFLiteBuilder()
    x = b.add_tensor("input", [1, 4], np.float32)
    y = b.add_tensor("cumsum", [1, 4], np.float32)
    z = b.add_tensor("output", [1, 4], np.float32)
    axis = b.add_const("axis", np.array([1], np.int32))
    b.add_operator("CUMSUM", [x, axis], [y])
    b.add_custom_operator("MyVendorOp", [y], [z])
    b.set_io([x], [z])
    out["unsupported_ops.tflite"] = b.build()
    b = TFLiteBuilder()
    x = b.add_tensor("input", [1, 4], np.float32, shape_signature=[-1, 4])
    y = b.add_tensor("output", [1, 4], np.float32, shape_signature=[-1, 4])
    b.add_operator("RELU", [x], [y])
    b.set_io([x], [y])
    out["dynamic_batch.tflite"] = b.build()
    b = TFLiteBuilder()
    x = b.add_tensor("input", [2, 2, 2, 3, 4], np.float32)
    y = b.add_tensor("output", [2, 2, 2, 3, 4], np.float32)
    b.add_operator("ADD", [x, x], [y])
    b.set_io([x], [y])
    out["rank5.tflite"] = b.build()
    return out


def onnx_files() -> dict[str, bytes]:
    qdq = qdq_cnn()
    out = {
        "empty.onnx": b"",
        "not_a_model.onnx": b"\xff\xff\xff\xff this is not a protobuf\n",
        "truncated.onnx": qdq[: len(qdq) // 2],
    }
    m = onnx.load_from_string(float_cnn())
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    out["symbolic_batch.onnx"] = m.SerializeToString()
    m = onnx.load_from_string(qdq)
    for t in m.graph.initializer:
        if t.name == "s_y":
            t.CopyFrom(numpy_helper.from_array(np.array(0.0, np.float32), "s_y"))
    out["zero_scale_qdq.onnx"] = m.SerializeToString()
    g = helper.make_graph([helper.make_node("Einsum", ["x", "x"], ["y"], equation="ij,jk->ik")], "einsum",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])])
    out["unsupported_op.onnx"] = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    shape = [2, 2, 2, 3, 4]
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "rank5",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    out["rank5.onnx"] = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    return out


def graph_files() -> dict[str, bytes]:
    """Damaged copies of the graph file of a one-op model."""
    src = HERE / "_relu.tflite"
    src.write_bytes(relu_int8())
    try:
        doc = graph_to_dict(import_model(src))
    finally:
        src.unlink()
    text = json.dumps(doc, indent=1)
    out = {"truncated.hexnn.json": text[: len(text) // 2].encode(),
           "not_json.hexnn.json": b'{"format": "hexnn-graph", this is not JSON}\n'}

    def edited(edit) -> bytes:  # type: ignore[no-untyped-def]
        d = json.loads(text)
        edit(d)
        return json.dumps(d, indent=1).encode()

    out["wrong_version.hexnn.json"] = edited(lambda d: d.update(version=99))
    last = doc["nodes"][-1]["id"]
    out["dangling_ref.hexnn.json"] = edited(lambda d: d["nodes"][-1]["inputs"].__setitem__(0, [last + 100, 0]))
    out["bad_const_dtype.hexnn.json"] = edited(lambda d: next(n for n in d["nodes"] if "data" in n)["data"]
                                               .__setitem__("dtype", "|O"))
    out["unknown_op.hexnn.json"] = edited(lambda d: d["nodes"][-2].__setitem__("op", "QuantizedTeleport_8"))
    out["deep_nesting.hexnn.json"] = text.replace('"meta": {', '"meta": {"deep": ' + "[" * 5000 + "]" * 5000 + ", ",
                                                  1).encode()
    return out


def npz_files() -> dict[str, bytes]:
    """Run-time inputs and calibration data for models/small_int8.tflite and models/small_float.tflite."""
    import io

    def npz(**arrays: np.ndarray) -> bytes:
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        return buf.getvalue()

    shape = (1, 24, 24, 3)  # both small models take one 'input' of this shape
    rng = np.random.default_rng(0)
    q = rng.integers(-128, 128, shape).astype(np.int8)
    nan = np.zeros(shape, np.float32)
    nan[0, 1, 2, 0] = np.nan
    return {
        "input_not_npz.npz": b"not a numpy file\n",
        "input_wrong_names.npz": npz(image=q, mask=q),
        "input_wrong_shape.npz": npz(input=q[:, :4]),
        "input_wrong_dtype.npz": npz(input=q.astype(np.float32)),
        "input_nan.npz": npz(input=nan),
        "input_object_array.npz": npz(input=np.array([{"a": 1}], dtype=object)),
        "calibration_strings.npz": npz(input=np.full((4,) + shape, "x")),
        "calibration_wrong_names.npz": npz(image=np.zeros((4,) + shape, np.float32),
                                           mask=np.zeros((4,) + shape, np.float32)),
        "calibration_wrong_shape.npz": npz(input=np.zeros((4, 3, 3), np.float32)),
    }


def main() -> None:
    for name, data in {**tflite_files(), **onnx_files(), **graph_files(), **npz_files()}.items():
        (HERE / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
