"""Malformed models the importers must refuse at convert (issue 38, finding 7), as bytes: ONNX models
onnx.checker and onnxruntime refuse, and TFLite models LiteRT's structure rules refuse. Each entry of
:data:`MALFORMED` is ``name -> (file suffix, builder, words the one-line refusal holds)``."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.testing.tflite_builder import TFLiteBuilder


def _onnx(nodes: list[onnx.NodeProto], outputs: list[str], inits: tuple[onnx.TensorProto, ...] = (),
          opset: int = 13) -> bytes:
    g = helper.make_graph(nodes, "malformed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                          initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def onnx_duplicate_outputs() -> bytes:
    return _onnx([helper.make_node("Relu", ["x"], ["y"], name="relu")], ["y", "y"])


def onnx_writes_input() -> bytes:
    return _onnx([helper.make_node("Relu", ["x"], ["y"], name="relu"),
                  helper.make_node("Neg", ["y"], ["x"], name="neg")], ["y"])


def onnx_writes_initializer() -> bytes:
    w = numpy_helper.from_array(np.ones((1, 8), np.float32), "w")
    return _onnx([helper.make_node("Add", ["x", "x"], ["w"], name="add"),
                  helper.make_node("Mul", ["x", "w"], ["y"], name="mul")], ["y"], (w,))


def onnx_opset_999999() -> bytes:
    return _onnx([helper.make_node("Relu", ["x"], ["y"], name="relu")], ["y"], opset=999999)


def onnx_gather_out_of_range() -> bytes:
    idx = numpy_helper.from_array(np.array([0, 9], np.int64), "idx")
    return _onnx([helper.make_node("Gather", ["x", "idx"], ["y"], name="gather", axis=1)], ["y"], (idx,))


def _tflite_u8(build: Callable[[TFLiteBuilder, int], int]) -> bytes:
    b = TFLiteBuilder("malformed")
    x = b.add_tensor("x", (1, 64), np.uint8, scale=0.05, zero_point=128)
    y = build(b, x)
    b.set_io([x], [y])
    return b.build()


def tflite_reshape_minus_two() -> bytes:
    def build(b: TFLiteBuilder, x: int) -> int:
        shape = b.add_const("shape", np.array([-2, 32], np.int32))
        y = b.add_tensor("y", (2, 32), np.uint8, scale=0.05, zero_point=128)
        b.add_operator("RESHAPE", [x, shape], [y])
        return y
    return _tflite_u8(build)


def tflite_writes_constant() -> bytes:
    def build(b: TFLiteBuilder, x: int) -> int:
        c = b.add_tensor("c", (1, 64), np.uint8, np.zeros((1, 64)), scale=0.05, zero_point=128)
        b.add_operator("ADD", [x, x], [c])
        y = b.add_tensor("y", (1, 64), np.uint8, scale=0.1, zero_point=128)
        b.add_operator("ADD", [x, c], [y])
        return y
    return _tflite_u8(build)


def tflite_softmax_beta_nan() -> bytes:
    def build(b: TFLiteBuilder, x: int) -> int:
        y = b.add_tensor("y", (1, 64), np.uint8, scale=1 / 256, zero_point=0)
        b.add_operator("SOFTMAX", [x], [y], {"beta": float("nan")})
        return y
    return _tflite_u8(build)


def tflite_denormal_scale() -> bytes:
    def build(b: TFLiteBuilder, x: int) -> int:
        y = b.add_tensor("y", (1, 64), np.uint8, scale=1.4e-45, zero_point=128)
        b.add_operator("ADD", [x, x], [y])
        return y
    return _tflite_u8(build)


MALFORMED: dict[str, tuple[str, Callable[[], bytes], tuple[str, ...]]] = {
    "onnx_duplicate_outputs": (".onnx", onnx_duplicate_outputs, ("output 'y' twice",)),
    "onnx_writes_input": (".onnx", onnx_writes_input, ("node neg (Neg)", "'x', already a graph input")),
    "onnx_writes_initializer": (".onnx", onnx_writes_initializer, ("node add (Add)", "'w', already an initializer")),
    "onnx_opset_999999": (".onnx", onnx_opset_999999, ("opset 999999",)),
    "onnx_gather_out_of_range": (".onnx", onnx_gather_out_of_range, ("Gather", "indices outside -8..7")),
    "tflite_reshape_minus_two": (".tflite", tflite_reshape_minus_two, ("operator 0 (RESHAPE)", "[-2, 32]")),
    "tflite_writes_constant": (".tflite", tflite_writes_constant, ("operator 0 (ADD)", "tensor c, a constant")),
    "tflite_softmax_beta_nan": (".tflite", tflite_softmax_beta_nan, ("operator 0 (SOFTMAX)", "Beta nan")),
    "tflite_denormal_scale": (".tflite", tflite_denormal_scale, ("tensor y", "smallest normal")),
}
