"""A floor under a run-time data range that a conv reads, so that its fused node (or its chain) holds the bias
for every input (:func:`~.bias_fit_chain.reason_to_keep` calls it; docs/architecture.md, "One owner per transformation").

QuantizeDownAndShrinkRange_32to8 (op_requantize.c ``do_autorequantize_execute``) reports
``[level * min(0, min x), level * max(0, max x)]`` zero-fixed by ``quantize_adjust_range``: no minimum width
(all-zero data gives ``[0, 0]``; nearly constant data one product step). A Supernode reading it divides its
bias by ``prod = in_level * w_level`` in fill_bias_buf and refuses ("Final too big, will cause overflow") once
that range is narrow enough; the chain's QuantizedBiasAdd_32p32to32 does not refuse but saturates the
rescaled bias. The same op is, in hexagon_nn's own C, RequantizationRange_32 (``do_requantrange_execute``:
the same float32 ends) followed by Requantize_32to8 (``do_requantize_execute``: the same
``quantize_adjust_range`` and ``nn_requantize_i32_to_qu8_hvx``) - so the shrink is rewritten as::

    RequantizationRange_32 -> (Minimum_f(min, 0), Maximum_f(max, W)) -> Requantize_32to8

which gives the same bits wherever the data's max is at least ``W`` and otherwise the range ``[min, W]``
(the ``Maximum_f`` on a max is what emit_recurrent already does for a zero range).

AutoQuantize (op_quantize.c ``autoquantize_execute_opt``) reports ``[min(0, min x), max(0, max x)]``, only
``1e-18`` wide at least (``find_scaling_for_hvx_quant``): a blank input gives ``[-0.0, 1e-18]``. It is
rewritten the same way, as its float parts::

    Min_f, Max_f (whole tensor) -> (Minimum_f(min, 0), Maximum_f(max, W)) -> Quantize

(``quantize_execute_opt`` picks its scaling with the same ``find_scaling_for_hvx_quant``: the same codes and
range wherever the data's max is at least ``W``, but for a minimum of ``+0.0`` where AutoQuantize reports
``-0.0``); prepare.c's ``try_make_autoquantize`` turns back only a Quantize reading Min_f / Max_f themselves.

``W`` is the least power of two at which the consumer's chosen form is exact for every range its input can
then have (tried as :func:`.bias_fit.gather` tries a floor): an input narrower than ``W`` carries less than the
bias, which dominates the layer, and coarsening it onto ``W`` costs at most half a step of ``W`` per tap.
"""
from __future__ import annotations

import math

import numpy as np
from hexnn_import.optimizer.consts import create_const_float_op
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.edits import insert_nodes, replace_nodes
from hexnn_import.ops.op_groups import MORE_PASSTHROUGH_OPS, PASSTHROUGH_OPS, SPLIT_OPS
from hexnn_import.optimizer.ranges import MAX_DEPTH, const_scalar
from hexnn_import.optimizer.slots import QTRIPLE, part, run_count, slot, slots, with_slots

from hexnn_import.graph import NNPad, Node, OutputDef, Ref

SHRINK = "QuantizeDownAndShrinkRange_32to8"
AUTOQ = "AutoQuantize"
#: the op that reports a floored range, and the slot of its max: a floored shrink's, a floored AutoQuantize's
FLOORED_MAX = {"Requantize_32to8": "out_max", "Quantize": "in_max"}
#: the floors tried: 2**LOW_EXP ... 2**HIGH_EXP
LOW_EXP, HIGH_EXP = -64, 16


def through(op: str) -> bool:
    """True when ``op`` reports the range of its in_min / in_max inputs as its own (a split too: it passes
    its input's range on to each part, :data:`.op_groups.SPLIT_OPS`)."""
    return op in PASSTHROUGH_OPS or op in MORE_PASSTHROUGH_OPS or op in SPLIT_OPS


def range_outputs(node: Node) -> tuple[int, int]:
    """The output indices of ``node``'s min and max: 1, 2, or n, n + 1 after a split's n parts."""
    if node.op in SPLIT_OPS:
        n = len(node.output_defs) - 2
        return n, n + 1
    return 1, 2


def range_source(ed: GraphEditor, lo: Ref, hi: Ref) -> Node | None:
    """The node whose min / max outputs report the range ``lo``, ``hi`` name, past the ops that pass it on
    (:func:`through`, the splits among them: YOLOv8's C2f splits a SiLU's shrink between convs)."""
    for _ in range(MAX_DEPTH):
        src = ed.known(lo.src_id)
        if lo.src_id != hi.src_id or src is None or (lo.output_idx, hi.output_idx) != range_outputs(src):
            return None
        if not through(src.op):
            return src
        lo, hi = slots(src, "in_min", "in_max")
    return None


