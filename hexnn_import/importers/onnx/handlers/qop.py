"""QOperator ops: QLinearConv, QLinearMatMul and the ``com.microsoft`` QLinear ops and QGemm.

Each op reads its inputs as the codes on the ranges it declares
(onnx.handlers.qdq.qinput) and writes onto the output range it declares, with the
same emitters as the float ops: a QLinearConv is a Supernode, QLinearAdd a
QuantizedAdd_8p8to8, QLinearGlobalAveragePool a QuantizedMean_8 straight
onto the output range. Weights are the int8/uint8 codes themselves
(onnx.weights); int32 biases are real values on ``x_scale * w_scale``.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.core import requantize_to, reshape_value
from hexnn_import.importers.nodes import lut
from hexnn_import.importers.nodes.activation import emit_softmax
from hexnn_import.importers.nodes.elementwise import emit_add, emit_mul
from hexnn_import.importers.nodes.movement import concat
from hexnn_import.importers.nodes.reduce import emit_mean
from hexnn_import.importers.onnx.common import check_data, const_input, need_const
from hexnn_import.importers.onnx.conv_layer import CONV_EMITS, conv_layer, window_problem
from hexnn_import.importers.onnx.importer import MS_DOMAIN, OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import IDENTITY, NHWC, axis4, graph_axis, onnx4
from hexnn_import.importers.nodes.lut import LUT_EMITS, emit_lut
from hexnn_import.importers.onnx.handlers.binary import common_perm
from hexnn_import.importers.onnx.handlers.dense import dense
from hexnn_import.importers.onnx.handlers.pool import POOL_EMITS, check_pool, pool
from hexnn_import.importers.onnx.handlers.qdq import check_qparams, declared, qinput
from hexnn_import.importers.onnx.reader import ONode, QConst
from hexnn_import.importers.onnx.weights import qconst_weights

QOP_EMITS = CONV_EMITS + ("QuantizedAdd_8p8to8", "QuantizedMul_8x8to32", "QuantizedConcat_8", "QuantizedMean_8",
                          "QuantizedSigmoid_8", "QuantizedTanh_8", "QuantizedPRelu_8_V2", "QuantizedSoftmax_8",
                          "QuantizedAvgPool_8", "QuantizedSlice_8") + LUT_EMITS


def const_codes(imp: OnnxImporter, node: ONode, pos: int, s: int, z: int, axis: int) -> QConst:
    """Constant weight codes with their (per-tensor or per-axis) scale and zero point."""
    codes = imp.tensors.const(node.inputs[pos])
    scale = np.asarray(imp.tensors.const(node.inputs[s]), dtype=np.float64).reshape(-1)
    zp = const_input(imp, node, z)
    zp = np.zeros(1, codes.dtype) if zp is None else np.asarray(zp).reshape(-1)
    return QConst(codes, scale, zp, axis if scale.size > 1 else None)


def int_bias(imp: OnnxImporter, node: ONode, pos: int, x_scale: float, w_scale: np.ndarray, n: int) -> np.ndarray:
    """An int32 bias input in real units (scale ``x_scale * w_scale``, zero point 0); zeros when absent."""
    b = const_input(imp, node, pos)
    if b is None:
        return np.zeros(n)
    return np.asarray(b, dtype=np.float64).reshape(-1) * x_scale * np.broadcast_to(w_scale, (n,))


def _check_weights(imp: OnnxImporter, node: ONode, w: int, s: int, z: int) -> str | None:
    why = need_const(imp, node, (w, s, z))
    if why:
        return why
    if imp.tensors.const(node.inputs[w]).dtype not in (np.int8, np.uint8):
        return f"weights of type {imp.tensors.const(node.inputs[w]).dtype}"
    scale = np.asarray(imp.tensors.const(node.inputs[s]))
    return None if np.all(scale > 0) and np.all(np.isfinite(scale)) else "non-positive weight scale"


def _check_qconv(imp: OnnxImporter, node: ONode) -> str | None:
    """A 2-D convolution: constant weights matching the channels and group, a constant bias, valid scales and
    zero points."""
    why = (check_data(imp, node) or check_qparams(imp, node, ((1, 2), (6, 7))) or _check_weights(imp, node, 3, 4, 5)
           or need_const(imp, node, (8,)))
    if why:
        return why
    x, w = imp.tensors.shape(node.inputs[0]), imp.tensors.const(node.inputs[3]).shape
    if len(x) != 4 or len(w) != 4:
        return "convolution over other than 2 spatial dimensions"
    group = int(node.attr("group", 1))
    if group < 1 or w[1] * group != x[1]:
        return f"weights {list(w)} do not match {x[1]} channels in {group} groups"
    return window_problem(node, (x[2], x[3]), (w[2], w[3]))


@onnx_op("QLinearConv", QOP_EMITS, _check_qconv)
def qlinear_conv(imp: OnnxImporter, node: ONode) -> None:
    """QLinearConv: the codes as weights, int32 bias on x_scale * w_scale, onto y's range."""
    out = node.outputs[0]
    x = qinput(imp, node, 0, 1, 2, NHWC)
    qc = const_codes(imp, node, 3, 4, 5, 0)
    lw = qconst_weights(qc, 0, out)
    for n in lw.notes:
        imp.note(n)
    xs = declared(imp, node, 1, 2).scale
    bias = int_bias(imp, node, 8, xs, qc.scale, qc.codes.shape[0])
    y = conv_layer(imp, node, x, lw, bias, out, declared(imp, node, 6, 7).range)
    imp.tensors.finish(out, y, NHWC)


