"""Values known at prepare time: Const scalars and the min/max a node will report.

Passes that bypass a requantization must know that the range it would
produce equals the one already there. :func:`static_range` answers "what
float32 values will these min/max refs carry at run time" from Consts alone,
following exactly what the kernels report (SEMANTICS.md §1-§6):

- a Const pair: its values;
- outputs 1, 2 of a node with a fixed output range: ``adjust_range`` of its
  Const ends (Quantize, Requantize_32to8, supernodes and batch norms with
  both ends finite, QuantizedAdd_8p8to8 with both ends given), or the
  requested range as is (Requantize_8to8, which refuses any other);
- outputs 1, 2 of an op whose range passes through (:data:`.op_groups.PASSTHROUGH_OPS`):
  the range of its own min/max inputs.

Anything else (data-dependent or auto ranges) is None. Lookups follow at
most :data:`MAX_DEPTH` producers, so each answer costs O(1).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.graph import Node, Ref
from hexnn_import.ops.quant import adjust_range
from hexnn_import.optimizer.lookup import GraphLike, find_node, find_node_must_be_Const_from_ref
from hexnn_import.ops.op_groups import FIXED_OUTPUT, PASSTHROUGH_OPS, is_xs3
from hexnn_import.optimizer.slots import has_slot, slots

MAX_DEPTH = 16
Range = tuple[float, float]

def const_array(nn: GraphLike, ref: Ref | tuple[int, int]) -> np.ndarray | None:
    """The data of the Const that ``ref`` names, or None."""
    node = find_node_must_be_Const_from_ref(nn, ref)
    return None if node is None else node.data


def const_scalar(nn: GraphLike, ref: Ref | tuple[int, int]) -> float | None:
    """The value of a one-element Const that ``ref`` names, as a Python float, or None."""
    arr = const_array(nn, ref)
    if arr is None or arr.size != 1:
        return None
    return float(arr.reshape(-1)[0])


def f32(v: float) -> float:
    """``v`` rounded to float32 (how a kernel reports a range end)."""
    return float(np.float32(v))


def static_range(nn: GraphLike, min_ref: Ref, max_ref: Ref, depth: int = 0) -> Range | None:
    """The float32 values ``(min, max)`` that these refs will carry at run time, or None if not known."""
    lo, hi = const_scalar(nn, min_ref), const_scalar(nn, max_ref)
    if lo is not None and hi is not None:
        return lo, hi
    if depth >= MAX_DEPTH or min_ref.src_id != max_ref.src_id or (min_ref.output_idx, max_ref.output_idx) != (1, 2):
        return None
    node = find_node(nn, min_ref.src_id)
    return None if node is None else output_range(nn, node, depth + 1)


def output_range(nn: GraphLike, node: Node, depth: int = 0) -> Range | None:
    """The float32 ``(min, max)`` that ``node`` reports as outputs 1, 2, or None if not known."""
    if node.op in PASSTHROUGH_OPS:
        return static_range(nn, *slots(node, "in_min", "in_max"), depth)
    if node.op in FIXED_OUTPUT:
        ends = FIXED_OUTPUT[node.op]
        if not has_slot(node, ends[1]):
            return None
        lo, hi = (const_scalar(nn, r) for r in slots(node, *ends))
        if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            return None
        lo, hi = adjust_range(lo, hi)
        return f32(lo), f32(hi)
    if node.op == "Requantize_8to8":
        return static_range(nn, *slots(node, "out_min", "out_max"), depth)
    if is_xs3(node.op) and len(node.inputs) >= 2:  # hexnn_import.xs3.graph_ops: out_min, out_max last
        return static_range(nn, node.inputs[-2], node.inputs[-1], depth)
    return None
