"""Oversize-filter d32 supernodes: a QuantizedPadForConv_8_d32 in front, the convolution made VALID
(hexagon_nn 2.14.1 include/nn_prepare.h ``oversize_d32_supernode_quick_check`` and prepare_utils.c
``handle_oversize_d32_supernode``, called by prepare.c's convert_to_depth32).

The d32 layout keeps at most 4 rows above/below and 4 columns left of the data; a filter that needs
more padding than that (worst case over input sizes) gets it from an explicit pad node instead:

- candidates: (Depthwise)Supernode_8x8p{8,32}to8_d32 whose padding is not VALID, with a Const filter
  (read at its ref) of size other than 1x1; padding NA, SAME or SAME_CAFFE only (others: left alone);
- the filter extent ``fh, fw``; for NA each is reduced by ``stride - 1`` (Const stride, at least 1);
  ``top = (fh - adj) >> 1``, ``bottom = fh - 1 - top``, the same for left/right, ``adj`` 1 for SAME
  and NA, 0 for SAME_CAFFE;
- at risk when ``max(top, bottom) > 4`` or ``max(left, right) > 3`` or ``right > 0 and bottom > 3``.

Then ``QuantizedPadForConv_8_d32(data, in_min, in_max, filter, stride)`` (a new id, the supernode's
padding; output 0 is the data's producer's output definition grown by ``top + bottom`` rows and
``left + right`` columns, outputs 1, 2 float scalars) takes the supernode's place, followed by the same
supernode (same id, op, output definitions) with VALID padding reading the pad node's outputs 0..2 in
its slots 0, 2, 3.
"""
from __future__ import annotations

from hexnn_import.graph import NNPad, Node, OutputDef, Ref
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.edits import replace_node_with
from hexnn_import.optimizer.lookup import find_node, find_node_must_be_Const_from_ref
from hexnn_import.ops.op_groups import OVERSIZE_CANDIDATES
from hexnn_import.optimizer.slots import slot, slots, with_slots

PAD_FOR_CONV = "QuantizedPadForConv_8_d32"
SCALAR_FLOAT = OutputDef((1, 1, 1, 1), "float")


def oversize_quick_check(node: Node) -> bool:
    """nn_prepare.h oversize_d32_supernode_quick_check: a d32 supernode whose padding is not VALID."""
    return node.op in OVERSIZE_CANDIDATES and node.padding != NNPad.VALID


def needed_padding(ed: GraphEditor, conv: Node) -> tuple[int, int, int, int] | None:
    """``(top, bottom, left, right)`` worst-case padding when the filter is at risk, else None."""
    wts = find_node_must_be_Const_from_ref(ed, slot(conv, "weights"))
    if wts is None:
        return None
    fh, fw = (int(d) for d in wts.output_defs[0].shape[:2])
    if fh < 1 or fw < 1 or (fh, fw) == (1, 1):
        return None
    if conv.padding not in (NNPad.NA, NNPad.SAME, NNPad.SAME_CAFFE):
        return None
    adj = 0 if conv.padding == NNPad.SAME_CAFFE else 1
    if conv.padding == NNPad.NA:
        stride = find_node_must_be_Const_from_ref(ed, slot(conv, "stride"))
        if stride is None:
            return None
        sh, sw = (int(d) for d in stride.output_defs[0].shape[1:3])
        fh = fh + 1 - sh if fh > sh else 1
        fw = fw + 1 - sw if fw > sw else 1
    top = (fh - adj) >> 1
    left = (fw - adj) >> 1
    bottom, right = fh - 1 - top, fw - 1 - left
    if max(top, bottom) > 4 or max(left, right) > 3 or (right > 0 and bottom > 3):
        return top, bottom, left, right
    return None


def handle_oversize_d32_supernode(ed: GraphEditor, conv: Node) -> bool:
    """Put a QuantizedPadForConv_8_d32 before ``conv`` and make it VALID when its filter is at risk;
    True when the graph changed."""
    pads = needed_padding(ed, conv)
    data = slot(conv, "data")
    upstream = find_node(ed, data.src_id) or ed.known(data.src_id)
    if pads is None or upstream is None or len(upstream.output_defs) <= data.output_idx:
        return False
    top, bottom, left, right = pads
    src = upstream.output_defs[data.output_idx]
    b, h, w, d = src.shape
    out0 = OutputDef((b, h + top + bottom, w + left + right, d), src.dtype)
    qfc = ed.make_node(PAD_FOR_CONV, slots(conv, "data", "in_min", "in_max", "weights", "stride"),
                       [out0, SCALAR_FLOAT, SCALAR_FLOAT], conv.padding,
                       f"{conv.name}/pad_for_conv" if conv.name else "")
    refs = with_slots(conv, {"data": Ref(qfc.node_id, 0), "in_min": Ref(qfc.node_id, 1),
                             "in_max": Ref(qfc.node_id, 2)})
    valid = ed.make_node(conv.op, refs, conv.output_defs, NNPad.VALID, conv.name, node_id=conv.node_id)
    replace_node_with(ed, None, conv, qfc, valid)
    return True
