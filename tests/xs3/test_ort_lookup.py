"""onnxruntime's arithmetic of the ONNX per-tensor activations as lookup8 code functions (xs3/ort_int8.py),
held to onnxruntime itself: a DequantizeLinear -> op -> QuantizeLinear model run on all 256 codes, for int8
and uint8 tensors, each function the importer records (issue 39)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from hexnn_import.xs3.ort_int8 import ort_code_function

ort = pytest.importorskip("onnxruntime", reason="onnxruntime (the test extra's reference runtime) is the reference")

CASES = [("Sigmoid", "LOGISTIC", {}), ("Tanh", "TANH", {}),
         ("HardSigmoid", "HARD_SIGMOID", {"alpha": 0.25, "beta": 0.4}), ("HardSwish", "HARD_SWISH", {}),
         ("LeakyRelu", "LEAKY_RELU", {"alpha": 0.1})]


def _ort_codes(op: str, attrs: dict, dtype: int, s_in: float, z_in: int, s_out: float, z_out: int,
               const: tuple[float, bool] | None = None) -> np.ndarray:
    """onnxruntime's output codes of DequantizeLinear -> op -> QuantizeLinear for every code, in code order
    (``const``: the op's float constant operand and whether it comes first)."""
    np_t = np.int8 if dtype == TensorProto.INT8 else np.uint8
    inits = [helper.make_tensor("si", TensorProto.FLOAT, [], [s_in]), helper.make_tensor("zi", dtype, [], [z_in]),
             helper.make_tensor("so", TensorProto.FLOAT, [], [s_out]), helper.make_tensor("zo", dtype, [], [z_out])]
    ins = ["f"]
    if const is not None:
        inits.append(helper.make_tensor("c", TensorProto.FLOAT, [], [const[0]]))
        ins = ["c", "f"] if const[1] else ["f", "c"]
    nodes = [helper.make_node("DequantizeLinear", ["x", "si", "zi"], ["f"]),
             helper.make_node(op, ins, ["g"], **attrs), helper.make_node("QuantizeLinear", ["g", "so", "zo"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", dtype, [256])],
                              [helper.make_tensor_value_info("y", dtype, [256])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    x = np.arange(256).astype(np.int64) + (-128 if np_t is np.int8 else 0)
    return sess.run(None, {"x": x.astype(np_t)})[0]


@pytest.mark.parametrize("op, kind, attrs", CASES)
@pytest.mark.parametrize("dtype", [TensorProto.INT8, TensorProto.UINT8])
def test_ort_code_function_is_onnxruntime(op: str, kind: str, attrs: dict, dtype: int) -> None:
    shift = 0 if dtype == TensorProto.INT8 else 128
    for s_in, z_in, s_out, z_out in [(0.05, -3, 1 / 256, -128), (0.031, 10, 0.0123, 5), (0.11, 0, 0.02, -20)]:
        want = _ort_codes(op, attrs, dtype, s_in, z_in + shift, s_out, z_out + shift).astype(np.int64) - shift
        fn = ort_code_function(kind, attrs, s_in, z_in, s_out, z_out)
        assert fn is not None
        got = fn((np.arange(256) - 128).astype(np.int8)).astype(np.int64)  # the int8 views, in code order
        assert np.array_equal(got, want), (op, s_in, z_in, s_out, z_out, np.flatnonzero(got != want)[:8])


@pytest.mark.parametrize("op, kind, value, first", [("Add", "ADD", 3.0, False), ("Div", "DIV", 6.0, False),
                                                    ("Mul", "MUL", 0.1666, True), ("Sub", "SUB", 0.7, True)])
def test_a_constant_operand_is_onnxruntime(op: str, kind: str, value: float, first: bool) -> None:
    attrs = {"constant": value, "constant_first": first}
    for s_in, z_in, s_out, z_out in [(0.05, -3, 0.047, -128), (0.031, 10, 0.0123, 5)]:
        want = _ort_codes(op, {}, TensorProto.INT8, s_in, z_in, s_out, z_out, (value, first)).astype(np.int64)
        fn = ort_code_function(kind, attrs, s_in, z_in, s_out, z_out)
        assert fn is not None
        got = fn((np.arange(256) - 128).astype(np.int8)).astype(np.int64)
        assert np.array_equal(got, want), (op, s_in, np.flatnonzero(got != want)[:8])