def _matmul_like(imp: OnnxImporter, node: ONode, a_pos: tuple[int, int, int], b_pos: tuple[int, int, int],
                 trans_a: bool, trans_b: bool, bias: np.ndarray | None, out_range, alpha: float = 1.0) -> None:  # type: ignore[no-untyped-def]
    """``A @ B (+ bias)`` with constant quantized B, as a 1x1 conv over the rows of A."""
    out = node.outputs[0]
    a_shape = imp.tensors.shape(node.inputs[a_pos[0]])
    x = qinput(imp, node, *a_pos, perm=(0, 1, 3, 2) if trans_a else IDENTITY)
    k = a_shape[-2] if trans_a else a_shape[-1]
    rows = int(x.shape[0] * x.shape[1] * x.shape[2] * x.shape[3]) // k
    x = reshape_value(imp, x, (1, 1, rows, k), f"{out}/rows")
    qc = const_codes(imp, node, *b_pos, axis=0 if trans_b else 1)
    qc = QConst(qc.codes, qc.scale * alpha, qc.zero_point, qc.axis) if alpha > 0 else qc
    lw = qconst_weights(qc, 0 if trans_b else 1, out, 1.0 if alpha > 0 else alpha)
    codes = lw.codes if trans_b else lw.codes.T
    b = np.zeros(codes.shape[0]) if bias is None else bias
    y = dense(imp, x, lw, codes, b, out, rows, out_range)
    imp.tensors.finish(out, reshape_value(imp, y, onnx4(imp.tensors.shape(out)), f"{out}/reshape"), IDENTITY)


def _check_qmatmul(imp: OnnxImporter, node: ONode) -> str | None:
    """A constant rank-2 B, valid scales and zero points."""
    why = check_data(imp, node) or check_qparams(imp, node, ((1, 2), (6, 7))) or _check_weights(imp, node, 3, 4, 5)
    if why:
        return why
    return None if len(imp.tensors.const(node.inputs[3]).shape) == 2 else "B of rank other than 2"


@onnx_op("QLinearMatMul", QOP_EMITS, _check_qmatmul)
def qlinear_matmul(imp: OnnxImporter, node: ONode) -> None:
    """QLinearMatMul with constant B (per-column scales allowed) onto y's range."""
    _matmul_like(imp, node, (0, 1, 2), (3, 4, 5), False, False, None, declared(imp, node, 6, 7).range)


def _check_qgemm(imp: OnnxImporter, node: ONode) -> str | None:
    """A rank-2 A, a constant B, a constant C (scalar or one per column); no y_scale: a float output."""
    pairs = ((1, 2), (7, 8)) if node.input(7) else ((1, 2),)  # no y_scale: a float output
    why = (check_data(imp, node) or check_qparams(imp, node, pairs) or _check_weights(imp, node, 3, 4, 5)
           or need_const(imp, node, (6,)))
    if why:
        return why
    if len(imp.tensors.shape(node.inputs[0])) != 2:
        return "A of rank other than 2"
    c = const_input(imp, node, 6)
    n = imp.tensors.const(node.inputs[3]).shape[0 if node.attr("transB", 0) else 1]
    return None if c is None or np.asarray(c).size in (1, n) else "C varying along the rows"


