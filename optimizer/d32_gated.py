"""prepare.c's d32 rules gated on the twin: ops whose _d32 twin the op catalog and the engine may not have
(hexagon_nn 2.14.1 prepare.c ``depth32_replacement_op``, ``do_convert_concat_depth32``).

convert_to_depth32 (:mod:`.d32_passes`) converts these only when the catalog names the _d32 op and the
engine has its kernel, as it does for every op; until then the node stays flat, and the golden node
lists of the models that have one (tests/optimizer/test_prepare_golden.py ``PENDING``) say where the
project's list leaves prepare.c's.

- ``QuantizedInstanceNorm_8`` -> ``QuantizedInstanceNorm_8_d32``: always in prepare.c; the project keeps the
  flat op, with a note, where the output height is 1 or 2 (:func:`instancenorm_reads_padding`): there the
  device code (op_instancenorm_hvx.c ``getstats_asm``, whose row-pair loop runs once with a count of 0) takes
  two rows of the input's bottom padding into each channel's min, bytes hexagon_nn never writes, so what the
  device computes is not defined. The importers' LayerNorms lay each row's features on a grid of at least 3
  rows (importers/nodes/norm.py ``norm_grid``), so only a row of 1-2 features, or a graph built or saved so,
  still reaches this rule;
- ``QuantizedNeg_8`` -> ``QuantizedNeg_8_d32``: only when its input is already d32 (a Convert_from_d32);
- ``QuantizedPad_8`` -> ``QuantizedPad_8_d32``: when its input is already d32 and its paddings (input 3,
  output 0 of a Const: ``n`` rows of int32 ``before, after``, ``n`` 1..4, the last row depth's) leave depth
  alone (BlazeFace's and BlazePose's pads);
- ``QuantizedSplit_8`` -> ``QuantizedSplit_8_d32`` (do_convert_concat_depth32): with its four inputs, when
  the split is on depth - input 0 wired where input 1 is, or a Const dim that is 3 after
  ``handle_negative_axes`` (-4..-1 count from the end) - with at least two data outputs, and an output 0 that
  is not ``[b, 1, 1, d]``. The data input is converted (input 0 follows it when it was wired there), and
  each data output gets its own Convert_from_d32.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import Node, Ref
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.lookup import find_node_must_be, find_node_must_be_Const

#: flat op -> its _d32 twin, for the ops of this module
MORE_D32_OPS = {"QuantizedInstanceNorm_8": "QuantizedInstanceNorm_8_d32", "QuantizedNeg_8": "QuantizedNeg_8_d32",
                "QuantizedSplit_8": "QuantizedSplit_8_d32", "QuantizedPad_8": "QuantizedPad_8_d32"}
SPLIT_D32 = "QuantizedSplit_8_d32"


def _from_d32(ed: GraphEditor, ref: Ref) -> bool:
    return ref.output_idx == 0 and find_node_must_be(ed, ref.src_id, "Convert_from_d32") is not None


def split_on_depth(ed: GraphEditor, node: Node) -> bool:
    """depth32_replacement_op's QuantizedSplit_8 case and do_convert_concat_depth32's 1x1 refusal."""
    if len(node.inputs) != 4:
        return False
    _, h, w, _ = node.output_defs[0].shape
    if (h, w) == (1, 1):
        return False
    if node.inputs[0] == node.inputs[1]:
        return True
    dim = find_node_must_be_Const(ed, node.inputs[0].src_id)
    if len(node.output_defs) < 4 or dim is None or dim.data is None:
        return False
    d = int(np.ascontiguousarray(dim.data).reshape(-1).view(np.int32)[0])
    d = d + 4 if -4 <= d < 0 else d
    return d == 3


def pad_keeps_depth(ed: GraphEditor, node: Node) -> bool:
    """depth32_replacement_op's QuantizedPad_8 case: a d32 input and Const paddings with no depth padding."""
    if len(node.inputs) < 4 or not _from_d32(ed, node.inputs[0]):
        return False
    ref = node.inputs[3]
    dims = find_node_must_be_Const(ed, ref.src_id)
    if dims is None or ref.output_idx != 0 or dims.data is None:
        return False
    raw = np.ascontiguousarray(dims.data).tobytes()
    rows = len(raw) // 8
    if not 1 <= rows <= 4:
        return False
    last = np.frombuffer(raw[:rows * 8], "<i4")[-2:]
    return not last.any()


def instancenorm_reads_padding(node: Node) -> bool:
    """A QuantizedInstanceNorm_8 whose _d32 twin would read undefined padding: height 1 or 2 (the height rounded
    up to even is 2, where op_instancenorm_hvx.c's ``getstats_asm`` also reads layout rows 2 and 3)."""
    h = node.output_defs[0].shape[1]
    return h + h % 2 == 2


def _note(ed: GraphEditor, note: str) -> None:
    notes = ed.graph.meta.setdefault("notes", [])
    if isinstance(notes, list) and note not in notes:
        notes.append(note)


def more_replacement(ed: GraphEditor, node: Node) -> tuple[str, tuple[int, ...]] | None:
    """``(d32 op, data inputs to convert)`` for the ops of :data:`MORE_D32_OPS`, or None to leave it flat."""
    op = node.op
    if op == "QuantizedInstanceNorm_8":
        if instancenorm_reads_padding(node):
            _note(ed, f"{node.name or node.node_id}: QuantizedInstanceNorm_8 kept flat (prepare.c makes it _d32, whose "
                      "device code reads the undefined bottom padding of a height-1 or -2 input)")
            return None
        return MORE_D32_OPS[op], (0,)
    if op == "QuantizedNeg_8":
        return (MORE_D32_OPS[op], (0,)) if _from_d32(ed, node.inputs[0]) else None
    if op == "QuantizedSplit_8":
        return (SPLIT_D32, (1,)) if split_on_depth(ed, node) else None
    if op == "QuantizedPad_8":
        return (MORE_D32_OPS[op], (0,)) if pad_keeps_depth(ed, node) else None
    return None


def data_outputs(new_op: str, node: Node) -> int:
    """How many data outputs get a Convert_from_d32: a split's all but min / max, else output 0."""
    return len(node.output_defs) - 2 if new_op == SPLIT_D32 else 1


def follow_converted_dim(new_op: str, node: Node, inputs: list[Ref]) -> None:
    """A split whose input 0 was wired where input 1 is reads the converted data there too."""
    if new_op == SPLIT_D32 and node.inputs[0] == node.inputs[1]:
        inputs[0] = inputs[1]
