"""ONNX Gemm, MatMul and a BatchNormalization that could not be folded into a convolution.

Gemm and MatMul with constant weights are 1x1 convolutions over
``[1, 1, rows, K]`` (the rows in the width dimension, as the TFLite
importer's FULLY_CONNECTED), so they share the Supernode / run-time-range
chain of ``nodes.core.emit_conv``; ``alpha`` scales the weights, ``beta`` the
bias, ``transA`` is a layout (no node). MatMul of two activations is
QuantizedMatMul_8x8to32 and a requantize, one per matrix of a batched
(rank > 2) product (:func:`batched_matmul`). A standalone
BatchNormalization is a per-channel affine map: a 1x1 depthwise layer whose
weights are the signs of ``a`` with channel scales ``|a| / max|a|``, so the
multipliers keep float precision.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import NNPad
from hexnn_import.importers.nodes.core import Range, emit_conv, node3, reshape_value, to_8bit
from hexnn_import.importers.nodes.elementwise import emit_add, pair_refs
from hexnn_import.importers.nodes.movement import MOVE_EMITS
from hexnn_import.importers.nodes.matmul import MATMUL, MATMUL_REF, emit_batch_matmul, matmul_op
from hexnn_import.importers.onnx.common import check_data, need_const
from hexnn_import.importers.onnx.conv_layer import CONV_EMITS
from hexnn_import.importers.onnx.fuse import bn_affine, bn_is_simple, layer_out
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import IDENTITY, axis4, onnx4
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.onnx.weights import layer_weights_of, weight_source
from hexnn_import.importers.nodes.values import Value
from hexnn_import.importers.nodes.weights import LayerWeights, float_layer_weights

DENSE_EMITS = CONV_EMITS + MOVE_EMITS + (MATMUL, MATMUL_REF, "QuantizedAdd_8p8to8", "QuantizedAdd_8p8to32")


def gemm_bias(imp: OnnxImporter, node: ONode, pos: int, n: int, m: int, beta: float = 1.0) -> np.ndarray:
    """Gemm's ``beta * C`` broadcast to ``[M, N]`` (zeros when absent)."""
    name = node.input(pos)
    if not name:
        return np.zeros((m, n))
    qc = imp.tensors.qconst(name)
    c = qc.real() if qc is not None else np.asarray(imp.tensors.const(name), dtype=np.float64)
    return np.broadcast_to(c, (m, n)).astype(np.float64) * beta


def dense(imp: OnnxImporter, x: Value, lw: LayerWeights, codes_nk: np.ndarray, bias: np.ndarray, out: str,
          rows: int, out_range: Range | None) -> Value:
    """``x [1,1,rows,K] @ W.T + bias`` as a 1x1 conv onto ``out_range``; ``codes_nk`` is ``[N, K]``."""
    n, k = codes_nk.shape
    w = np.ascontiguousarray(codes_nk.T.reshape(1, 1, k, n))
    return emit_conv(imp, out, x, w, lw.w_range, lw.k, bias, out_range, (1, 1), NNPad.VALID, (1, 1, rows, n))


def _check_gemm(imp: OnnxImporter, node: ONode) -> str | None:
    """A rank-2 A; a constant float or quantized rank-2 B; a constant C of rank <= 2."""
    why = check_data(imp, node) or weight_source(imp, node.input(1)) or need_const(imp, node, (2,))
    if why:
        return why
    a, b = imp.tensors.shape(node.inputs[0]), imp.tensors.const(node.inputs[1]).shape
    if len(a) != 2 or len(b) != 2:
        return "Gemm operands of rank other than 2"
    c = node.input(2)
    if c and len(imp.tensors.const(c).shape) > 2:
        return "C of rank > 2"
    return None


@onnx_op("Gemm", DENSE_EMITS, _check_gemm)
def gemm(imp: OnnxImporter, node: ONode) -> None:
    """Gemm: ``alpha A' B' + beta C`` with constant B and C (module doc); a fused activation (onnx.fuse)."""
    out = layer_out(imp.plan, node)
    trans_a, trans_b = int(node.attr("transA", 0)), int(node.attr("transB", 0))
    x = imp.tensors.value(node.inputs[0], (0, 1, 3, 2) if trans_a else IDENTITY)
    m = x.shape[2]
    b = imp.tensors.const(node.inputs[1])
    n = b.shape[0] if trans_b else b.shape[1]
    lw = layer_weights_of(imp, node.inputs[1], 0 if trans_b else 1, out, float(node.attr("alpha", 1.0)))
    codes = lw.codes if trans_b else lw.codes.T
    bias = gemm_bias(imp, node, 2, n, m, float(node.attr("beta", 1.0)))
    if m == 1 or not np.any(bias != bias[:1]):
        imp.tensors.finish(out, dense(imp, x, lw, codes, bias[0], out, m, imp.tensors.act_range(out)), IDENTITY)
        return
    # C varies along the rows: the product on its own (run-time range), then QuantizedAdd_8p8to8 of C
    y = dense(imp, x, lw, codes, np.zeros(n), f"{out}/product", m, None)
    c = imp.tensors.array_value(bias, IDENTITY, f"{out}/C")
    imp.tensors.finish(out, emit_add(imp, y, c, imp.tensors.act_range(out), out), IDENTITY)