@onnx_op("QGemm", QOP_EMITS, _check_qgemm, domain=MS_DOMAIN)
def qgemm(imp: OnnxImporter, node: ONode) -> None:
    """QGemm: ``alpha A' B' + C`` (C int32 on a_scale * b_scale), onto y's range or a float output."""
    trans_b = bool(node.attr("transB", 0))
    b = imp.tensors.const(node.inputs[3])
    n = b.shape[0] if trans_b else b.shape[1]
    ws = np.asarray(imp.tensors.const(node.inputs[4]), dtype=np.float64).reshape(-1)
    bias = int_bias(imp, node, 6, declared(imp, node, 1, 2).scale, ws, n)
    out = node.outputs[0]
    rng = declared(imp, node, 7, 8).range if node.input(7) else imp.tensors.act_range(out)
    _matmul_like(imp, node, (0, 1, 2), (3, 4, 5), bool(node.attr("transA", 0)), trans_b, bias, rng,
                 float(node.attr("alpha", 1.0)))


def _check_binary(imp: OnnxImporter, node: ONode) -> str | None:
    """Float32 / int8 / uint8 A and B of rank <= 4, valid scales and zero points."""
    return check_data(imp, node, (0, 3)) or check_qparams(imp, node, ((1, 2), (4, 5), (6, 7)))


@onnx_op(("QLinearAdd", "QLinearMul"), QOP_EMITS, _check_binary, domain=MS_DOMAIN)
def qlinear_binary(imp: OnnxImporter, node: ONode) -> None:
    """QLinearAdd -> QuantizedAdd_8p8to8, QLinearMul -> QuantizedMul_8x8to32 + Requantize_32to8, onto C's range."""
    perm = common_perm(imp, node)
    a, c = qinput(imp, node, 0, 1, 2, perm), qinput(imp, node, 3, 4, 5, perm)
    out = node.outputs[0]
    rng = declared(imp, node, 6, 7).range
    fn = emit_add if node.op_type == "QLinearAdd" else emit_mul
    imp.tensors.finish(out, fn(imp, a, c, rng, out), perm)


def _check_qconcat(imp: OnnxImporter, node: ONode) -> str | None:
    """Valid scales and zero points for Y and every input."""
    data = tuple(range(2, len(node.inputs), 3))
    pairs = ((0, 1),) + tuple((i + 1, i + 2) for i in data)
    return check_data(imp, node, data) or check_qparams(imp, node, pairs)


@onnx_op("QLinearConcat", QOP_EMITS, _check_qconcat, domain=MS_DOMAIN)
def qlinear_concat(imp: OnnxImporter, node: ONode) -> None:
    """QLinearConcat: inputs onto Y's range (Requantize_8to8 where they differ), QuantizedConcat_8."""
    out = node.outputs[0]
    data = list(range(2, len(node.inputs), 3))
    first = next((node.inputs[i] for i in data if not imp.tensors.is_const(node.inputs[i])), None)
    perm = imp.tensors.perm_of(first) if first is not None else IDENTITY
    values = [qinput(imp, node, i, i + 1, i + 2, perm) for i in data]
    r = len(imp.tensors.shape(out))
    ga = graph_axis(int(node.attr("axis")), r, perm)
    y = concat(imp, values, ga, imp.tensors.out_graph_shape(out, perm), declared(imp, node, 0, 1).range, out)
    imp.tensors.finish(out, y, perm)


def _spatial_perm(imp: OnnxImporter, node: ONode) -> tuple[tuple[int, int, int, int], tuple[int, int]]:
    """(layout, graph spatial axes) of a pool's input: NHWC for NCHW data, the ONNX order when channels_last."""
    if node.attr("channels_last", 0):
        return IDENTITY, (1, 2)
    return NHWC, (1, 2)


def _check_qgap(imp: OnnxImporter, node: ONode) -> str | None:
    """A rank-4 input, valid scales and zero points."""
    why = check_data(imp, node) or check_qparams(imp, node, ((1, 2), (3, 4)))
    return why or (None if len(imp.tensors.shape(node.inputs[0])) == 4 else "input of rank other than 4")


