"""The ONNX twin of a TFLite CNN, quantized by onnxruntime: the reference for bench/engine_speed.py and
bench/speed_real.py.

    python bench/onnx_twin.py MODEL.tflite OUT.onnx [--calibration X.npy] [--format QDQ|QOperator]
                              [--dynamic-batch]

:func:`float_onnx` rebuilds the TFLite model's graph with onnx.helper as a
float NCHW graph: ``Conv`` (``auto_pad=SAME_UPPER``: TFLite's SAME puts the
odd padding pixel after, as SAME_UPPER does), grouped ``Conv`` for depthwise
(any depth multiplier), ``Add``, ``GlobalAveragePool`` / ``AveragePool``
(for AVERAGE_POOL_2D and for MEAN over height and width), ``MaxPool``,
``Flatten`` / ``Reshape`` (through NHWC order when a 4-D tensor is
reshaped; the target shape is the output tensor's, so keras's
SHAPE -> STRIDED_SLICE -> PACK shape computation is skipped), ``Gemm``
(``transB=1``), ``Softmax``, ``Pad`` and ``Clip(0, 6)`` / ``Relu`` for
fused or standalone activations.

The model may be float or int8 (the committed real models are int8 only, so
the speed bench builds the twin from the int8 file):

- int8 / uint8 weights are dequantized with their own per-channel or
  per-tensor scales and zero points (``(q - zero_point) * scale`` along the
  tensor's quantized axis);
- int32 biases become ``q * input_scale * weight_scale`` (per output channel
  when the weights are per-channel), the scale TFLite's kernels give them;
- weights produced by a DEQUANTIZE of a constant (float16 or int8 weights of
  a float model) are folded into constants;
- the graph runs on real values: an int8 input / output stands for
  ``(q - zero_point) * scale``, so the twin's input is the dequantized image
  and its output the dequantized result; a float-I/O int8 model's input
  QUANTIZE and output DEQUANTIZE (and any requantizing QUANTIZE inside)
  become ``Identity``.

``dynamic_batch=True`` names the batch dimension ``N`` on the graph's input
and output, so one twin runs any batch. :func:`quantized_onnx` then
quantizes the float twin with ``onnxruntime.quantization.quantize_static``
(QDQ or QOperator, per-channel, calibrated on the given NHWC images), which is
what onnxruntime users run. Only the builtins a MobileNet-style model uses are
handled; anything else is an error naming the operator.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.importers.tflite.reader import TFModel, TFOperator, TFTensor, read_tflite

OPSET = 13
#: TFLite fused activation (ActivationFunctionType) -> clip bounds (None: no activation).
_ACTIVATIONS = {0: None, 1: (0.0, None), 3: (0.0, 6.0)}
#: The symbolic batch dimension of a dynamic-batch twin.
BATCH_DIM = "N"


def dequantize(t: TFTensor, data: np.ndarray | None = None) -> np.ndarray:
    """The real values of tensor ``t``'s constant data (float data as float32; quantized data
    ``(q - zero_point) * scale`` with per-channel parameters along ``t.quant.axis``)."""
    arr = np.asarray(t.data if data is None else data)
    if arr.dtype.kind == "f":
        return arr.astype(np.float32)
    if t.quant is None or t.quant.scale.size == 0:
        raise ValueError(f"tensor {t.name} ({t.dtype}) has no quantization parameters to dequantize it")
    scale = np.asarray(t.quant.scale, np.float64)
    zp = np.asarray(t.quant.zero_point, np.float64)
    if zp.size == 0:
        zp = np.zeros(1)
    if scale.size > 1:
        shape = [1] * arr.ndim
        shape[t.quant.axis] = scale.size
        scale = scale.reshape(shape)
        zp = (zp if zp.size == scale.size else np.broadcast_to(zp, (scale.size,))).reshape(shape)
    return ((arr.astype(np.float64) - zp) * scale).astype(np.float32)


class _Builder:
    """Accumulates ONNX nodes and initializers while walking the TFLite operators."""

    def __init__(self, model: TFModel):
        self.m = model
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.names: dict[int, str] = {}
        self.folded: dict[int, np.ndarray] = {}  # DEQUANTIZE outputs of constants: tensor -> float values

    def name(self, idx: int) -> str:
        return self.names.setdefault(idx, f"t{idx}")

    def const(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def is_const(self, idx: int) -> bool:
        return idx in self.folded or self.m.tensors[idx].data is not None

    def data(self, idx: int) -> np.ndarray:
        """The real (float) values of a constant tensor (dequantized when quantized)."""
        if idx in self.folded:
            return self.folded[idx]
        t = self.m.tensors[idx]
        if t.data is None:
            raise ValueError(f"tensor {t.name} is not a constant")
        return dequantize(t)

    def raw(self, idx: int) -> np.ndarray:
        t = self.m.tensors[idx]
        if t.data is None:
            raise ValueError(f"tensor {t.name} is not a constant")
        return np.asarray(t.data)

    def bias(self, b_idx: int, x_idx: int, w_idx: int, channels: int) -> np.ndarray:
        """A bias as real values: float as is, int32 times input_scale * weight_scale (per channel)."""
        if b_idx < 0:
            return np.zeros(channels, np.float32)
        t = self.m.tensors[b_idx]
        if t.data is None:
            raise ValueError(f"bias {t.name} is not a constant")
        q = np.asarray(t.data)
        if q.dtype.kind == "f":
            return q.astype(np.float32)
        x_t, w_t = self.m.tensors[x_idx], self.m.tensors[w_idx]
        if x_t.quant is None or w_t.quant is None:
            raise ValueError(f"integer bias {t.name}: its input or weights carry no scale")
        scale = float(x_t.quant.scale[0]) * np.asarray(w_t.quant.scale, np.float64)
        return (q.astype(np.float64) * scale).astype(np.float32)

    def ndim(self, idx: int) -> int:
        return len(self.m.tensors[idx].shape)

    def emit(self, op_type: str, inputs: list[str], outputs: list[str], **attrs) -> None:
        self.nodes.append(helper.make_node(op_type, inputs, outputs, **attrs))

    def activation(self, op: TFOperator, pre: str, code: int | None = None) -> None:
        """Route ``pre`` to the operator's output through its fused activation (or ``code``)."""
        out = self.name(op.outputs[0])
        if code is None:
            opts = op.options
            code = int(opts.FusedActivationFunction()) if hasattr(opts, "FusedActivationFunction") else 0
        if code not in _ACTIVATIONS:
            raise ValueError(f"operator {op.index} ({op.opname}): fused activation {code} is not handled")
        bounds = _ACTIVATIONS[code]
        if bounds is None:
            self.emit("Identity", [pre], [out])
        elif bounds[1] is None:
            self.emit("Relu", [pre], [out])
        else:
            lo = self.const(f"{out}_lo", np.array(bounds[0], np.float32))
            hi = self.const(f"{out}_hi", np.array(bounds[1], np.float32))
            self.emit("Clip", [pre, lo, hi], [out])

    def conv(self, op: TFOperator, depthwise: bool) -> None:
        x, w_idx = op.inputs[:2]
        b_idx = op.inputs[2] if len(op.inputs) > 2 else -1
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
        bn = self.const(f"b{op.index}", self.bias(b_idx, x, w_idx, weight.shape[0]))
        pad = "SAME_UPPER" if o.Padding() == 0 else "VALID"
        self.emit("Conv", [self.name(x), wn, bn], [pre], auto_pad=pad, group=group,
                  kernel_shape=list(weight.shape[2:]), strides=[o.StrideH(), o.StrideW()])
        self.activation(op, pre)

    def add(self, op: TFOperator) -> None:
        pre = f"{self.name(op.outputs[0])}_pre"
        ins = []
        for i in op.inputs[:2]:
            ins.append(self.const(f"c{op.index}_{i}", self.data(i)) if self.is_const(i) else self.name(i))
        self.emit("Add", ins, [pre])
        self.activation(op, pre)

    def pool(self, op: TFOperator) -> None:
        x = op.inputs[0]
        o = op.options
        _, h, w, _ = self.m.tensors[x].shape
        pre = f"{self.name(op.outputs[0])}_pre"
        if (o.FilterHeight(), o.FilterWidth()) == (h, w) and o.Padding() == 1:
            self.emit("GlobalAveragePool", [self.name(x)], [pre])
        else:
            self.emit("AveragePool", [self.name(x)], [pre], kernel_shape=[o.FilterHeight(), o.FilterWidth()],
                      strides=[o.StrideH(), o.StrideW()], auto_pad="SAME_UPPER" if o.Padding() == 0 else "VALID")
        self.activation(op, pre)

    def mean(self, op: TFOperator) -> None:
        """MEAN over height and width of an NHWC tensor: GlobalAveragePool (+ Flatten without keep_dims)."""
        x, ax = op.inputs[:2]
        axes = sorted(int(a) % 4 for a in self.raw(ax).reshape(-1))
        if self.ndim(x) != 4 or axes != [1, 2]:
            raise ValueError(f"operator {op.index} (MEAN): only a mean over height and width of a 4-D tensor is "
                             f"handled (axes {axes})")
        out = self.name(op.outputs[0])
        keep = bool(op.options.KeepDims()) if op.options is not None else False
        if keep:
            self.emit("GlobalAveragePool", [self.name(x)], [out])
        else:
            self.emit("GlobalAveragePool", [self.name(x)], [f"{out}_pool"])
            self.emit("Flatten", [f"{out}_pool"], [out], axis=1)

    def _as_nhwc_2d(self, idx: int, tag: str) -> str:
        """A 4-D (NCHW in the twin) tensor flattened in TFLite's NHWC order to [batch, rest]."""
        t = self.m.tensors[idx]
        if len(t.shape) != 4:
            return self.name(idx)
        if t.shape[1] == 1 and t.shape[2] == 1:  # 1x1 spatial: NCHW and NHWC flatten alike
            self.emit("Flatten", [self.name(idx)], [f"{tag}_flat"], axis=1)
        else:
            self.emit("Transpose", [self.name(idx)], [f"{tag}_nhwc"], perm=[0, 2, 3, 1])
            self.emit("Flatten", [f"{tag}_nhwc"], [f"{tag}_flat"], axis=1)
        return f"{tag}_flat"

    def reshape(self, op: TFOperator) -> None:
        x = op.inputs[0]
        out_t = self.m.tensors[op.outputs[0]]
        out = self.name(op.outputs[0])
        shape = list(out_t.shape)
        if len(shape) == 2:  # to [batch, n]: 4-D through NHWC order, 2-D as is, others flattened
            if self.ndim(x) == 4:
                self.emit("Identity", [self._as_nhwc_2d(x, f"r{op.index}")], [out])
            elif self.ndim(x) == 2:
                self.emit("Identity", [self.name(x)], [out])
            else:
                self.emit("Flatten", [self.name(x)], [out], axis=1)
            return
        src = self.name(x)
        if self.ndim(x) == 4:
            self.emit("Transpose", [src], [f"r{op.index}_nhwc"], perm=[0, 2, 3, 1])
            src = f"r{op.index}_nhwc"
        target = self.const(f"r{op.index}_shape", np.array([-1] + shape[1:], np.int64))
        if len(shape) == 4:
            self.emit("Reshape", [src, target], [f"r{op.index}_nhwc_out"])
            self.emit("Transpose", [f"r{op.index}_nhwc_out"], [out], perm=[0, 3, 1, 2])
        else:
            self.emit("Reshape", [src, target], [out])

    def fully_connected(self, op: TFOperator) -> None:
        x, w_idx = op.inputs[:2]
        b_idx = op.inputs[2] if len(op.inputs) > 2 else -1
        w = self.data(w_idx)
        if op.options is not None and op.options.KeepNumDims() and self.ndim(x) != 2:
            raise ValueError(f"operator {op.index} (FULLY_CONNECTED): keep_num_dims on a {self.ndim(x)}-D input "
                             f"is not handled")
        pre = f"{self.name(op.outputs[0])}_pre"
        src = self._as_nhwc_2d(x, f"fc{op.index}")
        wn = self.const(f"w{op.index}", w)
        bn = self.const(f"b{op.index}", self.bias(b_idx, x, w_idx, w.shape[0]))
        self.emit("Gemm", [src, wn, bn], [pre], transB=1)
        self.activation(op, pre)

    def softmax(self, op: TFOperator) -> None:
        x = op.inputs[0]
        beta = float(op.options.Beta()) if op.options is not None else 1.0
        src = self.name(x)
        if beta != 1.0:
            self.emit("Mul", [src, self.const(f"beta{op.index}", np.array(beta, np.float32))], [f"s{op.index}_b"])
            src = f"s{op.index}_b"
        axis = 1 if self.ndim(x) == 4 else -1  # TFLite: the last (channel) axis; NCHW: axis 1
        self.emit("Softmax", [src], [self.name(op.outputs[0])], axis=axis)

    def pad(self, op: TFOperator) -> None:
        x, p = op.inputs[:2]
        pads = self.raw(p).reshape(-1, 2).astype(np.int64)  # NHWC [[before, after] x 4]
        if len(pads) == 4:
            pads = pads[[0, 3, 1, 2]]  # -> NCHW
        onnx_pads = np.concatenate([pads[:, 0], pads[:, 1]])
        # an int8 PAD pads with the zero point, i.e. the real value 0
        self.emit("Pad", [self.name(x), self.const(f"pads{op.index}", onnx_pads)], [self.name(op.outputs[0])],
                  mode="constant")

    def max_pool(self, op: TFOperator) -> None:
        o = op.options
        pre = f"{self.name(op.outputs[0])}_pre"
        self.emit("MaxPool", [self.name(op.inputs[0])], [pre], kernel_shape=[o.FilterHeight(), o.FilterWidth()],
                  strides=[o.StrideH(), o.StrideW()], auto_pad="SAME_UPPER" if o.Padding() == 0 else "VALID")
        self.activation(op, pre)

    def identity(self, op: TFOperator) -> None:
        self.emit("Identity", [self.name(op.inputs[0])], [self.name(op.outputs[0])])

    def dequantize_op(self, op: TFOperator) -> None:
        src = op.inputs[0]
        if self.m.tensors[src].data is not None:  # weights stored as float16 / int8: fold
            self.folded[op.outputs[0]] = dequantize(self.m.tensors[src])
        else:
            self.identity(op)

    def relu(self, op: TFOperator, code: int) -> None:
        self.activation(op, self.name(op.inputs[0]), code)


