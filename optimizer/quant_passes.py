"""The first prepare passes: simplify quantization patterns (hexagon_nn_prepare_notes.txt, "Order
of Optimization Passes": "simplification of certain operations").

- make_autorequantize: RequantizationRange_32 whose only consumer is a
  Requantize_32to8 reading the same data and the range's two outputs ->
  QuantizeDownAndShrinkRange_32to8 (same arithmetic, SEMANTICS §4).
- make_autoquantize: Quantize whose range comes from Min_f/Max_f of its own
  data (full reductions) -> AutoQuantize; an AutoQuantize of a float Const of
  at most 8192 elements is folded into quint8/min/max Consts computed by the
  AutoQuantize kernel itself (bit-exact).
- remove_unnecessary_quants: Dequantize -> AutoQuantize: readers of the
  AutoQuantize read the Dequantize's inputs (the quint8 data unchanged; the
  range is the Dequantize's instead of the data's own, so later rounding can
  move by up to one step).
- remove_unnecessary_dequant_quants: Dequantize -> Quantize (Const range).
  When the Quantize's zero-fixed range equals the one the data already has
  (:func:`ranges.static_range`) its readers read the Dequantize's inputs: the
  codes round-trip exactly. Otherwise the pair becomes one Requantize_8to8 to
  the Quantize's zero-fixed range (fixed-point gain: within one output LSB).
- remove_unnecessary_requants: Requantize_8to8 whose requested range is the
  range its input already has: a code copy, bypassed (exact).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hexnn_import.errors import OpError
from hexnn_import.graph import Node, Ref
from hexnn_import.ops.quant import adjust_range
from hexnn_import.optimizer.consts import create_const_float_op, do_prepend_const_node, new_internal_node_id
from hexnn_import.optimizer.edits import change_multi_output_refs_table, replace_nodes
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.lookup import (CONSUMER_NOINCHECK, find_node_must_be, find_unique_consumer_mustbe,
                                           reads_outputs, same_refs)
from hexnn_import.ops.op_groups import OpClass
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.ranges import Range, const_array, const_scalar, f32, static_range
from hexnn_import.optimizer.slots import QTRIPLE, slot, slot_indices, slots

#: remove_unnecessary_dequant_quants leaves a Dequantize -> Quantize pair alone when the Quantize range is
#: narrower than this and the Dequantize range is not static: Requantize_8to8 refuses gains of 2**15 and more,
#: while the pair computes with any sane range (SEMANTICS §1; a pass-applicability limit, never an error).
REWRITE_MIN_WIDTH = 1e-8
#: make_autoquantize folds AutoQuantize of float Consts up to this many elements (prepare.c's limit).
FOLD_MAX_ELEMENTS = 8192


def bypass(ed: GraphEditor, node: Node, refs: list[Ref]) -> bool:
    """Readers of ``node``'s outputs 0..len(refs)-1 read ``refs`` instead; False if nothing reads it."""
    if not ed.graph.is_referenced(node.node_id):
        return False
    change_multi_output_refs_table(ed, node, node.node_id, len(refs), refs)
    return True


def zero_fixed_f32(rng: Range) -> Range | None:
    """float32 ends that adjust_range leaves unchanged, near ``adjust_range(rng)`` (None if none is found)."""
    lo, hi = (f32(v) for v in adjust_range(*rng))
    for _ in range(4):
        fixed = adjust_range(lo, hi)
        if fixed == (lo, hi):
            return (lo, hi) if hi - lo > 0.0 else None
        lo, hi = (f32(v) for v in fixed)
    return None


