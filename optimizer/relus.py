"""move_relus: hide a bare QuantizedRelu_8 in the supernodes that feed it (prepare.c do_move_relus).

A QuantizedRelu_8 that make_supernodes could not fuse is followed upstream,
through ops that commute with relu and pass their range through (max pool,
reshapes, slices, transposes, space/batch/depth moves, tile, nearest resize)
and through QuantizedConcat_8 (each input), to flat Supernodes. When every
path ends at a Supernode whose outputs feed only that path, each such
Supernode gets output min 0 (a Const) and the Relu is bypassed: its readers
read its inputs. Average pooling is not crossed: the mean of relu'd values
is not the relu of the mean. The Supernodes now quantize onto ``[0, max]``
instead of ``[min, max]``: results are within one step of the coarser range.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hexnn_import.graph import Node, Ref
from hexnn_import.optimizer.consts import get_zero_node
from hexnn_import.optimizer.edits import change_multi_output_refs_table
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.fusion_match import reads_qtriple
from hexnn_import.optimizer.lookup import check_single_consumer_all, find_node
from hexnn_import.ops.op_groups import RELU_COMMUTES, SUPERNODE_OPS, OpClass
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.ranges import const_scalar
from hexnn_import.optimizer.slots import QTRIPLE, part, part_index, run_count, slot, slots, with_slots
#: Longest chain of crossed ops followed (keeps the pass linear).
MAX_DEPTH = 16


def _collect(ed: GraphEditor, node: Node, reader: Node, found: list[Node], depth: int) -> bool:
    """Append to ``found`` the Supernodes whose ranges reach ``reader`` via ``node``; False if one does not."""
    if depth > MAX_DEPTH or check_single_consumer_all(ed, node, reader) != 0:
        return False
    if node.op in SUPERNODE_OPS:
        if all(n is not node for n in found):
            found.append(node)
        return True
    if node.op in RELU_COMMUTES:
        src = find_node(ed, slot(node, "data").src_id)
        return src is not None and reads_qtriple(node, src, *QTRIPLE) and _collect(ed, src, node, found, depth + 1)
    if node.op == "QuantizedConcat_8":
        n = run_count(node)
        for k in range(n):
            src = find_node(ed, part(node, "data", k).src_id)
            if src is None or not reads_qtriple(node, src, *(part_index(node, name, k) for name in QTRIPLE)):
                return False
            if not _collect(ed, src, node, found, depth + 1):
                return False
        return n > 0
    return False


@dataclass(frozen=True)
class MoveRelus(PatternPass):
    """A bare QuantizedRelu_8 becomes output min 0 on the Supernodes feeding it."""

    name: str = "move_relus"
    requires: ClassVar[OpClass] = OpClass.RELU | OpClass.SUPERNODE
    roots: ClassVar[frozenset[str]] = frozenset({"QuantizedRelu_8"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        src = find_node(ed, slot(node, "data").src_id)
        found: list[Node] = []
        if src is None or not reads_qtriple(node, src) or not _collect(ed, src, node, found, 0):
            return False
        if any((hi := const_scalar(ed, slot(sn, "out_max"))) is not None and hi <= 0.0 for sn in found):
            return False  # [0, max <= 0] would be an empty range
        zero = Ref(get_zero_node(ed), 0)
        for sn in found:
            ed.rewire(sn, with_slots(sn, {"out_min": zero}))
        change_multi_output_refs_table(ed, node, node.node_id, 3, slots(node, *QTRIPLE))
        return True
