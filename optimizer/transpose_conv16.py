"""create_transpose_conv_nodes for QuantizedTransposeConv2d_16x16p32to16, with the supernode make_supernodes
makes of its chain (hexagon_nn 2.14.1 prepare.c ``create_transpose_conv_nodes`` -> expand_transpose_conv_nodes.c
``expand_transpose_conv_nodes`` with ``transpose_conv_16_info``; prepare.c ``make_supernodes`` with
``ReplaceConv16_SuperNode``).

The C expands the 16-bit transposed conv as the 8-bit one (:mod:`.transpose_conv`), with QuantizedPad_u16,
QuantizedConv2d_16x16to32, QuantizedBiasAdd_32p32to32 and Requantize_32tou16; no filter padding to 32
(``allow_num_filter_pad`` 0), no depthwise path, the weights' zero code ``quantize_uint16(0, w_min, w_max)``
(include/quantize.h) and 16-bit weights. make_supernodes then fuses conv -> bias add -> Requantize_32tou16 into
one Supernode_16x16p32to16 in the conv's place, taking the Requantize's id and outputs, with the inputs the
conv's 7, the bias add's bias / bias min / bias max and the Requantize's output min / max (the transposed conv's
own). Nothing runs on the u16 chain between the two passes, so this pass builds the supernode directly - in the
C's order of creation: the ``[1,1,1,1]`` stride Const, the paddings Const and the QuantizedPad_u16 when the
input needs padding, the bias Const ``[1,1,1,k]``, the int32 split-dimension 3 (it dies later), the weights
``[r, s, din, k]``.

Done for stride 1 without channel scales or groups (the 16-bit op takes exactly 13 inputs), where the C's
chain ends in the Requantize and the supernode is VALID. With a stride above 1 the C ends the chain in a
DepthToSpace_16 and converts it to DepthToSpace_16_d32, an op the catalog lacks: such a node is left as it is
(the engine computes the transposed conv directly).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hexnn_import.graph import NNPad, Node, OutputDef, Ref
from hexnn_import.optimizer.consts import create_const_int32_op, do_prepend_const_node, new_internal_node_id
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.edits import replace_node_with
from hexnn_import.optimizer.lookup import find_node_must_be_Const_from_ref
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.slots import QTRIPLE, slot, slots
from hexnn_import.optimizer.transpose_conv import CONST_SLOTS, SCALAR, roundup, transpose_conv_weights
from hexnn_import.ops.op_groups import OpClass

OP = "QuantizedTransposeConv2d_16x16p32to16"
SUPERNODE16 = "Supernode_16x16p32to16"


def quantize_uint16(val: float, lo: float, hi: float) -> int:
    """include/quantize.h ``quantize_uint16`` in float32: ``sat_u16(roundf((val - lo) * 65536 / max(1e-18, hi - lo)))``."""
    f32 = np.float32
    rng = max(f32(1e-18), f32(f32(hi) - f32(lo)))
    v = f32(f32(val) - f32(lo)) * f32(f32(65536.0) / rng)
    r = np.floor(abs(float(v)) + 0.5) * (1 if v >= 0 else -1)  # roundf: half away from zero
    return int(min(65535, max(0, r)))


def as_i32(v: int) -> int:
    """A uint32_t of the C stored into an int32_t (wraps)."""
    return int(np.array([v & 0xFFFFFFFF], dtype=np.uint32).view(np.int32)[0])


def _scalar(node: Node) -> float:
    return float(np.asarray(node.data).reshape(-1)[0])


@dataclass(frozen=True)
class CreateTransposeConv16Nodes(PatternPass):
    """QuantizedTransposeConv2d_16x16p32to16 (stride 1) -> [QuantizedPad_u16] -> Supernode_16x16p32to16."""

    name: str = "create_transpose_conv16_nodes"
    requires: ClassVar[OpClass] = OpClass.TRANSPOSECONV
    ordered: ClassVar[bool] = True  # graph_iterator: list order
    roots: ClassVar[frozenset[str]] = frozenset({OP})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        from hexnn_import.ops.registry import has_kernel

        if len(node.inputs) != 13 or not has_kernel(SUPERNODE16):
            return False
        consts = [find_node_must_be_Const_from_ref(ed, r) for r in slots(node, *CONST_SLOTS)]
        producer = ed.known(slot(node, "data").src_id)
        if producer is None or any(c is None or c.data is None for c in consts):
            return False
        if consts[4].output_defs[0].shape[1:3] != (1, 1):  # type: ignore[union-attr]
            return False  # stride > 1: the C's DepthToSpace_16 -> DepthToSpace_16_d32 (module doc)
        expand16(ed, node, producer, consts)  # type: ignore[arg-type]
        return True


def expand16(ed: GraphEditor, node: Node, producer: Node, consts: list[Node]) -> None:
    """The stride-1 expansion and its supernode, in the C's order of creation (module doc)."""
    w_node, wmin, wmax, pads_node, _stride, bias_node, _bmin, _bmax = consts
    data, lo, hi = slots(node, *QTRIPLE)
    in_shape = list(producer.output_defs[data.output_idx].shape)
    in_dtype = producer.output_defs[data.output_idx].dtype
    pads = [int(v) for v in np.asarray(pads_node.data).reshape(-1)[:4]]
    o, fh, fw, din = w_node.output_defs[0].shape
    qzero = quantize_uint16(0.0, _scalar(wmin), _scalar(wmax))
    r, s, k = fh, fw, o
    strides = new_internal_node_id(ed)
    do_prepend_const_node(ed, strides, 1, 1, 1, 1, None, "uint8")
    pt, pb, pl, pr = pads
    paddings = [0, 0, r - 1 - pt, r - 1 - pb, s - 1 - pl, s - 1 - pr, 0, 0]
    new_nodes: list[Node] = []
    if any(paddings):
        pad_id = new_internal_node_id(ed)
        do_prepend_const_node(ed, pad_id, 1, 1, 4, 2, [as_i32(v) for v in paddings], "int32")
        padded = (in_shape[0], in_shape[1] + 2 * (r - 1) - pt - pb, in_shape[2] + 2 * (s - 1) - pl - pr, in_shape[3])
        pad = ed.make_node("QuantizedPad_u16", [data, lo, hi, Ref(pad_id, 0)],
                           [OutputDef(padded, in_dtype), SCALAR, SCALAR])
        new_nodes.append(pad)
        data, lo, hi = Ref(pad.node_id, 0), Ref(pad.node_id, 1), Ref(pad.node_id, 2)
    bias_id = new_internal_node_id(ed)
    do_prepend_const_node(ed, bias_id, 1, 1, 1, k, np.asarray(bias_node.data).reshape(-1).astype(np.int32), "int32")
    create_const_int32_op(ed, 3)  # the C's split dimension, made whether or not there are groups
    w_id = new_internal_node_id(ed)
    weights = transpose_conv_weights(np.asarray(w_node.data, dtype=np.uint16), qzero, 1, 1, False)
    assert weights.shape == (r, s, din, k) and roundup(fh, 1) == r
    do_prepend_const_node(ed, w_id, r, s, din, k, weights, "quint16")
    inputs = [data, Ref(w_id, 0), lo, hi, *slots(node, "filter_min", "filter_max"), Ref(strides, 0),
              Ref(bias_id, 0), *slots(node, "bias_min", "bias_max", "out_min", "out_max")]
    out = [OutputDef(node.output_defs[0].shape, node.output_defs[0].dtype), SCALAR, SCALAR]
    new_nodes.append(ed.make_node(SUPERNODE16, inputs, out, NNPad.VALID, node.name, node_id=node.node_id))
    replace_node_with(ed, None, node, *new_nodes)
