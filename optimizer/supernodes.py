"""mark_biasadd_nodes, make_reluX_nodes, make_supernodes (hexagon_nn_prepare_notes.txt, "Order of
Optimization Passes"; SEMANTICS.md §3-§6 for what each fusion does to the arithmetic).

- mark_biasadd_nodes: QuantizedAdd_8p8to32 whose B input is a Const shaped
  ``[1,1,1,d]`` (d > 1, d = A's depth) -> QuantizedBiasAdd_8p8to32, as prepare.c
  does; in nnlib the two ops compute differently (gains in the ratio of the steps
  vs op_biasadd.c's; zero codes from get_qu8_level_size_zero vs quantize_uint), so
  the result can move by a step of each operand where a range has no exact zero.
- make_reluX_nodes: Requantize_32to8 with a Const max whose only consumer is
  a QuantizedRelu_8 -> the Relu becomes QuantizedReluX_8 with X = that max.
  Done only where ``quantize(X)`` is code 255 on the zero-fixed range, so the
  new clip never bites (bit-exact).
- make_supernodes (:mod:`.fusion_match` finds the patterns):
  conv / depthwise / matmul -> [channel scale] -> bias add (32p32) ->
  requantize -> [relu] and conv -> requantize -> bias add (8p8) -> requantize
  -> [relu] become one Supernode / DepthwiseSupernode (p32 or p8 bias) with
  the output range of the tail; a matmul ``[1,1,M,K] x [1,1,K,N]`` becomes a
  1x1 VALID Supernode (SuperFC_8x8p32to8 is not in the op set).
  QuantizedAdd_8p8to32 -> requantize -> [relu] becomes QuantizedAdd_8p8to8.
  The fused node rounds once instead of at each stage: its output is within
  one step of the coarser of the two output ranges (the 8-bit-bias form also
  drops the rounding of the intermediate 8-bit tensor).
  Depthwise convolutions fuse under the device's conditions (prepare.c
  dwconv_extrachecks): Const filter (output 0) of height >= 2, width 3, 5
  or 7 and depth multiplier 1, Const stride (output 0) of width <= 2.
  A QuantizedChannelScale_32xf right after the product (Const scales,
  ReplaceConv_SuperNode / ReplaceConv_DwiseSuperNode ``allow_channelscale``)
  is fused too: its scale ref becomes the supernode's 13th input as it is,
  whatever the values (prepare.c does not look at them; the op's check does).

:func:`fuse_conv` is the one implementation of the conv fusion: make_supernodes calls it on every
product, and the importers call it (:func:`fuse_declared`, at the end of an import) on the chains whose
fusion the source format fixes - a quantized TFLite / ONNX conv layer is one rounding onto its output
range, so its chain becomes a Supernode before any pass runs, under any depthwise geometry and without
the activation after it (the layer's own range decides that).

Where the fused node would refuse its bias at run time (hexagon_nn fill_bias_buf: "Final too big, will
cause overflow"), :func:`fuse_conv` does not fuse - the one deviation from prepare.c, which fuses
unconditionally: :mod:`.bias_fit` decides it from the Consts (input range as
:func:`.bias_fit_inputs.input_range` proves it, weights, bias, channel scales, output range; every output range
the execute loop can try), the canonical chain stays (it adds the bias in product steps, so it holds
what the fused node cannot; where even its qint32 product range cannot hold the bias, the conv reads its
input through a Requantize_8to8 onto a wider range first) and the graph's notes name the layer and the
reason.

A run-time input range (a float model without calibration) is decided from what its producer
guarantees (:func:`.bias_fit_inputs.input_floor`): an auto-range supernode's range never narrows (it
starts at its op's default and persists), so the node is checked at that floor; AutoQuantize's range is
each run's own, down to 1e-18 wide on a blank input (the device's), while the fused node keeps its output
range from run to run - with an auto output minimum nothing bounds ``-out_min / prod`` then, and the chain
(stateless: its shrink-range op takes each run's range) stays; either way the AutoQuantize gets a floor
(:mod:`.bias_fit_floor`), at which a Relu's minimum of 0 decides the fused node. A range
QuantizeDownAndShrinkRange_32to8 reports can be as narrow as the data and has no floor: it gets one
(:mod:`.bias_fit_floor`: the shrink as RequantizationRange_32 -> Maximum_f -> Requantize_32to8, the same
bits wherever the data reach the floor), the least at which the fused node holds its bias for every input.
An auto-range QuantizedAdd_8p8to8's range has no floor either and is not given one: those convs fuse as
prepare.c fuses them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hexnn_import.errors import GraphError
from hexnn_import.graph import Graph, NNPad, Node, Ref
from hexnn_import.ops.quant import quantize_u8
from hexnn_import.optimizer.consts import create_const_float_op, do_prepend_const_node, new_internal_node_id
from hexnn_import.optimizer.edits import replace_nodes
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.bias_fit_chain import output_floored, pending_product, reason_to_keep, run_time_source
from hexnn_import.optimizer.fusion_match import ConvChain, End, Tail, match_conv_chain, match_tail, reads_qtriple
from hexnn_import.optimizer.lookup import find_node_must_be_Const_from_ref, find_unique_consumer_mustbe
from hexnn_import.ops.op_groups import FUSED_OPS, OpClass
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.ranges import const_array, const_scalar, output_range
from hexnn_import.optimizer.slots import PRODUCT_OPERANDS, QTRIPLE, slot, slots

def end_ref(ed: GraphEditor, end: End) -> Ref:
    """An output-range end as a ref (a float becomes a cached scalar Const)."""
    return end if isinstance(end, Ref) else Ref(create_const_float_op(ed, end), 0)


def tail_refs(ed: GraphEditor, tail: Tail) -> list[Ref]:
    """``[lo, hi]`` refs of the fused node's output range, their Consts made in prepare.c's order.

    prepare.c's requantize_op_minmax_inputs takes the -inf and +inf Consts for a
    QuantizeDownAndShrinkRange tail before extract_min_max_from_relu looks at the relu (which
    may then replace them), so those two are made first even when unused: the prepended Consts
    then sit in the C's order.
    """
    if tail.nodes[0].op == "QuantizeDownAndShrinkRange_32to8":
        create_const_float_op(ed, -math.inf)
        create_const_float_op(ed, math.inf)
    return [end_ref(ed, tail.lo), end_ref(ed, tail.hi)]


def in_first_place(ed: GraphEditor, new: Node, removed: list[Node]) -> list[Node]:
    """``removed`` (the chain in order) with the node whose place ``new`` takes first.

    prepare.c's replace_nodes puts the fused node where the chain's first node was; its Consts are at
    the front by then (gather_const_nodes runs right before make_supernodes). That place is taken when
    every other input of ``new`` is a Const before it (or prepended since the list was last committed);
    else (a pass run alone on a graph whose Consts sit in between, a range computed by another node)
    ``new`` takes the last node's place, so it still reads only earlier nodes.
    """
    first = removed[0]
    where = ed.position(first)
    for r in new.inputs:
        if where is None:
            break
        if r in first.inputs:
            continue
        src = ed.known(r.src_id)
        at = ed.position(src) if src is not None else None
        if src is None or not src.is_const or (at is not None and at > where):
            break
    else:
        return removed
    return [removed[-1], *removed[:-1]]


#: Filter widths the depthwise supernode takes (prepare.c dwconv_extrachecks).
DWISE_FILTER_WIDTHS = frozenset({3, 5, 7})


def depthwise_ok(ed: GraphEditor, conv: Node) -> bool:
    """prepare.c's dwconv_extrachecks: Const filter ``[fh >= 2, 3|5|7, din, 1]`` and Const stride of
    width <= 2, each read at output 0."""
    wref, sref = slots(conv, "filter", "stride")
    w = find_node_must_be_Const_from_ref(ed, wref) if wref.output_idx == 0 else None
    s = find_node_must_be_Const_from_ref(ed, sref) if sref.output_idx == 0 else None
    if w is None or s is None:
        return False
    fh, fw, _, dmul = w.output_defs[0].shape
    return s.output_defs[0].shape[2] <= 2 and dmul == 1 and fh >= 2 and fw in DWISE_FILTER_WIDTHS


@dataclass(frozen=True)
class MarkBiasaddNodes(PatternPass):
    """QuantizedAdd_8p8to32 with a Const ``[1,1,1,d]`` B -> QuantizedBiasAdd_8p8to32."""

    name: str = "mark_biasadd_nodes"
    requires: ClassVar[OpClass] = OpClass.ADD32
    roots: ClassVar[frozenset[str]] = frozenset({"QuantizedAdd_8p8to32"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        a_ref, b_ref = slots(node, "a", "b")
        bias = find_node_must_be_Const_from_ref(ed, b_ref)
        src = ed.known(a_ref.src_id)
        if bias is None or src is None:
            return False
        b, h, w, d = bias.output_defs[0].shape
        if (b, h, w) != (1, 1, 1) or d <= 1 or src.output_defs[a_ref.output_idx].shape[3] != d:
            return False
        new = ed.make_node("QuantizedBiasAdd_8p8to32", node.inputs, node.output_defs, node.padding, node.name,
                           node_id=node.node_id)
        replace_nodes(ed, None, new, node)
        return True


@dataclass(frozen=True)
class MakeReluXNodes(PatternPass):
    """Requantize_32to8 (Const max) -> QuantizedRelu_8 becomes -> QuantizedReluX_8 (X = that max)."""

    name: str = "make_reluX_nodes"
    requires: ClassVar[OpClass] = OpClass.REQUANT32 | OpClass.RELU
    roots: ClassVar[frozenset[str]] = frozenset({"Requantize_32to8"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        x = const_scalar(ed, slot(node, "out_max"))
        relu = find_unique_consumer_mustbe(ed, node, "QuantizedRelu_8")
        rng = output_range(ed, node)
        if x is None or relu is None or rng is None or not reads_qtriple(relu, node):
            return False
        if quantize_u8(np.array([x]), *rng)[0] != 255:  # X would clip below the top code: not exact
            return False
        new = ed.make_node("QuantizedReluX_8", [*slots(relu, *QTRIPLE), slot(node, "out_max")], relu.output_defs,
                           node.padding, relu.name, node_id=relu.node_id)
        replace_nodes(ed, None, new, relu)
        return True


@dataclass(frozen=True)
class MakeSupernodes(PatternPass):
    """Product -> bias -> requantize -> [relu] chains to supernodes; add -> requantize -> [relu] to Add_8p8to8."""

    name: str = "make_supernodes"
    requires: ClassVar[OpClass] = OpClass.REQUANT32
    roots: ClassVar[frozenset[str]] = frozenset({*FUSED_OPS, "QuantizedAdd_8p8to32"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        if node.op == "QuantizedAdd_8p8to32":
            return self._fuse_add(node, ed)
        return self._fuse_conv(node, ed)

    @staticmethod
    def _fuse_add(add: Node, ed: GraphEditor) -> bool:
        tail = match_tail(ed, add)
        if tail is None:
            return False
        ends = tail_refs(ed, tail)
        operands = slots(add, "a", "b", "a_min", "a_max", "b_min", "b_max")
        new = ed.make_node("QuantizedAdd_8p8to8", [*operands, *ends], tail.last.output_defs, add.padding,
                           tail.last.name, node_id=tail.last.node_id)
        # prepare.c replace_nodes(nn, qadd_node_p, supernode, qadd, qdown, relu): in the add's place
        replace_nodes(ed, None, new, *in_first_place(ed, new, [add, *tail.nodes]))
        return True

    @staticmethod
    def _fuse_conv(conv: Node, ed: GraphEditor) -> bool:
        return fuse_conv(ed, conv) is not None


def fuse_conv(ed: GraphEditor, conv: Node, device_checks: bool = True, relu: bool = True) -> Node | None:
    """The product -> [channel scale] -> bias -> requantize [-> relu] chain of ``conv`` as one
    Supernode / DepthwiseSupernode (module doc), or None when it does not match or stays a chain
    because the fused node would refuse its bias (:func:`unfused_reason`).

    ``device_checks`` False skips prepare.c's depthwise conditions (the importers' fixed layers: the
    engine's DepthwiseSupernode takes any window); ``relu`` False leaves an activation after the chain
    where it is.
    """
    got = _fuse(ed, conv, device_checks, relu)
    return got if isinstance(got, Node) else None


def _fuse(ed: GraphEditor, conv: Node, device_checks: bool, relu: bool) -> Node | str | None:
    """:func:`fuse_conv`'s work: the fused node, the reason the chain stays (str), or None (no match)."""
    depthwise = conv.op == "QuantizedDepthwiseConv2d_8x8to32"
    if depthwise and device_checks and not depthwise_ok(ed, conv):
        return None
    chain = match_conv_chain(ed, conv, relu)
    if chain is None:
        return None
    dout = conv.output_defs[0].shape[3]
    bias = const_array(ed, slot(chain.bias_add, "bias"))
    if bias is None or bias.size != dout:
        return None
    k_ref = None if chain.scale is None else slot(chain.scale, "scale")
    op = FUSED_OPS[conv.op][chain.bias32]
    why = unfused_reason(ed, chain, k_ref, op)
    if why is not None:
        return why
    padding = conv.padding
    if conv.op == "QuantizedMatMul_8x8to32":
        stride = new_internal_node_id(ed)
        do_prepend_const_node(ed, stride, 1, 1, 1, 1, None, "uint8")
        stride_ref, padding = Ref(stride, 0), NNPad.VALID
    else:
        stride_ref = slot(conv, "stride")
    bias = slots(chain.bias_add, "bias", "bias_min", "bias_max")
    inputs = [*slots(conv, *PRODUCT_OPERANDS), stride_ref, *bias, *tail_refs(ed, chain.tail)]
    if k_ref is not None:
        inputs.append(k_ref)
    last = chain.tail.last
    new = ed.make_node(op, inputs, last.output_defs, padding, last.name, node_id=last.node_id)
    replace_nodes(ed, None, new, *in_first_place(ed, new, chain.removed))
    return new


