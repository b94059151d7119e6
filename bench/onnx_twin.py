"""The ONNX twin of a float TFLite CNN, quantized by onnxruntime: the reference for bench/engine_speed.py.

    python bench/onnx_twin.py FLOAT.tflite OUT.onnx [--calibration X.npy]

:func:`float_onnx` rebuilds the float TFLite model's graph with onnx.helper
from the very same float weights: NCHW ``Conv`` (``auto_pad=SAME_UPPER``:
TFLite's SAME puts the odd padding pixel after, as SAME_UPPER does),
grouped ``Conv`` for depthwise, ``Add``, ``GlobalAveragePool`` /
``AveragePool``, ``Flatten`` / ``Reshape``, ``Gemm`` (``transB=1``), and
``Clip(0, 6)`` / ``Relu`` for fused activations. :func:`quantized_onnx` then
quantizes it with ``onnxruntime.quantization.quantize_static`` (QDQ format,
int8 activations and per-channel int8 weights, calibrated on the given NHWC
images), which is what onnxruntime users run. Only the builtins a
MobileNet-style model uses are handled; anything else is an error naming the
operator.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.importers.tflite_reader import TFModel, TFOperator, read_tflite

OPSET = 13
#: TFLite fused activation (ActivationFunctionType) -> clip bounds (None: no activation).
_ACTIVATIONS = {0: None, 1: (0.0, None), 3: (0.0, 6.0)}


class _Builder:
    """Accumulates ONNX nodes and initializers while walking the TFLite operators."""

    def __init__(self, model: TFModel):
        self.m = model
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.names: dict[int, str] = {}

    def name(self, idx: int) -> str:
        return self.names.setdefault(idx, f"t{idx}")

    def const(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def data(self, idx: int) -> np.ndarray:
        t = self.m.tensors[idx]
        if t.data is None:
            raise ValueError(f"tensor {t.name} is not a constant")
        return np.asarray(t.data, dtype=np.float32)

    def activation(self, op: TFOperator, pre: str) -> None:
        """Route ``pre`` to the operator's output through its fused activation."""
        out = self.name(op.outputs[0])
        code = int(op.options.FusedActivationFunction()) if hasattr(op.options, "FusedActivationFunction") else 0
        if code not in _ACTIVATIONS:
            raise ValueError(f"operator {op.index} ({op.opname}): fused activation {code} is not handled")
        bounds = _ACTIVATIONS[code]
        if bounds is None:
            self.nodes.append(helper.make_node("Identity", [pre], [out]))
        elif bounds[1] is None:
            self.nodes.append(helper.make_node("Relu", [pre], [out]))
        else:
            lo = self.const(f"{out}_lo", np.array(bounds[0], np.float32))
            hi = self.const(f"{out}_hi", np.array(bounds[1], np.float32))
            self.nodes.append(helper.make_node("Clip", [pre, lo, hi], [out]))

    def conv(self, op: TFOperator, depthwise: bool) -> None:
        x, w_idx, b_idx = op.inputs[:3]
        w = self.data(w_idx)
        o = op.options
        if depthwise:  # TFLite [1, kh, kw, C*mult] -> ONNX [C*mult, 1, kh, kw], group = C
            cin = self.m.tensors[x].shape[3]
            weight = w.transpose(3, 0, 1, 2)
            group = cin
        else:          # TFLite OHWI -> ONNX OIHW
            weight = w.transpose(0, 3, 1, 2)
            group = 1
        if o.DilationHFactor() != 1 or o.DilationWFactor() != 1:
            raise ValueError(f"operator {op.index}: dilation is not handled")
        pre = f"{self.name(op.outputs[0])}_pre"
        wn = self.const(f"w{op.index}", weight)
        bn = self.const(f"b{op.index}", self.data(b_idx))
        pad = "SAME_UPPER" if o.Padding() == 0 else "VALID"
        self.nodes.append(helper.make_node("Conv", [self.name(x), wn, bn], [pre], auto_pad=pad, group=group,
                                           kernel_shape=list(weight.shape[2:]),
                                           strides=[o.StrideH(), o.StrideW()]))
        self.activation(op, pre)

    def add(self, op: TFOperator) -> None:
        pre = f"{self.name(op.outputs[0])}_pre"
        self.nodes.append(helper.make_node("Add", [self.name(i) for i in op.inputs[:2]], [pre]))
        self.activation(op, pre)

    def pool(self, op: TFOperator) -> None:
        x = op.inputs[0]
        o = op.options
        _, h, w, _ = self.m.tensors[x].shape
        pre = f"{self.name(op.outputs[0])}_pre"
        if (o.FilterHeight(), o.FilterWidth()) == (h, w) and o.Padding() == 1:
            self.nodes.append(helper.make_node("GlobalAveragePool", [self.name(x)], [pre]))
        else:
            self.nodes.append(helper.make_node("AveragePool", [self.name(x)], [pre],
                                               kernel_shape=[o.FilterHeight(), o.FilterWidth()],
                                               strides=[o.StrideH(), o.StrideW()],
                                               auto_pad="SAME_UPPER" if o.Padding() == 0 else "VALID"))
        self.activation(op, pre)

    def reshape(self, op: TFOperator) -> None:
        shape = self.m.tensors[op.outputs[0]].shape
        if len(shape) != 2 or shape[0] != 1:
            raise ValueError(f"operator {op.index}: only a reshape to [1, n] is handled")
        self.nodes.append(helper.make_node("Flatten", [self.name(op.inputs[0])], [self.name(op.outputs[0])], axis=1))

    def fully_connected(self, op: TFOperator) -> None:
        x, w_idx, b_idx = op.inputs[:3]
        pre = f"{self.name(op.outputs[0])}_pre"
        wn = self.const(f"w{op.index}", self.data(w_idx))
        bn = self.const(f"b{op.index}", self.data(b_idx))
        self.nodes.append(helper.make_node("Gemm", [self.name(x), wn, bn], [pre], transB=1))
        self.activation(op, pre)


