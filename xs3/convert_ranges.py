"""The range a graph value will carry at run time, when it is fixed at convert time (the XS3 lowering's view).

:func:`hexnn_import.optimizer.ranges.static_range` answers for the ops prepare.c's passes follow (Consts,
fixed-output ops, the pass-through ops it names). The XS3 lowering needs the same answer at more producers:
a layer's input may come from a Hexagon pad, gather, concat or PReLU whose reported range is a function of
its inputs' ranges and Consts only, never of the data (SEMANTICS.md §6; the engine's kernels:
``ops/kernels/pad.py``, ``gather.py``, ``concat_split.py`` ``QuantizedConcat8``, ``activation.py``
``QuantizedPRelu8V2``, ``reduce.py``, ``conv_variants.py``). :func:`convert_time_range` follows those too;
anything else (an auto range, a requested end the graph computes) is None: the lowering then requantizes on
the Hexagon side. :func:`requantize_table` is Requantize_8to8 between two fixed ranges as a lookup8 table;
:func:`through_relabels` finds the value a reshape only relabels, which an XS3 kernel reads in place.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.graph import Node, Ref
from hexnn_import.ops.kernels.activation import prelu_range
from hexnn_import.ops.op_groups import MORE_PASSTHROUGH_OPS, PASSTHROUGH_OPS, UNION_OPS
from hexnn_import.ops.quant import adjust_range, dequantize_u8
from hexnn_import.optimizer.lookup import GraphLike, find_node
from hexnn_import.optimizer.ranges import MAX_DEPTH, Range, const_array, const_scalar, f32, static_range
from hexnn_import.optimizer.slots import has_slot, slots

#: ops whose range passes through from their (named) min / max inputs, beyond ranges.py's own table
PASS = {**{op: ("in_min", "in_max") for op in PASSTHROUGH_OPS | MORE_PASSTHROUGH_OPS
           | {"QuantizedPad_8", "QuantizedPad_V2_8", "QuantizedResizeBilinear_8"}},
        "Gather_8": ("table_min", "table_max")}
#: transposed convolutions: their output stage reports the requested range as the supernodes do
TRANSPOSE_CONVS = frozenset({"QuantizedTransposeConv2d_8x8p32to8", "QuantizedTransposeConv2d_8x8p8to8"})
#: ops whose output range is fixed whatever their input (SEMANTICS §6)
FIXED = {"QuantizedSoftmax_8": (0.0, 1.0), "QuantizedSigmoid_8": (0.0, 1.0)}


def convert_time_range(nn: GraphLike, min_ref: Ref, max_ref: Ref, depth: int = 0) -> Range | None:
    """The float32 ``(min, max)`` these refs carry at run time when the graph fixes it, else None."""
    known = static_range(nn, min_ref, max_ref)
    if known is not None:
        return known
    if depth >= MAX_DEPTH or min_ref.src_id != max_ref.src_id or (min_ref.output_idx, max_ref.output_idx) != (1, 2):
        return None
    node = find_node(nn, min_ref.src_id)
    return None if node is None else _node_range(nn, node, depth + 1)


def _node_range(nn: GraphLike, node: Node, depth: int) -> Range | None:
    if node.op in PASS:
        return convert_time_range(nn, *slots(node, *PASS[node.op]), depth)
    if node.op in FIXED:
        lo, hi = FIXED[node.op]
        return f32(lo), f32(hi)
    if node.op in UNION_OPS:  # op_concat.c: [min(0, min of mins), max of maxes], float32, not zero-fixed
        n = (len(node.inputs) - 1) // 3
        ranges = [convert_time_range(nn, node.inputs[1 + n + i], node.inputs[1 + 2 * n + i], depth) for i in range(n)]
        if n < 1 or any(r is None for r in ranges):
            return None
        return f32(min(0.0, *(r[0] for r in ranges))), f32(max(r[1] for r in ranges))  # type: ignore[index]
    if node.op == "QuantizedPRelu_8_V2":
        return _prelu_v2_range(nn, node, depth)
    if node.op == "QuantizedMean_8":  # reduce.py: the input range, or the requested one zero-fixed
        if not has_slot(node, "out_min"):
            return convert_time_range(nn, *slots(node, "in_min", "in_max"), depth)
        return _requested(nn, node, "out_min", "out_max" if has_slot(node, "out_max") else "in_max")
    if node.op in TRANSPOSE_CONVS:  # the §5 output stage of a supernode: adjust_range of both Const ends
        return _requested(nn, node, "out_min", "out_max")
    return None


def _requested(nn: GraphLike, node: Node, lo_slot: str, hi_slot: str) -> Range | None:
    """``adjust_range`` of two finite Const ends (ranges.py's rule for FIXED_OUTPUT ops), else None."""
    lo, hi = (const_scalar(nn, r) for r in slots(node, lo_slot, hi_slot))  # type: ignore[arg-type]
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        return None
    lo, hi = adjust_range(lo, hi)
    return f32(lo), f32(hi)


def _prelu_v2_range(nn: GraphLike, node: Node, depth: int) -> Range | None:
    """QuantizedPRelu_8_V2's reported range: the requested ends where given and finite, else the exact range
    over the Const alphas (``prelu_range``), extended to 0 and zero-fixed (``activation.output_range``)."""
    got = convert_time_range(nn, *slots(node, "in_min", "in_max"), depth)
    alpha = const_array(nn, slots(node, "alpha")[0])
    al = convert_time_range(nn, *slots(node, "alpha_min", "alpha_max"), depth)
    if got is None or alpha is None or al is None or np.asarray(alpha).size == 0:
        return None
    codes = np.asarray(alpha).astype(np.uint8)
    real = dequantize_u8(np.array([codes.min(), codes.max()]), *al)
    d_lo, d_hi = prelu_range(got[0], got[1], float(real[0]), float(real[1]))
    lo = const_scalar(nn, slots(node, "out_min")[0]) if has_slot(node, "out_min") else None
    hi = const_scalar(nn, slots(node, "out_max")[0]) if has_slot(node, "out_max") else None
    if (has_slot(node, "out_min") and lo is None) or (has_slot(node, "out_max") and hi is None):
        return None  # a requested end the graph computes at run time
    lo = d_lo if lo is None or math.isinf(lo) else lo
    hi = d_hi if hi is None or math.isinf(hi) else hi
    lo, hi = adjust_range(min(0.0, lo), max(0.0, hi))
    return f32(lo), f32(hi)


def requantize_table(got: Range, want: Range) -> np.ndarray:
    """The lookup8 table of Hexagon's ``Requantize_8to8`` from range ``got`` onto ``want`` (SEMANTICS §4, the
    engine's own kernel on the 256 codes): entry ``b`` is the int8 result for the int8 code ``int8(b)``, whose
    quint8 code is ``b ^ 0x80``."""
    from hexnn_import.ops.registry import run_op

    u = (np.arange(256, dtype=np.uint8) ^ np.uint8(0x80)).reshape(1, 1, 1, 256)
    q = run_op("Requantize_8to8", [u, float(got[0]), float(got[1]), float(want[0]), float(want[1])],
               node="xs3 requantize table")[0]
    return (np.asarray(q, np.uint8).reshape(256) ^ np.uint8(0x80)).view(np.int8)


#: ops that only relabel their input's bytes (a C-order reshape of the same codes; the range passes through)
RELABELS = frozenset({"QuantizedReshape", "QuantizedFlatten"})


def through_relabels(nn: GraphLike, data: Ref, rng: tuple[Ref, Ref]) -> tuple[Ref, tuple[Ref, Ref]]:
    """The value a chain of reshapes (:data:`RELABELS`) only relabels, with its range refs: the same codes in the
    same C order, so an XS3 kernel reads them in place (a flatten before a fully-connected layer needs no node,
    on the device no copy); ``(data, rng)`` itself when its producer is no reshape."""
    for _ in range(MAX_DEPTH):
        node = find_node(nn, data.src_id)
        if node is None or node.op not in RELABELS or data.output_idx != 0:
            break
        if tuple(rng) != (Ref(node.node_id, 1), Ref(node.node_id, 2)):
            break  # the value is read on another range than the reshape reports
        data, rng = node.inputs[0], tuple(slots(node, "in_min", "in_max"))  # type: ignore[assignment]
    return data, rng
