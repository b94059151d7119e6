"""Node lookup and consumer search (hexagon_nn_prepare_notes.txt, "Functions to look up a node
based on node id" and "Functions to search downstream for 'consumer' nodes").

Every function takes ``nn``: the :class:`~hexnn_import.graph.Graph` or the
:class:`~hexnn_import.optimizer.editor.GraphEditor` working on it. Lookups go
through the graph's id hash and consumer index, so each costs O(number of
consumers), never a walk of the list.
"""
from __future__ import annotations

from typing import Collection, Union

from hexnn_import.graph import Graph, Node, Ref
from hexnn_import.optimizer.editor import GraphEditor

GraphLike = Union[Graph, GraphEditor]

#: find_unique_consumer flag: do not check where the consumer's other inputs come from.
CONSUMER_NOINCHECK = 1


def graph_of(nn: GraphLike) -> Graph:
    """The graph behind ``nn``."""
    return nn.graph if isinstance(nn, GraphEditor) else nn


def find_node(nn: GraphLike, node_id: int) -> Node | None:
    """The node with this id, or None (the find_node hash)."""
    return graph_of(nn).find_node(node_id)


def find_node_must_be(nn: GraphLike, node_id: int, op: str) -> Node | None:
    """As find_node, but None unless the node's op is ``op``."""
    n = graph_of(nn).find_node(node_id)
    return n if n is not None and n.op == op else None


def find_node_must_be_Const(nn: GraphLike, node_id: int) -> Node | None:  # noqa: N802 (the notes' name)
    """As find_node, but None unless the node is a Const."""
    return find_node_must_be(nn, node_id, "Const")


def find_node_must_be_Const_from_ref(nn: GraphLike, ref: Ref | tuple[int, int]) -> Node | None:  # noqa: N802
    """The Const that ``ref`` names; None if ``ref.output_idx != 0`` or the source is no Const."""
    src_id, output_idx = ref
    if output_idx != 0:
        return None
    return find_node_must_be(nn, src_id, "Const")


def find_unique_consumer_anytype(nn: GraphLike, src: Node, flags: int = 0) -> Node | None:
    """The unique consumer ``dst`` of ``src``, or None.

    ``dst`` is the only node reading any output of ``src``, and (unless
    ``flags`` has CONSUMER_NOINCHECK) every input of ``dst`` comes from
    ``src`` or from a Const.
    """
    g = graph_of(nn)
    consumers = g.consumers(src.node_id)
    if len(consumers) != 1:
        return None
    dst = consumers[0]
    if not flags & CONSUMER_NOINCHECK:
        for r in dst.inputs:
            if r.src_id == src.node_id:
                continue
            other = g.find_node(r.src_id)
            if other is None or not other.is_const:
                return None
    return dst


def find_unique_consumer_mustbe(nn: GraphLike, src: Node, op: str, flags: int = 0) -> Node | None:
    """As find_unique_consumer_anytype, but None unless the consumer's op is ``op``."""
    dst = find_unique_consumer_anytype(nn, src, flags)
    return dst if dst is not None and dst.op == op else None


def find_unique_consumer(nn: GraphLike, src: Node, ops: Collection[str], flags: int = 0) -> Node | None:
    """As find_unique_consumer_anytype, but None unless the consumer's op is one of ``ops``."""
    dst = find_unique_consumer_anytype(nn, src, flags)
    return dst if dst is not None and dst.op in ops else None


def check_single_consumer_all(nn: GraphLike, producer: Node, consumer: Node) -> int:
    """0 iff ``consumer`` reads some output of ``producer`` and no other node reads any; else -1."""
    consumers = graph_of(nn).consumers(producer.node_id)
    return 0 if len(consumers) == 1 and consumers[0] is consumer else -1


#: The notes' alias of check_single_consumer_all (defined in prepare.c).
check_all_outputs = check_single_consumer_all


def same_refs(a: Node, b: Node, n: int) -> bool:
    """True when the first ``n`` inputs of ``a`` and ``b`` are wired alike (check_same_inputs)."""
    return len(a.inputs) >= n and len(b.inputs) >= n and a.inputs[:n] == b.inputs[:n]


def reads_outputs(node: Node, slots: Collection[int], src: Node, first: int = 0) -> bool:
    """True when ``node.inputs[slot_k] == (src, first + k)`` for the k-th of ``slots``."""
    return all(i < len(node.inputs) and node.inputs[i] == Ref(src.node_id, first + k)
               for k, i in enumerate(slots))