def _check_matmul(imp: OnnxImporter, node: ONode) -> str | None:
    """A constant float or quantized rank-2 B (weights), or a run-time B: both operands of rank >= 2 and a
    bounded number of batched matrices."""
    why = check_data(imp, node, (0,))
    if why:
        return why
    b = node.input(1)
    if imp.tensors.is_const(b):
        why = weight_source(imp, b)
        return why or (None if len(imp.tensors.const(b).shape) == 2 else "constant B of rank other than 2")
    why = check_data(imp, node, (1,))
    if why:
        return why
    a_shape, b_shape = imp.tensors.shape(node.inputs[0]), imp.tensors.shape(b)
    if len(a_shape) < 2 or len(b_shape) < 2:
        return "MatMul of an activation of rank 1"
    if _batches(a_shape, b_shape) > MAX_MATMUL_BATCHES:
        return f"batched MatMul of {_batches(a_shape, b_shape)} matrices (more than {MAX_MATMUL_BATCHES})"
    return None


#: most matrices a batched MatMul of two activations is unrolled into (one QuantizedMatMul_8x8to32 each)
MAX_MATMUL_BATCHES = 256


def _batches(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> int:
    """How many matrix products a MatMul of activations of these shapes makes (1 when B is one matrix)."""
    if len(b_shape) == 2 or all(d == 1 for d in b_shape[:-2]):
        return 1
    return int(np.prod(np.broadcast_shapes(onnx4(a_shape)[:2], onnx4(b_shape)[:2]), dtype=np.int64))


def batched_matmul(imp: OnnxImporter, node: ONode, out: str) -> Value:
    """A MatMul of two activations: QuantizedMatMul_8x8to32_ref per matrix (B computed at run time:
    nodes.matmul.matmul_op), onto one range, then concatenated.

    The op multiplies one ``[1,1,M,K]`` by one ``[1,1,K,N]``: A with a
    single B (or a B whose batch dims are all 1) is one product over all of
    A's rows; otherwise each of the broadcast leading ``[b, h]`` positions
    gets a QuantizedSlice_8 of A and of B and its own product, requantized
    onto the output range, and the results are joined by QuantizedConcat_8
    along the height axis, then reshaped to ``[b, h, M, N]``
    (:func:`~hexnn_import.importers.nodes.matmul.emit_batch_matmul`, TFLite's BATCH_MATMUL's too).
    """
    a_shape, b_shape = imp.tensors.shape(node.inputs[0]), imp.tensors.shape(node.inputs[1])
    a, c = imp.tensors.value(node.inputs[0], IDENTITY), imp.tensors.value(node.inputs[1], IDENTITY)
    rng = imp.tensors.act_range(out)
    k, n = a.shape[3], c.shape[3]
    if _batches(a_shape, b_shape) == 1:
        rows = int(np.prod(a.shape[:3]))
        a = reshape_value(imp, a, (1, 1, rows, k), f"{out}/rows")
        c = reshape_value(imp, c, (1, 1, k, n), f"{out}/matrix")
        acc = node3(imp, matmul_op(imp, c), pair_refs(a, c), (1, 1, rows, n), f"{out}/matmul", None,
                    etype="qint32")
        return reshape_value(imp, to_8bit(imp, acc, rng, out), onnx4(imp.tensors.shape(out)), f"{out}/reshape")
    return emit_batch_matmul(imp, a, c, rng, out)


@onnx_op("MatMul", DENSE_EMITS, _check_matmul)
def matmul(imp: OnnxImporter, node: ONode) -> None:
    """MatMul: constant B as a 1x1 conv over every row of A; two activations with QuantizedMatMul_8x8to32_ref."""
    out = layer_out(imp.plan, node)
    a_shape = imp.tensors.shape(node.inputs[0])
    if not imp.tensors.is_const(node.inputs[1]):
        imp.tensors.finish(out, batched_matmul(imp, node, out), IDENTITY)
        return
    k = a_shape[-1]
    rows = int(np.prod(a_shape[:-1], dtype=np.int64)) if len(a_shape) > 1 else 1
    x = reshape_value(imp, imp.tensors.value(node.inputs[0], IDENTITY), (1, 1, rows, k), f"{out}/rows")
    lw = layer_weights_of(imp, node.inputs[1], 1, out)
    y = dense(imp, x, lw, lw.codes.T, np.zeros(lw.codes.shape[1]), out, rows, imp.tensors.act_range(out))
    imp.tensors.finish(out, reshape_value(imp, y, onnx4(imp.tensors.shape(out)), f"{out}/reshape"), IDENTITY)


def _check_bn(imp: OnnxImporter, node: ONode) -> str | None:
    """Inference mode: constant parameters, unused statistics outputs, an input of rank >= 2."""
    why = check_data(imp, node)
    if why:
        return why
    if len(imp.tensors.shape(node.inputs[0])) < 2:
        return "input of rank < 2"
    return None if bn_is_simple(imp, node) else "training mode, non-constant parameters or used statistics outputs"


@onnx_op("BatchNormalization", DENSE_EMITS, _check_bn)
def batch_norm(imp: OnnxImporter, node: ONode) -> None:
    """Standalone BatchNormalization: per-channel affine map as a 1x1 depthwise layer (module doc)."""
    out = node.outputs[0]
    name = node.inputs[0]
    r = len(imp.tensors.shape(name))
    c4 = axis4(1, r)
    perm = imp.tensors.perm_of(name)
    if perm[3] != c4:
        perm = tuple([p for p in perm if p != c4] + [c4])  # type: ignore[assignment]
    x = imp.tensors.value(name, perm)
    a, c = bn_affine(imp, node)
    lw = float_layer_weights(a.reshape(-1, 1, 1, 1), 0, out)
    w = np.ascontiguousarray(lw.codes.reshape(1, 1, -1, 1))
    y = emit_conv(imp, out, x, w, lw.w_range, lw.k, c, imp.tensors.act_range(out), (1, 1), NNPad.VALID, x.shape,
                  depthwise=True)
    imp.tensors.finish(out, y, perm)
