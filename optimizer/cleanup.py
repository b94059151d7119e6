"""Cleanup passes: remove_dead_nodes and gather_const_nodes (hexagon_nn_prepare_notes.txt, "The
'prepare' process", step (3)).

- remove_dead_nodes removes every node nothing reads (except retained
  nodes: no outputs, INPUT / OUTPUT, side-effect ops; :func:`check.is_retained`)
  until none is left. It works from the consumer index with a worklist that
  starts from the nodes the editor saw lose a reader (every node, the first
  time): a removal can only make its own producers dead, so each node is
  looked at a bounded number of times - one sweep reaches the fixed point.
- gather_const_nodes moves every Const to the front of the list, keeping the
  order within Consts and within the other nodes (one stable partition).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import ClassVar

from hexnn_import.graph import Node
from hexnn_import.optimizer.check import GRAPHCHECK_DEADNODES, GRAPHCHECK_HASH, GRAPHCHECK_NONCONST, is_retained
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.pass_base import Pass


@dataclass(frozen=True)
class RemoveDeadNodes(Pass):
    """Remove nodes without readers, to a fixed point."""

    name: str = "remove_dead_nodes"
    check_flags: ClassVar[int] = GRAPHCHECK_HASH | GRAPHCHECK_DEADNODES

    def apply(self, ed: GraphEditor) -> int:
        g = ed.graph
        find, referenced = g.find_node, g.is_referenced  # _dead inlined: ~200,000 calls at 10,000 layers
        work: deque[Node] = deque(ed.take_maybe_dead())
        removed = 0
        while work:
            node = work.popleft()
            nid = node.node_id
            if referenced(nid) or find(nid) is not node or is_retained(node):
                continue
            producers = {r.src_id for r in node.inputs}
            ed.replace(None, [node])
            removed += 1
            for pid in producers:
                p = find(pid)  # p is then alive (its id maps to it)
                if p is not None and not referenced(pid) and not is_retained(p):
                    work.append(p)
        return removed


@dataclass(frozen=True)
class GatherConstNodes(Pass):
    """Every Const to the front of the list (stable)."""

    name: str = "gather_const_nodes"
    check_flags: ClassVar[int] = GRAPHCHECK_HASH | GRAPHCHECK_DEADNODES | GRAPHCHECK_NONCONST

    def apply(self, ed: GraphEditor) -> int:
        return ed.consts_first()


@dataclass(frozen=True)
class GatherConstNodesBeforeFusion(GatherConstNodes):
    """gather_const_nodes where prepare.c's optimize() first runs it, right before make_supernodes (so a
    fused node put where its chain's first node was reads only earlier nodes); the graph may still hold
    dead nodes here, so only the hash is checked."""

    check_flags: ClassVar[int] = GRAPHCHECK_HASH