def _shape_only_ops(m: TFModel) -> set[int]:
    """Operators computing only a RESHAPE's target shape (keras's SHAPE -> STRIDED_SLICE -> PACK for
    Flatten): skipped, since the twin takes every RESHAPE's shape from its output tensor."""
    consumers: dict[int, list[tuple[TFOperator, int]]] = {}
    for op in m.operators:
        for slot, i in enumerate(op.inputs):
            if i >= 0:
                consumers.setdefault(i, []).append((op, slot))
    outputs = set(m.outputs)
    skipped: set[int] = set()
    for op in reversed(m.operators):
        if op.opname not in ("SHAPE", "STRIDED_SLICE", "PACK", "CONCATENATION", "GATHER", "CAST"):
            continue
        if all(o not in outputs and o in consumers and
               all((c.opname == "RESHAPE" and slot == 1) or c.index in skipped for c, slot in consumers[o])
               for o in op.outputs):
            skipped.add(op.index)
    return skipped


def float_onnx(tflite_path: str | Path, dynamic_batch: bool = False) -> onnx.ModelProto:
    """The float ONNX (NCHW) twin of a float or int8 TFLite model with one NHWC image input
    (module doc); ``dynamic_batch`` makes the batch dimension symbolic."""
    m = read_tflite(tflite_path)
    b = _Builder(m)
    handlers = {"CONV_2D": lambda op: b.conv(op, False), "DEPTHWISE_CONV_2D": lambda op: b.conv(op, True),
                "ADD": b.add, "AVERAGE_POOL_2D": b.pool, "MEAN": b.mean, "RESHAPE": b.reshape,
                "FULLY_CONNECTED": b.fully_connected, "SOFTMAX": b.softmax, "PAD": b.pad,
                "QUANTIZE": b.identity, "DEQUANTIZE": b.dequantize_op,
                "RELU": lambda op: b.relu(op, 1), "RELU6": lambda op: b.relu(op, 3), "MAX_POOL_2D": b.max_pool}
    skipped = _shape_only_ops(m)
    for op in m.operators:
        if op.index in skipped:
            continue
        if op.opname not in handlers:
            raise ValueError(f"operator {op.index} ({op.opname}) is not handled by the ONNX twin builder")
        handlers[op.opname](op)
    (inp,), (out,) = m.inputs, m.outputs
    n, h, w, c = m.tensors[inp].shape
    batch: int | str = BATCH_DIM if dynamic_batch else n
    out_shape: list[int | str] = list(m.tensors[out].shape)
    if len(out_shape) == 4:
        out_shape = [out_shape[0], out_shape[3], out_shape[1], out_shape[2]]
    if dynamic_batch:
        out_shape[0] = BATCH_DIM
    graph = helper.make_graph(b.nodes, "twin", [helper.make_tensor_value_info(b.name(inp), TensorProto.FLOAT,
                                                                               [batch, c, h, w])],
                              [helper.make_tensor_value_info(b.name(out), TensorProto.FLOAT, out_shape)],
                              initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hexnn-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def quantized_onnx(float_model: onnx.ModelProto, calibration_nhwc: np.ndarray, out_path: str | Path,
                   quant_format: str = "QDQ", explicit_int8: bool = True, u8s8: bool = False) -> Path:
    """Quantize with ``onnxruntime.quantization.quantize_static`` (per-channel) to ``out_path``.

    ``quant_format`` is ``"QDQ"`` or ``"QOperator"``. ``explicit_int8`` asks
    for int8 activations and weights by name (bench/engine_speed.py);
    ``False`` leaves every setting but ``per_channel=True`` and the format
    at onnxruntime's defaults (bench/speed_real.py). Calibration feeds one
    image at a time. ``u8s8`` asks for uint8 activations and int8 weights, the combination
    onnxruntime's quantization guide recommends on x86-64 (its QOperator kernels with int8 activations
    are several times slower there, and onnxruntime says so when quantizing).
    """
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    name = float_model.graph.input[0].name
    nchw = np.ascontiguousarray(np.asarray(calibration_nhwc, np.float32).transpose(0, 3, 1, 2))

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{name: x[None]} for x in nchw])

        def get_next(self):  # type: ignore[no-untyped-def]
            return next(self.it, None)

    fmt = {"QDQ": QuantFormat.QDQ, "QOperator": QuantFormat.QOperator}[quant_format]
    kwargs = {"activation_type": QuantType.QInt8, "weight_type": QuantType.QInt8} if explicit_int8 else {}
    if u8s8:
        kwargs = {"activation_type": QuantType.QUInt8, "weight_type": QuantType.QInt8}
    out_path = Path(out_path)
    with tempfile.TemporaryDirectory() as tmp:
        fp = Path(tmp) / "float.onnx"
        onnx.save(float_model, fp)
        quantize_static(str(fp), str(out_path), Reader(), quant_format=fmt, per_channel=True, **kwargs)
    return out_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tflite", help="float or int8 TFLite model")
    ap.add_argument("out")
    ap.add_argument("--calibration", default=None, help="NHWC float images .npy (default: 8 seeded random)")
    ap.add_argument("--format", choices=("QDQ", "QOperator"), default="QDQ")
    ap.add_argument("--dynamic-batch", action="store_true")
    args = ap.parse_args(argv)
    model = float_onnx(args.tflite, dynamic_batch=args.dynamic_batch)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    calib = (np.load(args.calibration) if args.calibration else
             np.random.default_rng(0).uniform(-1, 1, (8, shape[2], shape[3], shape[1])).astype(np.float32))
    print(f"wrote {quantized_onnx(model, calib, args.out, args.format)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
