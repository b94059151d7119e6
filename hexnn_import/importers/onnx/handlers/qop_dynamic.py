"""Integer products: ConvInteger, MatMulInteger, and dynamic quantization (DynamicQuantizeLinear).

onnxruntime's ``quantize_dynamic`` writes every quantized layer as

    x -> DynamicQuantizeLinear -> (xq, x_scale, x_zp)
    ConvInteger(xq, wq, x_zp, w_zp) -> Cast(float) -> Mul(., x_scale * w_scale) [-> Add bias]

i.e. "this float tensor times these int8 weights, computed on integers". The
planner (:func:`plan_dynamic`) recognizes the chain and the ConvInteger /
MatMulInteger handler emits it as one float-model layer: the float input's
quint8 value (its range computed at run time or calibrated, as hexagon_nn
float graphs do) times the exact weight codes, onto the Mul output's
range. The Cast, the scale Mul and the DynamicQuantizeLinear are absorbed.

A ConvInteger / MatMulInteger on its own reads int8/uint8 codes with zero
points and writes int32 sums: the codes become quint8 on a range of step 1
(scale 1, the given zero point), so QuantizedConv2d_8x8to32 /
QuantizedMatMul_8x8to32 / QuantizedDepthwiseConv2d_8x8to32 produce the exact
integer sums as their qint32 codes (SEMANTICS §3: one code is
``in_step * w_step = 1``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.importers.nodes.activation import relabel
from hexnn_import.importers.nodes.core import Range, node3, reshape_value
from hexnn_import.importers.nodes.elementwise import pair_refs
from hexnn_import.importers.nodes.matmul import MATMUL, MATMUL_REF, matmul_op
from hexnn_import.importers.onnx.common import check_data, const_input, need_const
from hexnn_import.importers.onnx.conv_layer import CONV_EMITS, conv_layer, geometry, pad_input, padding_plan, window_problem
from hexnn_import.importers.onnx.fusion_plan import FusionPlan
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op, onnx_planner
from hexnn_import.importers.onnx.layout import IDENTITY, NHWC, onnx4
from hexnn_import.importers.onnx.handlers.dense import dense
from hexnn_import.importers.onnx.reader import ONode, QConst
from hexnn_import.importers.onnx.weights import qconst_weights
from hexnn_import.importers.nodes.values import Value
from hexnn_import.importers.nodes.weights import dilate
from hexnn_import.ops.quant import scale_zp_to_range, step_zero

DYN_EMITS = CONV_EMITS + (MATMUL, MATMUL_REF, "QuantizedDepthwiseConv2d_8x8to32")


@dataclass
class DynLayer:
    """A recognized dynamic-quantization chain around one ConvInteger / MatMulInteger."""

    source: str  # the float tensor DynamicQuantizeLinear reads
    out: str  # the float tensor the rescale Mul writes
    w_scale: np.ndarray


def _producers(imp: OnnxImporter) -> dict[str, ONode]:
    return {o: n for n in imp.live for o in n.outputs if o}


def _only(imp: OnnxImporter, name: str) -> ONode | None:
    users = imp.tensors.consumers(name)
    return users[0] if len(users) == 1 and name not in imp.m.outputs else None


@onnx_planner
def plan_dynamic(imp: OnnxImporter, done: FusionPlan) -> FusionPlan:
    """The chains of the module doc: ``dynamic[integer node index] = DynLayer``; the rest absorbed."""
    part = FusionPlan()
    prod = _producers(imp)
    for node in imp.live:
        if node.op_type not in ("ConvInteger", "MatMulInteger"):
            continue
        dq = prod.get(node.inputs[0])
        if dq is None or dq.op_type != "DynamicQuantizeLinear" or node.input(2) not in ("", dq.outputs[2]):
            continue
        cast = _only(imp, node.outputs[0])
        if cast is None or cast.op_type != "Cast" or int(cast.attr("to", 0)) != 1:
            continue
        mul = _only(imp, cast.outputs[0])
        if mul is None or mul.op_type != "Mul":
            continue
        other = mul.inputs[1] if mul.inputs[0] == cast.outputs[0] else mul.inputs[0]
        smul = prod.get(other)
        if smul is None or smul.op_type != "Mul" or dq.outputs[1] not in smul.inputs:
            continue
        w_scale_name = smul.inputs[1] if smul.inputs[0] == dq.outputs[1] else smul.inputs[0]
        if not imp.tensors.is_const(w_scale_name) or not imp.tensors.is_const(node.inputs[1]) or _only(imp, other) is None:
            continue
        part.dynamic[node.index] = DynLayer(dq.inputs[0], mul.outputs[0],
                                            np.asarray(imp.tensors.const(w_scale_name), dtype=np.float64).reshape(-1))
        part.absorbed.update({cast.index, mul.index, smul.index})
    for dq in imp.live:
        if dq.op_type != "DynamicQuantizeLinear" or any(o in imp.m.outputs for o in dq.outputs):
            continue
        users = [u for o in dq.outputs if o for u in imp.tensors.consumers(o)]
        if users and all(u.index in part.absorbed or u.index in part.dynamic for u in users):
            part.absorbed.add(dq.index)
    return part


@onnx_op("DynamicQuantizeLinear", DYN_EMITS,
         lambda imp, node: "DynamicQuantizeLinear outside a ConvInteger / MatMulInteger -> Cast -> Mul chain")
def dynamic_quantize_linear(imp: OnnxImporter, node: ONode) -> None:
    """Only ever absorbed into a dynamic-quantization chain (the checker refuses it on its own)."""
    raise AssertionError("DynamicQuantizeLinear is only imported inside a recognized chain")


def _dyn_weights(imp: OnnxImporter, node: ONode, layer: DynLayer, axis: int) -> QConst:
    codes = imp.tensors.const(node.inputs[1])
    zp = const_input(imp, node, 3)
    zp = np.zeros(1, codes.dtype) if zp is None else np.asarray(zp).reshape(-1)
    return QConst(codes, layer.w_scale, zp, axis if layer.w_scale.size > 1 else None)


def _unit_range(dtype: str, zp: int) -> Range:
    """The range of codes read with scale 1 and zero point ``zp`` (exact integer products)."""
    return scale_zp_to_range(1.0, zp, dtype == "int8")


def _int_input(imp: OnnxImporter, node: ONode, perm) -> Value:  # type: ignore[no-untyped-def]
    """Input 0 as codes on the step-1 range of its zero point (input 2)."""
    name = node.inputs[0]
    zp = const_input(imp, node, 2)
    rng = _unit_range(imp.tensors.dtype(name), int(np.asarray(zp).reshape(-1)[0]) if zp is not None else 0)
    v = imp.tensors.value(name, perm)
    return v if v.range == rng else relabel(imp, v, rng, f"{name}/as_{node.label}")


def _check_integer(imp: OnnxImporter, node: ONode) -> str | None:
    """Inside a DynamicQuantizeLinear chain, or constant weights and zero points (per tensor, weights per
    channel when they fit one zero); MatMulInteger of rank 2; ConvInteger 2-D with group 1 or depthwise."""
    if node.index in imp.plan.dynamic:
        return None if node.op_type == "MatMulInteger" or len(imp.tensors.const(node.inputs[1]).shape) == 4 else \
            "ConvInteger over other than 2 spatial dimensions"
    why = check_data(imp, node) or need_const(imp, node, (1, 2, 3))
    if why:
        return why
    why = _check_zero_points(imp, node)
    if why:
        return why
    w = imp.tensors.const(node.inputs[1])
    if node.op_type == "MatMulInteger":
        return None if w.ndim == 2 and len(imp.tensors.shape(node.inputs[0])) <= 2 else "MatMulInteger of rank other than 2"
    x = imp.tensors.shape(node.inputs[0])
    if len(x) != 4 or w.ndim != 4:
        return "ConvInteger over other than 2 spatial dimensions"
    group = int(node.attr("group", 1))
    if not (group == 1 and w.shape[1] == x[1] or group == x[1] and w.shape[1] == 1 and w.shape[0] == x[1]):
        return f"weights {list(w.shape)} with group {group} (only group 1 and depthwise)"
    return window_problem(node, (x[2], x[3]), (w.shape[2], w.shape[3]))


@onnx_op(("ConvInteger", "MatMulInteger"), DYN_EMITS, _check_integer)
def integer_product(imp: OnnxImporter, node: ONode) -> None:
    """A dynamic-quantization layer (module doc), or exact int32 sums on their own."""
    layer = imp.plan.dynamic.get(node.index)
    if layer is not None:
        _dynamic_layer(imp, node, layer)
    elif node.op_type == "ConvInteger":
        _conv_integer(imp, node)
    else:
        _matmul_integer(imp, node)


def _dynamic_layer(imp: OnnxImporter, node: ONode, layer: DynLayer) -> None:
    out = layer.out
    if node.op_type == "ConvInteger":
        lw = qconst_weights(_dyn_weights(imp, node, layer, 0), 0, out)
        x = imp.tensors.value(layer.source, NHWC)
        y = conv_layer(imp, node, x, lw, np.zeros(lw.codes.shape[0]), out, imp.tensors.act_range(out))
        imp.tensors.finish(out, y, NHWC)
        return
    lw = qconst_weights(_dyn_weights(imp, node, layer, 1), 1, out)
    a_shape = imp.tensors.shape(layer.source)
    k = a_shape[-1]
    rows = int(np.prod(a_shape[:-1], dtype=np.int64)) if len(a_shape) > 1 else 1
    x = reshape_value(imp, imp.tensors.value(layer.source, IDENTITY), (1, 1, rows, k), f"{out}/rows")
    y = dense(imp, x, lw, lw.codes.T, np.zeros(lw.codes.shape[1]), out, rows, imp.tensors.act_range(out))
    imp.tensors.finish(out, reshape_value(imp, y, onnx4(imp.tensors.shape(out)), f"{out}/reshape"), IDENTITY)


def _weights_value(imp: OnnxImporter, node: ONode, codes: np.ndarray, axis: int) -> tuple[np.ndarray, Range]:
    """Weight codes as quint8 on a step-1 range; per-channel zero points are moved onto one common zero.

    ``w - zp[c]`` is what the sum reads; the codes ``w - zp[c] + Z`` with one
    zero ``Z`` hold the same differences whenever they fit in 0..255.
    """
    zp = const_input(imp, node, 3)
    zp = np.zeros(1, np.int64) if zp is None else np.asarray(zp).astype(np.int64).reshape(-1)
    signed = codes.dtype == np.int8
    q = codes.astype(np.int64) + (128 if signed else 0)
    z = zp + (128 if signed else 0)
    if z.size > 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        diff = q - z.reshape(shape)
        common = int(-diff.min()) if diff.size else 0
        if diff.max() + common > 255:
            raise ValueError("per-channel weight zero points whose differences do not fit one 8-bit zero")
        q, z = diff + common, np.array([common])
    return q.astype(np.uint8), _unit_range("uint8", int(z[0]))


def _check_zero_points(imp: OnnxImporter, node: ONode) -> str | None:
    """Input zero point per tensor; weight zero points per tensor or per output channel that fit one zero."""
    z = const_input(imp, node, 2)
    if z is not None and np.asarray(z).size != 1:
        return "per-channel input zero points"
    try:
        _weights_value(imp, node, imp.tensors.const(node.inputs[1]), 0 if node.op_type == "ConvInteger" else 1)
    except ValueError as exc:
        return str(exc)
    return None


def _conv_integer(imp: OnnxImporter, node: ONode) -> None:
    """ConvInteger: exact sums as qint32 codes (step 1)."""
    out = node.outputs[0]
    x = _int_input(imp, node, NHWC)
    w, w_rng = _weights_value(imp, node, imp.tensors.const(node.inputs[1]), 0)
    o, _, kh, kw = w.shape
    g = geometry(node, (x.shape[1], x.shape[2]), (kh, kw))
    shape = imp.tensors.out_graph_shape(out, NHWC)
    mode, used = padding_plan((x.shape[1], x.shape[2]), (shape[1], shape[2]), g)
    x = pad_input(imp, x, used, 0.0, out)
    depthwise = int(node.attr("group", 1)) != 1
    hwio = w.transpose(2, 3, 0, 1) if depthwise else w.transpose(2, 3, 1, 0)
    hwio = dilate(np.ascontiguousarray(hwio), step_zero(*w_rng)[1], *g.dilations)
    gr = imp.graph
    refs = [x.data, gr.const_ref(hwio, f"{out}/weights"), x.mn, x.mx, *imp.range_consts(w_rng, f"{out}/weights"),
            gr.shape_ref((1, g.strides[0], g.strides[1], 1), f"{out}/stride")]
    op = "QuantizedDepthwiseConv2d_8x8to32" if depthwise else "QuantizedConv2d_8x8to32"
    acc = node3(imp, op, refs, shape, out, None, mode, etype="qint32")  # type: ignore[arg-type]
    imp.tensors.bind(out, acc, NHWC)


def _matmul_integer(imp: OnnxImporter, node: ONode) -> None:
    """MatMulInteger (2-D): QuantizedMatMul_8x8to32 (its Const B; _ref for the shapes op_matmul.c's assembly
    misreads, nodes.matmul.matmul_op), exact sums as qint32 codes (step 1)."""
    out = node.outputs[0]
    a = _int_input(imp, node, IDENTITY)
    w, w_rng = _weights_value(imp, node, imp.tensors.const(node.inputs[1]), 1)
    b = Value(imp.graph.const_ref(w.reshape(1, 1, *w.shape), f"{out}/b"), (1, 1, *w.shape), "quint8",
              *imp.range_consts(w_rng, f"{out}/b"), w_rng)
    acc = node3(imp, matmul_op(imp, b), pair_refs(a, b), (1, 1, a.shape[2], w.shape[1]), out, None,
                etype="qint32")
    imp.tensors.bind(out, acc, IDENTITY)