def float_onnx(tflite_path: str | Path) -> onnx.ModelProto:
    """The float ONNX (NCHW) twin of a float TFLite model with one NHWC image input."""
    m = read_tflite(tflite_path)
    b = _Builder(m)
    handlers = {"CONV_2D": lambda op: b.conv(op, False), "DEPTHWISE_CONV_2D": lambda op: b.conv(op, True),
                "ADD": b.add, "AVERAGE_POOL_2D": b.pool, "RESHAPE": b.reshape,
                "FULLY_CONNECTED": b.fully_connected}
    for op in m.operators:
        if op.opname not in handlers:
            raise ValueError(f"operator {op.index} ({op.opname}) is not handled by the ONNX twin builder")
        handlers[op.opname](op)
    (inp,), (out,) = m.inputs, m.outputs
    n, h, w, c = m.tensors[inp].shape
    out_shape = list(m.tensors[out].shape)
    graph = helper.make_graph(b.nodes, "twin", [helper.make_tensor_value_info(b.name(inp), TensorProto.FLOAT,
                                                                               [n, c, h, w])],
                              [helper.make_tensor_value_info(b.name(out), TensorProto.FLOAT, out_shape)],
                              initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hexnn-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def quantized_onnx(float_model: onnx.ModelProto, calibration_nhwc: np.ndarray, out_path: str | Path) -> Path:
    """Quantize with ``onnxruntime.quantization.quantize_static`` (QDQ, int8, per-channel) to ``out_path``."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    name = float_model.graph.input[0].name
    nchw = np.ascontiguousarray(np.asarray(calibration_nhwc, np.float32).transpose(0, 3, 1, 2))

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{name: x[None]} for x in nchw])

        def get_next(self):  # type: ignore[no-untyped-def]
            return next(self.it, None)

    out_path = Path(out_path)
    with tempfile.TemporaryDirectory() as tmp:
        fp = Path(tmp) / "float.onnx"
        onnx.save(float_model, fp)
        quantize_static(str(fp), str(out_path), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    return out_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("float_tflite")
    ap.add_argument("out")
    ap.add_argument("--calibration", default=None, help="NHWC float images .npy (default: 8 seeded random)")
    args = ap.parse_args(argv)
    model = float_onnx(args.float_tflite)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    calib = (np.load(args.calibration) if args.calibration else
             np.random.default_rng(0).uniform(-1, 1, (8, shape[2], shape[3], shape[1])).astype(np.float32))
    print(f"wrote {quantized_onnx(model, calib, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
