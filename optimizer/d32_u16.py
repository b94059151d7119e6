"""prepare.c's 16-bit d32 rules: the u16 ops convert_to_depth32 turns into ``_d32`` ops with
``Convert_to_d32_16b`` / ``Convert_from_d32_16b`` (hexagon_nn 2.14.1 prepare.c ``depth32_replacement_op``
with ``D32REPL_16``, ``need_convert_to_d32``, ``create_convert_from_d32``, ``do_remove_unnecessary_d32_converts``).

- ``QuantizedAdd_u16`` / ``QuantizedSub_u16`` -> ``QuantizedAdd_u16_d32`` / ``QuantizedSub_u16_d32``: always
  (``D32REPL_TWOIN``: both data inputs converted);
- ``Supernode_16x16p32to16`` -> ``Supernode_u16x16p32to16_d32``: always (data input converted), where it has
  no channel scales (the _d32 op takes 12 inputs). Its padding is VALID wherever the project makes one
  (:mod:`.transpose_conv16`), so prepare.c's oversize check never applies;
- ``QuantizedPad_u16`` -> ``QuantizedPad_u16_d32``: when its input is already d32 (a Convert_from_d32_16b)
  and its Const paddings leave depth alone (the 8-bit pad's rule, :func:`pad_keeps_depth16`).

The convert made for an input follows the element size of the tensor it converts, as
``need_convert_to_d32`` does: a 2-byte output gets ``Convert_to_d32_16b`` (and is read at its source when it
comes from a ``Convert_from_d32_16b``), a 1-byte one ``Convert_to_d32``. A converted op's output goes back
through the convert of its own element size. remove_unnecessary_d32_converts bypasses a
``Convert_to_d32_16b`` of a ``Convert_from_d32_16b`` as it does the 8-bit pair.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import ELEMENT_DTYPES, Node, Ref
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.lookup import find_node_must_be, find_node_must_be_Const

#: flat u16 op -> its 16-bit _d32 op
U16_D32_OPS = {"QuantizedAdd_u16": "QuantizedAdd_u16_d32", "QuantizedSub_u16": "QuantizedSub_u16_d32",
               "QuantizedPad_u16": "QuantizedPad_u16_d32", "Supernode_16x16p32to16": "Supernode_u16x16p32to16_d32"}
#: (to d32, from d32, d32 element type) per element size in bytes
CONVERTS = {1: ("Convert_to_d32", "Convert_from_d32", "quint8_d32"),
            2: ("Convert_to_d32_16b", "Convert_from_d32_16b", "quint16_d32")}
TO_D32_OPS = frozenset(c[0] for c in CONVERTS.values())


def element_size(dtype: str) -> int:
    """Bytes per element of an output definition's type (prepare.c's ``elementsize``); 1 when unknown."""
    dt = ELEMENT_DTYPES.get(dtype)
    return dt.itemsize if dt is not None and dt.itemsize in CONVERTS else 1


def converts_for_op(new_op: str) -> tuple[str, str, str]:
    """The converts and d32 type of a _d32 op: 16-bit for the ops of :data:`U16_D32_OPS` (``D32REPL_16``)."""
    return CONVERTS[2 if new_op in U16_D32_OPS.values() else 1]


def converts_for_ref(ed: GraphEditor, ref: Ref) -> tuple[str, str, str]:
    """The converts of the tensor ``ref`` by its element size (prepare.c need_convert_to_d32)."""
    src = ed.known(ref.src_id)
    size = element_size(src.output_defs[ref.output_idx].dtype) if src is not None else 1
    return CONVERTS[size]


def from_d32_16b(ed: GraphEditor, ref: Ref) -> bool:
    """``ref`` is output 0 of a Convert_from_d32_16b."""
    return ref.output_idx == 0 and find_node_must_be(ed, ref.src_id, "Convert_from_d32_16b") is not None


def u16_replacement(ed: GraphEditor, node: Node) -> tuple[str, tuple[int, ...]] | None:
    """``(d32 op, data inputs to convert)`` for a u16 op of :data:`U16_D32_OPS`, or None to leave it flat."""
    op = node.op
    if op in ("QuantizedAdd_u16", "QuantizedSub_u16"):
        return U16_D32_OPS[op], (0, 1)
    if op == "Supernode_16x16p32to16":  # the _d32 op takes no channel scales (NN_IOCOUNT(12))
        return (U16_D32_OPS[op], (0,)) if len(node.inputs) == 12 else None
    if op == "QuantizedPad_u16":
        return (U16_D32_OPS[op], (0,)) if from_d32_16b(ed, node.inputs[0]) and pad_keeps_depth16(ed, node) else None
    return None


def pad_keeps_depth16(ed: GraphEditor, node: Node) -> bool:
    """depth32_replacement_op's QuantizedPad_u16 paddings: input 3 is output 0 of a Const of ``n`` (1..4) rows
    of int32 ``before, after`` whose last row (depth's) is zero."""
    if len(node.inputs) < 4:
        return False
    ref = node.inputs[3]
    dims = find_node_must_be_Const(ed, ref.src_id)
    if dims is None or ref.output_idx != 0 or dims.data is None:
        return False
    raw = np.ascontiguousarray(dims.data).tobytes()
    rows = len(raw) // 8
    return 1 <= rows <= 4 and not np.frombuffer(raw[:rows * 8], "<i4")[-2:].any()
