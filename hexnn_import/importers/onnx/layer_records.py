"""The ONNX importer's record of every quantized layer's source quantization (:mod:`hexnn_import.source_layers`).

QDQ (a float op between DequantizeLinear and QuantizeLinear, onnxruntime's
QDQ format) and QOperator (``QLinearConv``, ``QLinearAdd``, ``QGemm``,
``QLinearMatMul``, ``QLinearGlobalAveragePool``...) layers are recorded in
the same canonical form as TFLite's: NHWC shapes as the graph holds them,
int8 weights in TFLite layout (conv OHWI, depthwise ``[1, K_h, K_w, C]``,
fully connected ``[M, N]``), per-channel weight scales, int32 bias codes on
``input scale x weight scale`` and the explicit padding before the first row
and column. ``attrs["ref"]`` names the tensors that hold the layer's codes in
the ONNX model (a QDQ layer's DequantizeLinear inputs and QuantizeLinear
output), for per-layer agreement with onnxruntime. A layer whose data is not
per-tensor int8 / uint8 is recorded with the reason in ``notes``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hexnn_import.importers.onnx.layer_records_const import constant_operand, record_constant_binary
from hexnn_import.importers.onnx.layout import NHWC
from hexnn_import.importers.onnx.qparams import QParam, qparam_of
from hexnn_import.importers.onnx.reader import ONode, QConst
from hexnn_import.source_layers import LayerInfo, TensorQ

if TYPE_CHECKING:
    from hexnn_import.importers.onnx.graph_builder import OnnxGraphBuilder

#: ONNX op -> canonical kind; QDQ float ops and their QOperator forms
KINDS = {"Conv": "CONV_2D", "QLinearConv": "CONV_2D", "Gemm": "FULLY_CONNECTED", "QGemm": "FULLY_CONNECTED",
         "MatMul": "FULLY_CONNECTED", "QLinearMatMul": "FULLY_CONNECTED", "Add": "ADD", "QLinearAdd": "ADD",
         "GlobalAveragePool": "MEAN", "QLinearGlobalAveragePool": "MEAN", "MaxPool": "MAX_POOL_2D",
         "AveragePool": "AVERAGE_POOL_2D", "QLinearAveragePool": "AVERAGE_POOL_2D"}
#: per-tensor activations (one function of the 8-bit code), recorded with onnxruntime's arithmetic
ACTIVATION_KINDS = {"Sigmoid": "LOGISTIC", "QLinearSigmoid": "LOGISTIC", "Tanh": "TANH", "HardSigmoid": "HARD_SIGMOID",
                    "HardSwish": "HARD_SWISH", "LeakyRelu": "LEAKY_RELU", "QLinearLeakyRelu": "LEAKY_RELU"}
KINDS.update(ACTIVATION_KINDS)
#: QOperator ops: (input slots (data, scale, zero point)...), output (scale, zero point) slots
QOP_SLOTS = {"QLinearConv": (((0, 1, 2),), (6, 7)), "QLinearAdd": (((0, 1, 2), (3, 4, 5)), (6, 7)),
             "QGemm": (((0, 1, 2),), (7, 8)), "QLinearMatMul": (((0, 1, 2),), (6, 7)),
             "QLinearGlobalAveragePool": (((0, 1, 2),), (3, 4)), "QLinearAveragePool": (((0, 1, 2),), (3, 4)),
             "QLinearSigmoid": (((0, 1, 2),), (3, 4)), "QLinearLeakyRelu": (((0, 1, 2),), (3, 4))}
#: weight (codes, scale, zero point) and bias slots of the QOperator conv-likes
QOP_WEIGHTS = {"QLinearConv": ((3, 4, 5), 8), "QGemm": ((3, 4, 5), 6), "QLinearMatMul": ((3, 4, 5), None)}


class _Recorder:
    def __init__(self, imp: "OnnxGraphBuilder"):
        self.imp = imp
        self.producer = {o: n for n in imp.m.nodes for o in n.outputs if o}
        self.aliases: dict[str, tuple] = {}  # NHWC copies: name -> (data, min, max) refs
        self.readers: dict[str, list[ONode]] = {}
        for n in imp.m.nodes:
            for i in n.inputs:
                self.readers.setdefault(i, []).append(n)

    def graph_shape(self, name: str) -> tuple[int, ...]:
        ref = self.aliases[name][0] if name in self.aliases else self.imp.graph.tensor_map.get(name)
        if ref is None:
            return ()
        return tuple(self.imp.graph.node(ref.src_id).output_defs[ref.output_idx].shape)

    def nhwc_name(self, name: str) -> str:
        """``name``, or the name of its NHWC copy (a Transpose_8 the importer made for a convolution) when the
        graph holds it in another layout: ``<name>/NHWC``, whose graph refs the layer's ``attrs["refs"]`` keep
        (the graph's tensor map keeps source names only)."""
        imp = self.imp
        if not name or imp.tensors.is_const(name) or name not in imp.tensors.by_name or imp.tensors.perm_of(name) == NHWC:
            return name
        v = imp.tensors.relayouts.get((name, NHWC))
        if v is None or v.mn is None or v.mx is None:
            return name
        alias = f"{name}/NHWC"
        self.aliases[alias] = (v.data, v.mn, v.mx)
        return alias

    def tensor(self, name: str, qp: QParam | None) -> TensorQ:
        name = self.nhwc_name(name)
        shape = self.graph_shape(name)
        if qp is None:
            return TensorQ(-1, name, shape, self.imp.tensors.dtype(name) if name else "", None, None)
        return TensorQ(-1, name, shape, qp.dtype, float(qp.scale), int(qp.zero_point))

    def qdq_input(self, name: str) -> tuple[QParam | None, str]:
        """A float input's quantization and codes tensor: the DequantizeLinear writing it (through Identity)."""
        p = self.producer.get(name)
        while p is not None and p.op_type == "Identity":
            p = self.producer.get(p.inputs[0])
        if p is None or p.op_type != "DequantizeLinear":
            return None, ""
        return qparam_of(self.imp.m, p, 1, 2), p.inputs[0]

    def qdq_output(self, name: str) -> tuple[QParam | None, str]:
        """A float output's quantization and codes tensor: the QuantizeLinear reading it (through Identity)."""
        readers = self.readers.get(name, [])
        for r in readers:
            if r.op_type == "Identity":
                return self.qdq_output(r.outputs[0])
            if r.op_type == "QuantizeLinear":
                return qparam_of(self.imp.m, r, 1, 2), r.outputs[0]
        return None, ""


def _weights_of(qc: QConst | None, kind: str, node: ONode, n_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                               str] | None:
    """(TFLite-layout codes, scales, zero points, opname) of constant quantized weights, or None (also for
    per-channel scales on an axis that is not the output channels', and Gemm's alpha / beta / transA)."""
    if qc is None:
        return None
    if node.op_type in ("Gemm", "QGemm") and (float(node.attr("alpha", 1.0)) != 1.0 or int(node.attr("transA", 0))
                                               or float(node.attr("beta", 1.0)) != 1.0):
        return None
    out_axis = 0 if kind == "CONV_2D" or int(node.attr("transB", 0)) else 1
    if qc.axis is not None and np.asarray(qc.scale).size > 1 and qc.axis % qc.codes.ndim != out_axis:
        return None
    w = qc.codes
    scales = np.asarray(qc.scale, np.float64).reshape(-1)
    zps = np.asarray(qc.zero_point, np.int64).reshape(-1)
    if kind == "CONV_2D":
        if w.ndim != 4:
            return None
        group = int(node.attr("group", 1))
        if group == 1:
            return np.ascontiguousarray(w.transpose(0, 2, 3, 1)), scales, zps, "CONV_2D"
        if group == n_in and w.shape[1] == 1 and w.shape[0] == n_in:
            return np.ascontiguousarray(w.transpose(1, 2, 3, 0)), scales, zps, "DEPTHWISE_CONV_2D"
        return None
    if w.ndim != 2:
        return None
    trans_b = int(node.attr("transB", 0)) if node.op_type in ("Gemm", "QGemm") else 0
    return (np.ascontiguousarray(w if trans_b else w.T)), scales, zps, "FULLY_CONNECTED"


def _bias_codes(imp: "OnnxGraphBuilder", name: str, s_in: float, w_scales: np.ndarray, n_out: int,
                codes_given: bool = False) -> np.ndarray | None:
    """Bias codes on ``s_in x w_scale`` (exact when the file's own bias step is that, as quantizers write it);
    ``codes_given``: a QOperator's int32 bias, already codes on that step."""
    if not name:
        return np.zeros(n_out, np.int64)
    if codes_given:
        b = np.asarray(imp.tensors.const(name)) if imp.tensors.is_const(name) else None
        return None if b is None or b.size != n_out else b.astype(np.int64).reshape(-1)
    qc = imp.tensors.qconst(name)
    real = qc.real() if qc is not None else (np.asarray(imp.tensors.const(name), np.float64) if imp.tensors.is_const(name) else None)
    if real is None or real.size != n_out:
        return None
    step = s_in * np.broadcast_to(w_scales, (n_out,))
    codes = np.round(real.reshape(-1) / step)
    if np.any(np.abs(codes) > 2 ** 31 - 1):
        return None
    return codes.astype(np.int64)


def _geometry(layer: LayerInfo, node: ONode, k_hw: tuple[int, int]) -> None:
    strides = node.attr("strides") or [1, 1]
    dil = node.attr("dilations") or [1, 1]
    pads = [int(p) for p in (node.attr("pads") or [0, 0, 0, 0])]
    layer.stride = (int(strides[0]), int(strides[1]))
    layer.dilation = (int(dil[0]), int(dil[1]))
    auto = node.attr("auto_pad", "NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto in ("SAME_UPPER", "SAME_LOWER") and len(layer.x.shape) == 4 and len(layer.y.shape) == 4:
        totals = [max((o - 1) * s + (k - 1) * d + 1 - i, 0) for o, s, k, d, i in
                  zip(layer.y.shape[1:3], layer.stride, k_hw, layer.dilation, layer.x.shape[1:3])]
        before = [t // 2 if auto == "SAME_UPPER" else t - t // 2 for t in totals]
        pads = [before[0], before[1], totals[0] - before[0], totals[1] - before[1]]
    layer.pad_begin = (pads[0], pads[1])
    layer.attrs["pads"] = [int(p) for p in pads]


def _record(rec: _Recorder, node: ONode) -> LayerInfo | None:
    imp = rec.imp
    const = constant_operand(rec, node)
    if const is not None:
        return record_constant_binary(rec, node, *const)
    kind = KINDS.get(node.op_type)
    if kind is None or not node.outputs:
        return None
    if node.op_type in QOP_SLOTS:
        in_slots, (ys, yz) = QOP_SLOTS[node.op_type]
        ins = [rec.tensor(node.input(d), qparam_of(imp.m, node, s, z)) for d, s, z in in_slots]
        y = rec.tensor(node.outputs[0], qparam_of(imp.m, node, ys, yz))
        ref = {"inputs": [node.input(d) for d, _, _ in in_slots], "output": node.outputs[0]}
    else:
        acts = [node.inputs[0]] + ([node.input(1)] if kind == "ADD" else [])
        ins, codes = [], []
        for a in acts:
            qp, code = rec.qdq_input(a)
            ins.append(rec.tensor(a, qp))
            codes.append(code)
        qp, code_y = rec.qdq_output(node.outputs[0])
        y = rec.tensor(node.outputs[0], qp)
        ref = {"inputs": codes, "output": code_y}
    layer = LayerInfo(node.index, kind, ins, [y], source_op=node.op_type, attrs={"ref": ref})
    refs = {t.name: rec.aliases[t.name] for t in ins if t.name in rec.aliases}
    if refs:
        layer.attrs["refs"] = refs
    for t in ins + [y]:
        if t.scale is None:
            layer.notes.append(f"{t.name} is not a quantized tensor (no DequantizeLinear / QuantizeLinear pair)")
            return layer
    if kind in ("CONV_2D", "FULLY_CONNECTED"):
        _conv_like(rec, node, layer)
    elif kind in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
        kernel = node.attr("kernel_shape") or [0, 0]
        layer.attrs["filter"] = (int(kernel[0]), int(kernel[1]))
        _geometry(layer, node, layer.attrs["filter"])
        if any(layer.attrs["pads"]):
            layer.notes.append(f"pads {layer.attrs['pads']}")
    elif kind == "MEAN":
        layer.attrs["axes"], layer.attrs["keep_dims"] = (1, 2), True
    elif node.op_type in ACTIVATION_KINDS:  # elementwise: any layout; the function's own attributes
        layer.attrs["arithmetic"] = "onnxruntime"
        for key in ("alpha", "beta"):
            if node.attr(key) is not None:
                layer.attrs[key] = float(node.attr(key))
        return layer
    if kind != "FULLY_CONNECTED":
        for t in ins + [y]:
            base = t.name[:-len("/NHWC")] if t.name.endswith("/NHWC") else t.name
            if len(t.shape) == 4 and base == t.name and imp.tensors.perm_of(t.name) != NHWC and t.shape[1:3] != (1, 1):
                layer.notes.append(f"{t.name} is not held NHWC in the graph")
                break
    return layer


def _conv_like(rec: _Recorder, node: ONode, layer: LayerInfo) -> None:
    imp = rec.imp
    if node.op_type in QOP_WEIGHTS:
        (wd, ws, wz), b_slot = QOP_WEIGHTS[node.op_type]
        wname = node.input(wd)
        qc = None
        if imp.tensors.is_const(wname) and imp.tensors.is_const(node.input(ws)):
            zp = np.asarray(imp.tensors.const(node.input(wz))) if node.input(wz) else np.zeros(1, np.int64)
            axis = 0 if node.op_type == "QLinearConv" or int(node.attr("transB", 0)) else 1  # output channels
            qc = QConst(np.asarray(imp.tensors.const(wname)), np.asarray(imp.tensors.const(node.input(ws))), zp, axis)
        bname = node.input(b_slot) if b_slot is not None else ""
    else:
        wname = node.input(1)
        qc = imp.tensors.qconst(wname) if imp.tensors.is_const(wname) else None
        bname = node.input(2)
    n_in = layer.x.shape[-1] if layer.x.shape else 0
    got = _weights_of(qc, layer.opname, node, n_in)
    if got is None:
        layer.notes.append(f"weights {wname} are not constant int8 / uint8 codes of a supported layout")
        return
    w, scales, zps, layer.opname = got
    layer.weights, layer.w_dtype = w, str(w.dtype)
    layer.w_scales, layer.w_zero_points = scales, zps
    layer.w_axis = 3 if layer.opname == "DEPTHWISE_CONV_2D" else 0
    n_out = w.shape[3] if layer.opname == "DEPTHWISE_CONV_2D" else w.shape[0]
    bias = _bias_codes(imp, bname, float(layer.x.scale), scales, n_out,  # type: ignore[arg-type]
                       codes_given=node.op_type in QOP_WEIGHTS)
    if bias is None:
        layer.notes.append(f"bias {bname} is not constant on the input x weight step")
    else:
        layer.bias = bias
    if layer.opname != "FULLY_CONNECTED":
        _geometry(layer, node, (w.shape[1], w.shape[2]))
        pads = layer.attrs["pads"]
        # explicit pads are the window's start (pad_begin); the shape check uses them as they are
        layer.same_padding = any(pads)


def record_layers(imp: "OnnxGraphBuilder") -> list[LayerInfo]:
    """Every quantized layer of the imported model in model order (module doc)."""
    rec = _Recorder(imp)
    out = []
    for node in imp.m.nodes:
        try:
            layer = _record(rec, node)
        except (KeyError, ValueError, IndexError, TypeError) as exc:  # a malformed node: no record, named
            layer = LayerInfo(node.index, KINDS.get(node.op_type, node.op_type), [], [], source_op=node.op_type,
                              notes=[f"cannot read its quantization ({exc})"])
        if layer is not None:
            out.append(layer)
    return out
