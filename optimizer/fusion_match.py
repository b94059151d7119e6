"""Pattern matching for make_supernodes: the requantize (+ relu) tail and the conv head.

hexagon_nn_prepare_notes.txt, "Classes of Modifications" phase [A]: find
the pattern and everything the rewrite needs without touching the graph.
Each node of a pattern except the last must feed only the next one
(find_unique_consumer, so every other input of the next node is a Const),
and each must read its predecessor's data/min/max outputs in the expected
slots. Output range ends are kept as refs or as float values (made into
Consts only when the rewrite happens).

Output range of the fused node (prepare.c's extract_min_max_from_relu, made
exact where the Relu would clip more than the new range):

- Requantize_32to8: its out_min/out_max (zero-fixed values when a Const range
  leaves out 0, as the Requantize itself does); QuantizeDownAndShrinkRange:
  -inf/+inf (auto);
- then QuantizedRelu_8: min 0; QuantizedReluX_8 (X > 0): min 0, max
  ``min(requantize max, X)`` (X when auto); QuantizedClamp_8 (``lo <= 0 <= hi``):
  ``[max(requantize min, lo), min(requantize max, hi)]``. A relu whose bound is
  not a Const, or a clamp that excludes 0 (a supernode range must hold 0), is
  left out of the pattern.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

from hexnn_import.graph import Node, Ref
from hexnn_import.ops.quant import adjust_range
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.lookup import find_node_must_be_Const_from_ref, find_unique_consumer, reads_outputs
from hexnn_import.ops.op_groups import RELU_OPS, REQUANT32_OPS
from hexnn_import.optimizer.ranges import const_scalar
from hexnn_import.optimizer.slots import QTRIPLE, slot, slot_index, slots

#: An output range end: an existing ref, or a float value to be made a Const.
End = Union[Ref, float]


@dataclass
class Tail:
    """The requantize and optional relu ending a pattern; ``nodes[-1]`` is the last op."""

    nodes: list[Node] = field(default_factory=list)
    lo: End = -math.inf
    hi: End = math.inf

    @property
    def last(self) -> Node:
        """The node whose id and outputs the fused node takes over."""
        return self.nodes[-1]


def reads_qtriple(node: Node, src: Node, data: int | str = 0, lo: int | str = 1, hi: int | str = 2) -> bool:
    """``node`` reads ``src``'s outputs 0, 1, 2 in its slots ``data``, ``lo``, ``hi`` (positions, or slot
    names of ``node``'s op)."""
    at = [i if isinstance(i, int) else slot_index(node.op, i, node.label) for i in (data, lo, hi)]
    return reads_outputs(node, at[:1], src) and reads_outputs(node, at[1:], src, first=1)


def _value(ed: GraphEditor, end: End) -> float | None:
    return end if isinstance(end, float) else const_scalar(ed, end)


def _relu_ends(ed: GraphEditor, relu: Node, lo: End, hi: End) -> tuple[End, End] | None:
    """The range after the relu, or None when it cannot be expressed exactly."""
    if relu.op == "QuantizedRelu_8":
        return 0.0, hi
    if relu.op == "QuantizedReluX_8":
        x, h = const_scalar(ed, slot(relu, "x")), _value(ed, hi)
        if x is None or h is None or not x > 0:
            return None
        return 0.0, (hi if h <= x else slot(relu, "x"))
    clamp_lo, clamp_hi = slots(relu, "clamp_min", "clamp_max")
    c_lo, c_hi = const_scalar(ed, clamp_lo), const_scalar(ed, clamp_hi)
    l_val, h_val = _value(ed, lo), _value(ed, hi)
    if c_lo is None or c_hi is None or l_val is None or h_val is None or not c_lo <= 0.0 <= c_hi:
        return None
    return (lo if l_val >= c_lo else clamp_lo), (hi if h_val <= c_hi else clamp_hi)


def match_tail(ed: GraphEditor, src: Node, relu: bool = True) -> Tail | None:
    """The requantize consuming ``src`` (qint32 data, min, max) and an optional relu after it (``relu``
    False: the requantize alone)."""
    q = find_unique_consumer(ed, src, REQUANT32_OPS)
    if q is None or not reads_qtriple(q, src):
        return None
    tail = Tail([q])
    if q.op == "Requantize_32to8":
        tail.lo, tail.hi = slots(q, "out_min", "out_max")
        lo, hi = const_scalar(ed, tail.lo), const_scalar(ed, tail.hi)
        if lo is not None and hi is not None and not lo <= 0.0 <= hi:
            # Requantize zero-fixes a range without 0 (SEMANTICS §4); a supernode range must hold 0
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                return None
            tail.lo, tail.hi = adjust_range(lo, hi)
    act = find_unique_consumer(ed, q, RELU_OPS) if relu else None
    if act is not None and reads_qtriple(act, q):
        ends = _relu_ends(ed, act, tail.lo, tail.hi)
        if ends is not None:
            tail.nodes.append(act)
            tail.lo, tail.hi = ends
    return tail


@dataclass
class ConvChain:
    """conv -> [channel scale] -> bias add -> tail (bias32), or conv -> [channel scale] -> requantize -> bias
    add -> tail (bias8): prepare.c try_make_supernode_flavored."""

    conv: Node
    bias_add: Node
    tail: Tail
    scale: Node | None = None
    qdown0: Node | None = None

    @property
    def bias32(self) -> bool:
        """True for the qint32-bias form (QuantizedBiasAdd_32p32to32)."""
        return self.bias_add.op == "QuantizedBiasAdd_32p32to32"

    @property
    def removed(self) -> list[Node]:
        """Every node the fused node replaces, the product first (prepare.c's replace_nodes puts the
        supernode where the conv was: a chain with other nodes in between keeps the C's order)."""
        chain = [self.conv, self.scale, self.qdown0, self.bias_add, *self.tail.nodes]
        return [n for n in chain if n is not None]


def match_conv_chain(ed: GraphEditor, conv: Node, relu: bool = True) -> ConvChain | None:
    """The bias / requantize / relu chain after an 8x8 -> 32 product, or None (``relu`` False: the chain
    ends at the requantize)."""
    nxt = find_unique_consumer(ed, conv, {"QuantizedChannelScale_32xf", "QuantizedBiasAdd_32p32to32", *REQUANT32_OPS})
    if nxt is None:
        return None
    scale = None
    if nxt.op == "QuantizedChannelScale_32xf":
        # prepare.c (allow_channelscale): reads the product's outputs 0..2 in its slots 0, 2, 3, Const scales
        if not reads_qtriple(nxt, conv, *QTRIPLE) or find_node_must_be_Const_from_ref(ed, slot(nxt, "scale")) is None:
            return None
        scale = nxt
        nxt = find_unique_consumer(ed, scale, {"QuantizedBiasAdd_32p32to32", *REQUANT32_OPS})
        if nxt is None:
            return None
    up = scale or conv
    if nxt.op == "QuantizedBiasAdd_32p32to32":
        bias_add, qdown0 = nxt, None
        if not reads_qtriple(bias_add, up, *QTRIPLE):
            return None
    else:
        qdown0 = nxt
        bias_add = find_unique_consumer(ed, qdown0, {"QuantizedBiasAdd_8p8to32"})
        if not reads_qtriple(qdown0, up) or bias_add is None or not reads_qtriple(bias_add, qdown0, *QTRIPLE):
            return None
    tail = match_tail(ed, bias_add, relu)
    return None if tail is None else ConvChain(conv, bias_add, tail, scale, qdown0)