@onnx_op("QLinearGlobalAveragePool", QOP_EMITS, _check_qgap, domain=MS_DOMAIN)
def qlinear_global_average_pool(imp: OnnxImporter, node: ONode) -> None:
    """QLinearGlobalAveragePool -> QuantizedMean_8 over H, W straight onto y's range (channels_last too)."""
    out = node.outputs[0]
    perm, axes = _spatial_perm(imp, node)
    x = qinput(imp, node, 0, 1, 2, perm)
    imp.tensors.finish(out, emit_mean(imp, x, axes, declared(imp, node, 3, 4).range, out), perm)


def _check_qavg(imp: OnnxImporter, node: ONode) -> str | None:
    """Not channels_last; valid scales and zero points; the window as AveragePool's."""
    why = check_qparams(imp, node, ((1, 2), (3, 4)))
    if why:
        return why
    return "channels_last" if node.attr("channels_last", 0) else check_pool(imp, node)


@onnx_op("QLinearAveragePool", QOP_EMITS + POOL_EMITS, _check_qavg, domain=MS_DOMAIN)
def qlinear_average_pool(imp: OnnxImporter, node: ONode) -> None:
    """QLinearAveragePool -> QuantizedAvgPool_8 and Requantize_8to8 onto y's range (full windows: one
    DepthwiseSupernode straight onto it, onnx.handlers.pool.pool)."""
    out = node.outputs[0]
    rng = declared(imp, node, 3, 4).range
    y = pool(imp, node, qinput(imp, node, 0, 1, 2, NHWC), "QuantizedAvgPool_8", rng)
    imp.tensors.finish(out, requantize_to(imp, y, rng, out), NHWC)


def _check_unary(imp: OnnxImporter, node: ONode) -> str | None:
    """Valid scales and zero points for X and Y."""
    return check_data(imp, node) or check_qparams(imp, node, ((1, 2), (3, 4)))


@onnx_op(("QLinearSigmoid", "QLinearLeakyRelu"), QOP_EMITS, _check_unary, domain=MS_DOMAIN)
def qlinear_unary(imp: OnnxImporter, node: ONode) -> None:
    """QLinearSigmoid, QLinearLeakyRelu: one table lookup onto y's range (nodes.lut), as onnxruntime does."""
    out = node.outputs[0]
    perm = imp.tensors.perm_of(node.inputs[0])
    x = qinput(imp, node, 0, 1, 2, perm)
    rng = declared(imp, node, 3, 4).range
    fn = lut.sigmoid if node.op_type == "QLinearSigmoid" else lut.leaky_relu(float(node.attr("alpha", 0.01)))
    y = emit_lut(imp, x, fn, rng, out)
    imp.tensors.finish(out, y, perm)


def _qsoftmax_axis(imp: OnnxImporter, node: ONode) -> int | None:
    shape = imp.tensors.shape(node.inputs[0])
    r = len(shape)
    if int(node.attr("opset", 13)) >= 13:
        a = int(node.attr("axis", -1))
        return a + r if a < 0 else a
    a = int(node.attr("axis", 1))
    a = a + r if a < 0 else a
    big = [i for i in range(a, r) if shape[i] != 1]
    return (r - 1 if not big else big[0]) if len(big) <= 1 else None


@onnx_op("QLinearSoftmax", QOP_EMITS, lambda imp, node: _check_unary(imp, node) or (
        None if _qsoftmax_axis(imp, node) is not None else "softmax over several flattened axes"), domain=MS_DOMAIN)
def qlinear_softmax(imp: OnnxImporter, node: ONode) -> None:
    """QLinearSoftmax -> QuantizedSoftmax_8 along graph depth, then onto y's range."""
    out = node.outputs[0]
    a4 = axis4(_qsoftmax_axis(imp, node), len(imp.tensors.shape(node.inputs[0])))  # type: ignore[arg-type]
    perm = imp.tensors.perm_of(node.inputs[0])
    if perm[3] != a4:
        perm = tuple([p for p in perm if p != a4] + [a4])  # type: ignore[assignment]
    x = qinput(imp, node, 0, 1, 2, perm)
    y = emit_softmax(imp, x, 1.0, out)
    imp.tensors.finish(out, requantize_to(imp, y, declared(imp, node, 3, 4).range, out), perm)
