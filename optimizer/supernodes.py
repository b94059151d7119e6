"""mark_biasadd_nodes, make_reluX_nodes, make_supernodes (hexagon_nn_prepare_notes.txt, "Order of
Optimization Passes"; SEMANTICS.md §3-§6 for what each fusion does to the arithmetic).

- mark_biasadd_nodes: QuantizedAdd_8p8to32 whose B input is a Const shaped
  ``[1,1,1,d]`` (d > 1, d = A's depth) -> QuantizedBiasAdd_8p8to32 (bit-exact:
  the two kernels share one formula).
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
  dwconv_extrachecks): Const filter with width 3 and depth multiplier 1, Const
  stride of width <= 2, and no channel scale (the op takes none).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hexnn_import.graph import NNPad, Node, Ref
from hexnn_import.ops.quant import quantize_u8
from hexnn_import.ops.supernode_core import K_LOW
from hexnn_import.optimizer.consts import create_const_float_op, do_prepend_const_node, new_internal_node_id
from hexnn_import.optimizer.edits import replace_nodes
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.fusion_match import End, match_conv_chain, match_tail, reads_qtriple
from hexnn_import.optimizer.lookup import find_node_must_be_Const_from_ref, find_unique_consumer_mustbe
from hexnn_import.optimizer.op_classes import OpClass
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.ranges import const_array, const_scalar, output_range

#: product op -> (fused op with quint8 bias, fused op with qint32 bias)
FUSED_OPS: dict[str, tuple[str, str]] = {
    "QuantizedConv2d_8x8to32": ("Supernode_8x8p8to8", "Supernode_8x8p32to8"),
    "QuantizedDepthwiseConv2d_8x8to32": ("DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8"),
    "QuantizedMatMul_8x8to32": ("Supernode_8x8p8to8", "Supernode_8x8p32to8"),
}


def end_ref(ed: GraphEditor, end: End) -> Ref:
    """An output-range end as a ref (a float becomes a cached scalar Const)."""
    return end if isinstance(end, Ref) else Ref(create_const_float_op(ed, end), 0)


def depthwise_ok(ed: GraphEditor, conv: Node) -> bool:
    """prepare.c's dwconv_extrachecks: Const filter [fh, 3, din, 1], Const stride of width <= 2."""
    w = find_node_must_be_Const_from_ref(ed, conv.inputs[1])
    s = find_node_must_be_Const_from_ref(ed, conv.inputs[6])
    return (w is not None and s is not None and s.output_defs[0].shape[2] <= 2
            and w.output_defs[0].shape[3] == 1 and w.output_defs[0].shape[1] == 3)


@dataclass(frozen=True)
class MarkBiasaddNodes(PatternPass):
    """QuantizedAdd_8p8to32 with a Const ``[1,1,1,d]`` B -> QuantizedBiasAdd_8p8to32."""

    name: str = "mark_biasadd_nodes"
    requires: ClassVar[OpClass] = OpClass.ADD32
    roots: ClassVar[frozenset[str]] = frozenset({"QuantizedAdd_8p8to32"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        bias = find_node_must_be_Const_from_ref(ed, node.inputs[1])
        src = ed.known(node.inputs[0].src_id)
        if bias is None or src is None:
            return False
        b, h, w, d = bias.output_defs[0].shape
        if (b, h, w) != (1, 1, 1) or d <= 1 or src.output_defs[node.inputs[0].output_idx].shape[3] != d:
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
        x = const_scalar(ed, node.inputs[4])
        relu = find_unique_consumer_mustbe(ed, node, "QuantizedRelu_8")
        rng = output_range(ed, node)
        if x is None or relu is None or rng is None or not reads_qtriple(relu, node):
            return False
        if quantize_u8(np.array([x]), *rng)[0] != 255:  # X would clip below the top code: not exact
            return False
        new = ed.make_node("QuantizedReluX_8", [*relu.inputs[:3], node.inputs[4]], relu.output_defs,
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
        ends = [end_ref(ed, tail.lo), end_ref(ed, tail.hi)]
        new = ed.make_node("QuantizedAdd_8p8to8", [*add.inputs[:6], *ends], tail.last.output_defs, add.padding,
                           tail.last.name, node_id=tail.last.node_id)
        replace_nodes(ed, None, new, tail.last, add, *tail.nodes[:-1])
        return True

    @staticmethod
    def _scales(ed: GraphEditor, scale: Node, dout: int) -> Ref | None:
        """The channel-scale ref for the supernode: ``dout`` values in (1/2048, 1], else None."""
        k = const_array(ed, scale.inputs[1])
        if k is None or k.size not in (1, dout):
            return None
        k = k.astype(np.float32).reshape(-1)
        if not np.all((k > K_LOW) & (k <= 1.0)):
            return None
        if k.size == dout:
            return scale.inputs[1]
        nid = new_internal_node_id(ed)
        do_prepend_const_node(ed, nid, 1, 1, 1, dout, np.full(dout, k[0], np.float32), "float")
        return Ref(nid, 0)

    def _fuse_conv(self, conv: Node, ed: GraphEditor) -> bool:
        depthwise = conv.op == "QuantizedDepthwiseConv2d_8x8to32"
        if depthwise and not depthwise_ok(ed, conv):
            return False
        chain = match_conv_chain(ed, conv)
        if chain is None or (depthwise and chain.scale is not None):
            return False
        dout = conv.output_defs[0].shape[3]
        bias = const_array(ed, chain.bias_add.inputs[1])
        if bias is None or bias.size != dout:
            return False
        k_ref = None if chain.scale is None else self._scales(ed, chain.scale, dout)
        if chain.scale is not None and k_ref is None:
            return False
        padding = conv.padding
        head = list(conv.inputs[:7])
        if conv.op == "QuantizedMatMul_8x8to32":
            stride = new_internal_node_id(ed)
            do_prepend_const_node(ed, stride, 1, 1, 1, 1, None, "uint8")
            head, padding = [*conv.inputs[:6], Ref(stride, 0)], NNPad.VALID
        b = chain.bias_add.inputs
        tail = chain.tail
        inputs = [*head, b[1], b[4], b[5], end_ref(ed, tail.lo), end_ref(ed, tail.hi)]
        if k_ref is not None:
            inputs.append(k_ref)
        op = FUSED_OPS[conv.op][chain.bias32]
        new = ed.make_node(op, inputs, tail.last.output_defs, padding, tail.last.name, node_id=tail.last.node_id)
        replace_nodes(ed, None, new, *chain.removed)
        return True