def unfused_reason(ed: GraphEditor, chain: ConvChain, k_ref: Ref | None, op: str) -> str | None:
    """Why ``chain`` stays a chain (:func:`.bias_fit_chain.reason_to_keep`), or None to fuse it.

    First fuses the chain whose shrink reports ``chain``'s run-time input range where make_supernodes has
    not reached it yet (:func:`.bias_fit_chain.pending_product`): the range then comes from that
    supernode, and is looked at again."""
    while True:
        src = None if output_floored(ed, chain) else run_time_source(ed, chain)
        product = pending_product(ed, src)
        if product is None or fuse_conv(ed, product) is None:
            return reason_to_keep(ed, chain, k_ref, op, src)


def fuse_declared(graph: Graph, convs: list[Node]) -> None:
    """Fuse the chains an importer declared (module doc): each product in ``convs`` with its bias and
    requantize, whatever the depthwise geometry, leaving activations alone. A declared chain that does
    not match is the importer's own error (GraphError naming the node)."""
    if not convs:
        return
    ed = GraphEditor(graph)
    for conv in convs:
        if _fuse(ed, conv, device_checks=False, relu=False) is None:
            raise GraphError(f"node {conv.label} ({conv.op}): the importer declared its chain fixed, "
                             f"but it does not match a Supernode chain")
    ed.commit()