def union_part(ed: GraphEditor, node: Node) -> Node | None:
    """The first part of a :data:`.op_groups.UNION_OPS` node whose range comes from a shrink (the union is
    at least as wide as each part, so a floor on one part floors it: a neck's Concat of an upsampled and a
    lateral SiLU in YOLOv8), or None."""
    for i in range(run_count(node)):
        src = range_source(ed, part(node, "in_min", i), part(node, "in_max", i))
        if src is not None and src.op == SHRINK:
            return src
    return None


def floored_width(ed: GraphEditor, node: Node) -> float | None:
    """``W`` when ``node`` is the Requantize_32to8 of a floored shrink or the Quantize of a floored AutoQuantize
    (module doc), else None."""
    if node.op not in FLOORED_MAX or len(node.inputs) < (5 if node.op == "Requantize_32to8" else 3):
        return None
    mx = ed.known(slot(node, FLOORED_MAX[node.op]).src_id)
    if mx is None or mx.op != "Maximum_f" or len(mx.inputs) != 2:
        return None
    w = const_scalar(ed, slot(mx, "b"))
    return w if w is not None and math.isfinite(w) and w > 0 else None


def least_floor(fits) -> float | None:  # type: ignore[no-untyped-def]
    """The least ``2**n`` (LOW_EXP <= n <= HIGH_EXP) with ``fits(2**n)``, by bisection (what fits grows with
    the floor: :func:`.bias_fit.gather`), or None when even ``2**HIGH_EXP`` does not."""
    lo, hi = LOW_EXP, HIGH_EXP
    if not fits(2.0 ** hi):
        return None
    if fits(2.0 ** lo):
        return 2.0 ** lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(2.0 ** mid) else (mid, hi)
    return 2.0 ** hi


def floor_range(ed: GraphEditor, src: Node, width: float) -> Node:
    """Give ``src`` (a shrink or an AutoQuantize, or one already floored) a floor of at least ``width`` (module
    doc); returns the Requantize_32to8 / Quantize that now reports the range (``src``'s id: its consumers stay)."""
    w_ref = Ref(create_const_float_op(ed, float(np.float32(width))), 0)
    if src.op == AUTOQ:
        return _floor_autoquantize(ed, src, w_ref)
    if src.op != SHRINK:
        mx = ed.known(slot(src, FLOORED_MAX[src.op]).src_id)
        assert mx is not None
        ed.rewire(mx, with_slots(mx, {"b": w_ref}))
        return src
    name = src.name or f"node{src.node_id}"
    scalar = OutputDef.scalar
    rr = ed.make_node("RequantizationRange_32", slots(src, *QTRIPLE), [scalar(), scalar()], NNPad.NA,
                      f"{name}/range")
    mx = ed.make_node("Maximum_f", [Ref(rr.node_id, 1), w_ref], [scalar()], NNPad.NA, f"{name}/floor")
    # the min through Minimum_f(min, 0) (the same value: RequantizationRange_32's min is never above 0), so that
    # hexagon_nn_prepare, run again on the emitted graph, does not fuse the pair back: prepare.c's
    # try_fuse_requantization_range takes the Requantize_32to8 that reads output 0 (graphops.c
    # find_unique_consumer looks at no other output) and would leave the Maximum_f reading a node it removed
    # ("can't find id" on the device)
    zero = Ref(create_const_float_op(ed, 0.0), 0)
    mn = ed.make_node("Minimum_f", [Ref(rr.node_id, 0), zero], [scalar()], NNPad.NA, f"{name}/min")
    rq = ed.make_node("Requantize_32to8", [*slots(src, *QTRIPLE), Ref(mn.node_id, 0), Ref(mx.node_id, 0)],
                      src.output_defs, src.padding, src.name, node_id=src.node_id)
    replace_nodes(ed, None, rq, src)
    insert_nodes(ed, rq, rr, mn, mx)
    return rq


def _floor_autoquantize(ed: GraphEditor, src: Node, w_ref: Ref) -> Node:
    """AutoQuantize ``src`` as ``Quantize(x, Minimum_f(Min_f(x), 0), Maximum_f(Max_f(x), W))`` (module doc)."""
    name = src.name or f"node{src.node_id}"
    scalar, x = OutputDef.scalar, slot(src, "data")
    lo = ed.make_node("Min_f", [x], [scalar()], NNPad.NA, f"{name}/data_min")
    hi = ed.make_node("Max_f", [x], [scalar()], NNPad.NA, f"{name}/data_max")
    zero = Ref(create_const_float_op(ed, 0.0), 0)
    mn = ed.make_node("Minimum_f", [Ref(lo.node_id, 0), zero], [scalar()], NNPad.NA, f"{name}/min")
    mx = ed.make_node("Maximum_f", [Ref(hi.node_id, 0), w_ref], [scalar()], NNPad.NA, f"{name}/floor")
    q = ed.make_node("Quantize", [x, Ref(mn.node_id, 0), Ref(mx.node_id, 0)], src.output_defs, src.padding,
                     src.name, node_id=src.node_id)
    replace_nodes(ed, None, q, src)
    insert_nodes(ed, q, lo, hi, mn, mx)
    return q
