"""The input range a fused conv would read, as far as convert time knows it (for :mod:`.bias_fit`).

- :func:`input_range`: the float32 range the product's input carries at run time, where Consts fix it;
- :func:`input_floor`: where it is only known at run time, the least width its producer can report
  (AutoQuantize keeps its range at least ``1e-18`` wide, as the device computes it, op_quantize.c
  ``find_scaling_for_hvx_quant``: a blank input gives ``[-0.0, 1e-18]``; an
  auto-range supernode starts from its op's default range, op_supernode_new.c / op_dwise_snode_8bit.c
  ``setup_initial_output_range``, and its execute loop only widens it), or None (a range a data-range op
  reports, QuantizeDownAndShrinkRange_32to8 or an auto-range add or multiply, can be as narrow as the
  data: ``[0, 0]`` for all-zero data) - unless :mod:`.bias_fit_floor` has given it a floor (a
  Requantize_32to8 whose max is ``Maximum_f(max, W)``: at least ``W`` wide, each run's own).
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.graph import Node, Ref
from hexnn_import.ops.kernels.quantize import DEVICE_MIN_WIDTH
from hexnn_import.ops.output_stage import nnlib_constants as snf
from hexnn_import.ops.quant import adjust_range
from hexnn_import.optimizer.bias_fit_floor import floored_width, range_outputs, through
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.ops.op_groups import ALL_SUPERNODES, PASSTHROUGH_OPS, SPLIT_OPS
from hexnn_import.optimizer.ranges import MAX_DEPTH, const_scalar, static_range
from hexnn_import.optimizer.slots import has_slot, part, run_count, slot, slots

#: supernode op -> its auto-range default (setup_initial_output_range)
SUPERNODE_DEFAULTS = {op: snf.DWISE_DEFAULT if op.startswith("Depthwise") else snf.CONV_DEFAULT
                      for op in ALL_SUPERNODES}


def _producer(ed: GraphEditor, lo: Ref, hi: Ref):  # type: ignore[no-untyped-def]
    """The node whose min and max outputs (1, 2; a split's n, n + 1) ``lo``, ``hi`` name, or None."""
    src = ed.known(lo.src_id)
    if src is None or lo.src_id != hi.src_id or (lo.output_idx, hi.output_idx) != range_outputs(src):
        return None
    return src


def input_range(ed: GraphEditor, lo: Ref, hi: Ref, depth: int = 0) -> tuple[float, float] | None:
    """The float32 range a product's input carries at run time: :func:`~.ranges.static_range`, and for the
    producers whose reported range follows from Consts but which that table (shared with the passes
    that bypass requantizations, whose output is held to prepare.c's) leaves out: QuantizedMean_8 with an
    output range (its kernel: ``adjust_range`` of out_min, out_max; without them its input range),
    QuantizedPRelu_8_V2 with both ends given (``adjust_range`` of out_min, out_max widened to 0), Gather_8
    (the table's range, table_min, table_max), QuantizedConcat_8 (``[min(0, min of mins), max of maxes]``).
    A squeeze-excite block's first conv reads a QuantizedMean_8; the ops whose range passes through
    (:data:`.op_groups.PASSTHROUGH_OPS`) are followed to these, at most MAX_DEPTH producers up."""
    got = static_range(ed, lo, hi)
    src = _producer(ed, lo, hi)
    if got is not None or src is None or depth > MAX_DEPTH:
        return got
    up = depth + 1
    if src.op in PASSTHROUGH_OPS:
        return input_range(ed, *slots(src, "in_min", "in_max"), up)
    if src.op == "QuantizedMean_8":
        return _const_out(ed, src) if has_slot(src, "out_max") else input_range(ed, *slots(src, "in_min", "in_max"), up)
    if src.op == "QuantizedPRelu_8_V2" and has_slot(src, "out_max"):
        return _const_out(ed, src)
    if src.op == "Gather_8":
        return input_range(ed, *slots(src, "table_min", "table_max"), up)
    if src.op in SPLIT_OPS:
        return input_range(ed, *slots(src, "in_min", "in_max"), up)
    if src.op == "QuantizedConcat_8" and run_count(src):
        parts = [input_range(ed, part(src, "in_min", i), part(src, "in_max", i), up) for i in range(run_count(src))]
        if any(r is None for r in parts):
            return None
        return min(0.0, min(r[0] for r in parts)), max(r[1] for r in parts)  # type: ignore[index]
    return None


def _const_out(ed: GraphEditor, node: Node) -> tuple[float, float] | None:
    """``adjust_range(min(0, lo), max(0, hi))`` of ``node``'s finite Const out_min / out_max (float32)."""
    mn, mx = (const_scalar(ed, r) for r in slots(node, "out_min", "out_max"))
    if mn is None or mx is None or not (math.isfinite(mn) and math.isfinite(mx)) or mn > mx:
        return None
    a, b = adjust_range(min(0.0, mn), max(0.0, mx))
    return float(np.float32(a)), float(np.float32(b))


def input_floor(ed: GraphEditor, lo: Ref, hi: Ref, depth: int = 0) -> tuple[float, bool] | None:
    """``(the least width the run-time range named by lo, hi can have, whether it persists between runs)``
    (module doc), or None. AutoQuantize's range is each run's own (it narrows again on a blank input); an
    auto-range supernode's persists in the node and only widens."""
    src = _producer(ed, lo, hi)
    if src is None or depth > MAX_DEPTH:
        return None
    up = depth + 1
    if through(src.op):
        return input_floor(ed, *slots(src, "in_min", "in_max"), up)
    if src.op == "QuantizedConcat_8" and run_count(src):  # the union's width: at least each part's
        parts = [f for i in range(run_count(src))
                 if (f := input_floor(ed, part(src, "in_min", i), part(src, "in_max", i), up))]
        return max(parts) if parts else None
    if src.op == "QuantizedMean_8" and not has_slot(src, "out_max"):
        return input_floor(ed, *slots(src, "in_min", "in_max"), up)
    if src.op == "AutoQuantize":
        return DEVICE_MIN_WIDTH, False
    width = floored_width(ed, src)
    if width is not None:
        return width, False
    if src.op in SUPERNODE_DEFAULTS and has_slot(src, "out_max"):
        spec = const_scalar(ed, slot(src, "out_min")), const_scalar(ed, slot(src, "out_max"))
        if spec[0] is None or spec[1] is None:
            return None
        init = snf.setup_range(spec[0], spec[1], SUPERNODE_DEFAULTS[src.op])
        if isinstance(init, str):
            return None
        # the zero fix after a retry moves an end by less than a step of the range
        return float(init.hi - init.lo) * (1.0 - 2.0 / 255.0), True
    return None
