"""Batched matrix products of two quint8 values (attention's ``Q @ K^T`` and ``P @ V``), for every importer.

hexagon_nn has one op for a product of two run-time matrices, ``QuantizedMatMul_8x8to32`` (op text:
``[1,1,M,K] x [1,1,K,N] -> [1,1,M,N]`` qint32, exact sums of the centred codes, SEMANTICS §3). A
batched product (TFLite BATCH_MATMUL, ONNX MatMul of rank 3-4) is one such product per matrix of the
broadcast batch dimensions: each ``[b, h]`` position of the 4-D graph layout (a rank-3 ``[B, M, K]``
source tensor is ``[1, B, M, K]``) gets a QuantizedSlice_8 of each operand, its product and its
requantization onto the output range (Requantize_32to8, or QuantizeDownAndShrinkRange_32to8 when the
range is only known at run time); QuantizedConcat_8 joins the results. When the right operand is one
matrix for the whole batch the left operand's rows are stacked and one product does all of them.
A transposed operand (``adj_x`` / ``adj_y``) is Transpose_8 of its last two axes first (codes move
unchanged).

Which of nnlib's two registrations of the product (:func:`matmul_op`): ``QuantizedMatMul_8x8to32``'s check
(op_matmul.c ``matmul_check_ref``) pads and packs input 1 into a private copy once, at prepare, and its
assembly execute (``matmul_asm``) multiplies by that copy, so it is right only for a Const B; for a B computed
at run time (every product here but a Const right operand, and TFLite's run-time FULLY_CONNECTED weights) the
importers emit ``QuantizedMatMul_8x8to32_ref`` (and for a Const B of at most 16 rows and more than 32
columns, which the assembly misreads), the same arithmetic (``matmul_execute_ref`` / ``matmul_ref``)
reading B at every execute. prepare.c fuses only a product with a Const B (``matmult_extrachecks``), so the
choice changes no fusion.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, node3, reshape_value, to_8bit
from hexnn_import.importers.nodes.elementwise import pair_refs
from hexnn_import.importers.nodes.movement import concat, slice_value, transpose
from hexnn_import.importers.nodes.values import Value

#: the product for a Const B / for a B computed at run time (module doc)
MATMUL, MATMUL_REF = "QuantizedMatMul_8x8to32", "QuantizedMatMul_8x8to32_ref"
MATMUL_EMITS = (MATMUL, MATMUL_REF, "Requantize_32to8", "QuantizeDownAndShrinkRange_32to8",
                "QuantizedSlice_8", "QuantizedConcat_8", "QuantizedReshape", "Transpose_8", "Requantize_8to8")

#: most matrices a batched product is unrolled into (one QuantizedMatMul_8x8to32 each)
MAX_MATRICES = 256

Shape4 = tuple[int, int, int, int]


def matmul_matrices(a_shape: Shape4, c_shape: Shape4) -> int:
    """How many products a batched ``a @ c`` of these 4-D shapes makes (1 when ``c`` is one matrix);
    raises ValueError when the batch dimensions do not broadcast."""
    lead = np.broadcast_shapes(tuple(a_shape[:2]), tuple(c_shape[:2]))
    if c_shape[0] * c_shape[1] == 1:
        return 1
    return int(np.prod(lead, dtype=np.int64))


def matmul_op(b: GraphBuilder, c: Value) -> str:
    """The product op for the right operand ``c`` ``[1,1,K,N]``: ``QuantizedMatMul_8x8to32`` when ``c`` is a
    Const (packed once at prepare, as op_matmul.c's check does), else ``QuantizedMatMul_8x8to32_ref``, which
    reads it at every execute (module doc). A Const with K <= 16 and N > 32 takes the _ref op too: the check
    packs B's rows padded to 32 (op_matmul.c l. 369) and the assembly steps through them by K padded to 16
    (l. 245, 312), wrong from the second block of 32 outputs on (tools/hvx/op_matmul.py's device row)."""
    k, n = c.shape[2], c.shape[3]
    const = b.graph.node(c.data.src_id).is_const
    return MATMUL if const and not (k <= 16 and n > 32) else MATMUL_REF


def _swap_last(b: GraphBuilder, v: Value, name: str) -> Value:
    return transpose(b, v, [0, 1, 3, 2], name)


def emit_batch_matmul(b: GraphBuilder, a: Value, c: Value, out_range: Range | None, name: str,
                      adj_a: bool = False, adj_c: bool = False) -> Value:
    """``a @ c`` over the last two axes of 4-D quint8 values, batch axes broadcast (module doc);
    the result is ``[lead0, lead1, M, N]`` on ``out_range`` (None: a run-time range)."""
    if adj_a:
        a = _swap_last(b, a, f"{name}/adj_x")
    if adj_c:
        c = _swap_last(b, c, f"{name}/adj_y")
    m, k, n = a.shape[2], a.shape[3], c.shape[3]
    if c.shape[2] != k:
        raise ValueError(f"{name}: inner dimensions differ ({list(a.shape)} @ {list(c.shape)})")
    lead = tuple(int(v) for v in np.broadcast_shapes(tuple(a.shape[:2]), tuple(c.shape[:2])))
    if matmul_matrices(a.shape, c.shape) == 1:
        rows = int(np.prod(a.shape[:3]))
        a2 = reshape_value(b, a, (1, 1, rows, k), f"{name}/rows")
        c2 = reshape_value(b, c, (1, 1, k, n), f"{name}/matrix")
        acc = node3(b, matmul_op(b, c2), pair_refs(a2, c2), (1, 1, rows, n), f"{name}/matmul", None,
                    etype="qint32")
        y = to_8bit(b, acc, out_range, name)
        return reshape_value(b, y, (lead[0], lead[1], m, n), f"{name}/reshape")
    parts = []
    for i in range(lead[0]):
        for j in range(lead[1]):
            tag = f"{name}/m{i}_{j}"
            ai = slice_value(b, a, [i % a.shape[0], j % a.shape[1], 0, 0], [1, 1, m, k], f"{tag}/a")
            ci = slice_value(b, c, [i % c.shape[0], j % c.shape[1], 0, 0], [1, 1, k, n], f"{tag}/b")
            acc = node3(b, matmul_op(b, ci), pair_refs(ai, ci), (1, 1, m, n), f"{tag}/matmul", None,
                        etype="qint32")
            parts.append(to_8bit(b, acc, out_range, tag))
    y = concat(b, parts, 1, (1, len(parts), m, n), out_range, f"{name}/concat")
    return reshape_value(b, y, (lead[0], lead[1], m, n), f"{name}/reshape")


__all__ = ["MATMUL", "MATMUL_EMITS", "MATMUL_REF", "MAX_MATRICES", "emit_batch_matmul", "matmul_matrices",
           "matmul_op"]