@dataclass(frozen=True)
class MakeAutorequantize(PatternPass):
    """RequantizationRange_32 + Requantize_32to8 on the same inputs -> QuantizeDownAndShrinkRange_32to8."""

    name: str = "make_autorequantize"
    requires: ClassVar[OpClass] = OpClass.REQUANTRANGE | OpClass.REQUANT32
    roots: ClassVar[frozenset[str]] = frozenset({"RequantizationRange_32"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        rq = find_unique_consumer_mustbe(ed, node, "Requantize_32to8", CONSUMER_NOINCHECK)
        if (rq is None or not same_refs(node, rq, 3)
                or not reads_outputs(rq, slot_indices(rq, "out_min", "out_max"), node)):
            return False
        new = ed.make_node("QuantizeDownAndShrinkRange_32to8", slots(node, *QTRIPLE), rq.output_defs, rq.padding,
                           rq.name, node_id=rq.node_id)
        replace_nodes(ed, None, new, node, rq)
        return True


@dataclass(frozen=True)
class MakeAutoquantize(PatternPass):
    """Quantize(x, Min_f(x), Max_f(x)) -> AutoQuantize(x); AutoQuantize(float Const) -> Consts."""

    name: str = "make_autoquantize"
    requires: ClassVar[OpClass] = OpClass.QUANTIZE
    roots: ClassVar[frozenset[str]] = frozenset({"Quantize", "AutoQuantize"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        if node.op == "AutoQuantize":
            return self._fold_const(node, ed)
        mn = find_node_must_be(ed, slot(node, "in_min").src_id, "Min_f")
        mx = find_node_must_be(ed, slot(node, "in_max").src_id, "Max_f")
        data = [slot(node, "data")]
        if mn is None or mx is None or mn.inputs != data or mx.inputs != data:
            return False
        new = ed.make_node("AutoQuantize", data, node.output_defs, node.padding, node.name,
                           node_id=node.node_id)
        replace_nodes(ed, None, new, node)  # the worklist visits `new` again for the Const fold
        return True

    @staticmethod
    def _fold_const(node: Node, ed: GraphEditor) -> bool:
        arr = const_array(ed, slot(node, "data"))
        if arr is None or arr.dtype != np.float32 or arr.size > FOLD_MAX_ELEMENTS:
            return False
        if not ed.graph.is_referenced(node.node_id):
            return False
        from hexnn_import.ops.registry import run_op

        try:
            q, lo, hi = run_op("AutoQuantize", [arr], node=node.label)
        except OpError:  # NaN/Inf in the Const: leave the node, it reports the error when run
            return False
        qid = new_internal_node_id(ed)
        do_prepend_const_node(ed, qid, *q.shape, q, "uint8", name=f"{node.name}/folded" if node.name else "")
        refs = [Ref(qid, 0), Ref(create_const_float_op(ed, lo.item()), 0), Ref(create_const_float_op(ed, hi.item()), 0)]
        return bypass(ed, node, refs)


@dataclass(frozen=True)
class RemoveUnnecessaryQuants(PatternPass):
    """Dequantize -> AutoQuantize: readers of the AutoQuantize read the Dequantize's quint8 inputs."""

    name: str = "remove_unnecessary_quants"
    requires: ClassVar[OpClass] = OpClass.QUANTIZE | OpClass.DEQUANTIZE
    roots: ClassVar[frozenset[str]] = frozenset({"AutoQuantize"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        data = slot(node, "data")
        deq = find_node_must_be(ed, data.src_id, "Dequantize")
        if deq is None or data.output_idx != 0:
            return False
        return bypass(ed, node, slots(deq, *QTRIPLE))


@dataclass(frozen=True)
class RemoveUnnecessaryDequantQuants(PatternPass):
    """Dequantize -> Quantize (Const range): bypassed when the ranges agree, else one Requantize_8to8."""

    name: str = "remove_unnecessary_dequant_quants"
    requires: ClassVar[OpClass] = OpClass.QUANTIZE | OpClass.DEQUANTIZE
    roots: ClassVar[frozenset[str]] = frozenset({"Quantize"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        data = slot(node, "data")
        deq = find_node_must_be(ed, data.src_id, "Dequantize")
        lo, hi = (const_scalar(ed, r) for r in slots(node, "in_min", "in_max"))
        if deq is None or data.output_idx != 0 or lo is None or hi is None:
            return False
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            return False
        want = zero_fixed_f32((lo, hi))
        if want is None:
            return False
        have = static_range(ed, *slots(deq, "in_min", "in_max"))
        if have is None and want[1] - want[0] < REWRITE_MIN_WIDTH:
            return False
        if have is not None and (have[1] - have[0]) / (want[1] - want[0]) >= 2.0 ** 15:
            return False  # Requantize_8to8 would refuse the gain; the pair computes
        if have == tuple(f32(v) for v in adjust_range(lo, hi)):
            return bypass(ed, node, slots(deq, *QTRIPLE))
        ends = [Ref(create_const_float_op(ed, v), 0) for v in want]
        new = ed.make_node("Requantize_8to8", [*slots(deq, *QTRIPLE), *ends], node.output_defs, node.padding,
                           node.name, node_id=node.node_id)
        replace_nodes(ed, None, new, node)
        return True


@dataclass(frozen=True)
class RemoveUnnecessaryRequants(PatternPass):
    """Requantize_8to8 to the range its input already has: bypassed (a code copy)."""

    name: str = "remove_unnecessary_requants"
    requires: ClassVar[OpClass] = OpClass.REQUANT8
    roots: ClassVar[frozenset[str]] = frozenset({"Requantize_8to8"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        have = static_range(ed, *slots(node, "in_min", "in_max"))
        if have is None or have != static_range(ed, *slots(node, "out_min", "out_max")):
            return False
        return bypass(ed, node, slots(node, *QTRIPLE))
