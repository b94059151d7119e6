"""check_graph: the invariants of the prepare notes, under a debug level
(hexagon_nn_prepare_notes.txt, "check_graph").

Nothing is checked when ``debug_level < 1``. Otherwise the base checks run
(:meth:`Graph.verify`: unique ids, every ref names an output of an earlier
node, the id hash holds exactly the list's nodes, the consumer index matches
the refs; GraphError on the first break), plus, by flag:

- ``GRAPHCHECK_HASH``: the hash holds every node of the list (an error, as
  in verify); with ``debug_level > 2`` the message "hash ok; N of N nodes
  are in hash" is logged.
- ``GRAPHCHECK_DEADNODES``: each node without consumers that is not retained
  (:func:`is_retained`) is *reported* (logged and returned), not an error.
- ``GRAPHCHECK_NONCONST``: every Const comes before every other node (the
  state gather_const_nodes leaves); an error otherwise.
"""
from __future__ import annotations

import logging

from hexnn_import.errors import GraphError
from hexnn_import.graph import Graph, Node
from hexnn_import.ops.op_groups import RETAINED_OPS, RETAINED_PREFIX

GRAPHCHECK_HASH = 1
GRAPHCHECK_DEADNODES = 2
GRAPHCHECK_NONCONST = 4

LOG = logging.getLogger("hexnn_import.optimizer")


def is_retained(node: Node) -> bool:
    """True for nodes dead-node removal must keep: no outputs, graph I/O, and side-effect ops."""
    return not node.output_defs or node.op in RETAINED_OPS or node.op.startswith(RETAINED_PREFIX)


def check_graph(graph: Graph, flags: int = 0, debug_level: int = 1) -> list[str]:
    """Run the checks chosen by ``flags`` when ``debug_level >= 1``; returns the messages logged."""
    if debug_level < 1:
        return []
    graph.verify()
    msgs: list[str] = []
    if flags & GRAPHCHECK_HASH and debug_level > 2:
        msgs.append(f"hash ok; {len(graph)} of {len(graph)} nodes are in hash")
    if flags & GRAPHCHECK_DEADNODES:
        for node in graph.nodes:
            if not is_retained(node) and not graph.is_referenced(node.node_id):
                msgs.append(f"dead node {node.label} ({node.op}): no consumers")
    if flags & GRAPHCHECK_NONCONST:
        first_op: Node | None = None
        for node in graph.nodes:
            if not node.is_const:
                first_op = first_op or node
            elif first_op is not None:
                raise GraphError(f"Const node {node.label} comes after the non-Const node "
                                 f"{first_op.label} ({first_op.op})")
    for m in msgs:
        LOG.info("check_graph: %s", m)
    return msgs
