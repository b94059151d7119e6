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
- outputs 1, 2 of an op whose range passes through (:data:`PASSTHROUGH`):
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
from hexnn_import.optimizer.op_classes import is_xs3

MAX_DEPTH = 16
Range = tuple[float, float]

#: op -> (min input, max input) for ops whose output min/max (outputs 1, 2) copy those inputs.
PASSTHROUGH: dict[str, tuple[int, int]] = {
    "QuantizedMaxPool_8": (1, 2), "QuantizedAvgPool_8": (1, 2), "QuantizedRelu_8": (1, 2),
    "QuantizedReluX_8": (1, 2), "QuantizedReshape": (2, 3), "QuantizedFlatten": (1, 2),
    "QuantizedStridedSlice_8": (7, 8), "QuantizedSlice_8": (3, 4), "Transpose_8": (2, 3),
    "SpaceToDepth_8": (2, 3), "DepthToSpace_8": (2, 3), "BatchToSpaceND_8": (3, 4),
    "SpaceToBatchND_8": (3, 4), "QuantizedTile_8": (2, 3), "ResizeNearestNeighbor_8": (2, 3),
    "QuantizedMaxPool_8_d32": (1, 2), "QuantizedAvgPool_8_d32": (1, 2),
}

#: op -> (out_min input, out_max input) for ops that report adjust_range of Const ends.
FIXED_OUTPUT: dict[str, tuple[int, int]] = {
    "Quantize": (1, 2), "Requantize_32to8": (3, 4),
    "Supernode_8x8p8to8": (10, 11), "Supernode_8x8p32to8": (10, 11),
    "Supernode_8x8p8to8_d32": (10, 11), "Supernode_8x8p32to8_d32": (10, 11),
    "DepthwiseSupernode_8x8p8to8": (10, 11), "DepthwiseSupernode_8x8p32to8": (10, 11),
    "DepthwiseSupernode_8x8p8to8_d32": (10, 11), "DepthwiseSupernode_8x8p32to8_d32": (10, 11),
    "InputSupernode_8x8p8to8_outd32": (10, 11), "InputSupernode_8x8p32to8_outd32": (10, 11),
    "QuantizedBatchNorm_8x8p8to8": (9, 10), "QuantizedBatchNorm_8x8p32to8": (9, 10),
    "QuantizedBatchNorm_8x8p8to8_d32": (9, 10), "QuantizedBatchNorm_8x8p32to8_d32": (9, 10),
    "QuantizedAdd_8p8to8": (6, 7), "QuantizedAdd_8p8to8_d32": (6, 7),
}


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
    if node.op in PASSTHROUGH:
        i, j = PASSTHROUGH[node.op]
        return static_range(nn, node.inputs[i], node.inputs[j], depth)
    if node.op in FIXED_OUTPUT:
        i, j = FIXED_OUTPUT[node.op]
        if j >= len(node.inputs):
            return None
        lo, hi = const_scalar(nn, node.inputs[i]), const_scalar(nn, node.inputs[j])
        if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            return None
        lo, hi = adjust_range(lo, hi)
        return f32(lo), f32(hi)
    if node.op == "Requantize_8to8":
        return static_range(nn, node.inputs[3], node.inputs[4], depth)
    if is_xs3(node.op) and len(node.inputs) >= 2:  # hexnn_import.xs3.graph_ops: out_min, out_max last
        return static_range(nn, node.inputs[-2], node.inputs[-1], depth)
    return None
