"""Replace parts of the graph and reconnect inputs (hexagon_nn_prepare_notes.txt, "Functions to
reconnect inputs of existing nodes" and "Functions to replace parts of the graph").

The notes' C functions return <0 on error; these raise GraphError instead
(the pipeline then names the pass). Differences forced by Python, none of
them visible in the resulting graph:

- ``anchor`` is a node, not a list link: "insert before ``anchor``"
  (``after=True``: after it); None is the head of the list.
- replace_nodes needs no search, so the removed nodes may come in any order;
  ``new_node`` takes the place of ``rm_node1``.
- ``begin`` of the change_* functions is accepted for the notes' signature:
  the consumers come from the consumer index, and every consumer of a node
  follows it in the list anyway.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from hexnn_import.errors import GraphError
from hexnn_import.graph import Node, Ref
from hexnn_import.optimizer.editor import GraphEditor


def replace_nodes(nn: GraphEditor, anchor: Node | None, new_node: Node | None, rm_node1: Node,
                  *rm_nodes: Node | None) -> None:
    """Remove ``rm_node1`` and the non-None ``rm_nodes``; ``new_node`` (may be None) takes rm_node1's place.

    ``new_node`` may reuse the id of a removed node (it then keeps that
    node's consumers). ``anchor`` is unused (the notes' search start).
    """
    if rm_node1 is None:
        raise GraphError("replace_nodes: rm_node1 may not be None")
    nn.replace(new_node, [rm_node1, *(n for n in rm_nodes if n is not None)])


def replace_node_with(nn: GraphEditor, anchor: Node | None, rm_node: Node | None, *add_nodes: Node | None,
                      after: bool = False) -> int:
    """Remove ``rm_node`` and put the non-None ``add_nodes`` (in order) where it was; returns how many.

    With ``rm_node`` None they go before ``anchor`` (after it with
    ``after=True``; None: the head of the list), as insert_nodes.
    """
    return nn.place([n for n in add_nodes if n is not None], rm_node, anchor, after)


def insert_nodes(nn: GraphEditor, anchor: Node | None, *add_nodes: Node | None, after: bool = False) -> int:
    """Insert the non-None ``add_nodes`` (in order) at ``anchor``; returns how many."""
    return replace_node_with(nn, anchor, None, *add_nodes, after=after)


def node_rehash_inputrefs(nn: GraphEditor, node: Node, refs: Iterable[Ref | tuple[int, int]] | None = None) -> None:
    """Set (or re-index) a node's input refs so the consumer index matches them."""
    nn.rewire(node, node.inputs if refs is None else refs)


def _remap(nn: GraphEditor, old_nodeid: int, table: dict[int, Ref], fail_on_missing: bool) -> int:
    """Rewrite every ref ``(old_nodeid, i)`` with ``i`` in ``table``; others stay, or fail."""
    consumers = nn.graph.consumers(old_nodeid)
    if fail_on_missing:
        for c in consumers:
            for r in c.inputs:
                if r.src_id == old_nodeid and r.output_idx not in table:
                    raise GraphError(f"node {c.label} ({c.op}) reads output {r.output_idx} of node "
                                     f"{old_nodeid}, which the remap pattern does not allow")
    count = 0
    for c in consumers:
        refs = list(c.inputs)
        changed = False
        for k, r in enumerate(refs):
            if r.src_id == old_nodeid and r.output_idx in table and table[r.output_idx] != r:
                refs[k] = table[r.output_idx]
                changed = True
                count += 1
        if changed:
            nn.rewire(c, refs)
    for i, new in table.items():
        if new != Ref(old_nodeid, i):
            nn.redirects[Ref(old_nodeid, i)] = new
    return count


def change_output_refs(nn: GraphEditor, begin: Node | None, old_nodeid: int, new_nodeid: int, pattern: int) -> int:
    """Reconnect readers of ``old_nodeid`` to ``new_nodeid`` by the nybble ``pattern``; returns the count.

    For a ref ``(old_nodeid, i)``: nybble ``n = (pattern >> 4*i) & 0xF``
    (0 for ``i >= 16``); 0xF leaves it, 0 is an error (GraphError, nothing
    changed), else it becomes ``(new_nodeid, n - 1)``. E.g. 0xF321 maps
    outputs 0..2 to the same outputs of the new node, keeps 3, refuses 4+.
    """
    table: dict[int, Ref] = {}
    for i in range(16):
        nyb = (pattern >> (4 * i)) & 0xF
        if nyb == 0xF:
            table[i] = Ref(old_nodeid, i)
        elif nyb:
            table[i] = Ref(new_nodeid, nyb - 1)
    return _remap(nn, old_nodeid, table, fail_on_missing=True)


def change_multi_output_refs_table(nn: GraphEditor, begin: Node | None, old_nodeid: int, n_outputs: int,
                                   new_inpref: Sequence[Ref | tuple[int, int] | None]) -> int:
    """Refs ``(old_nodeid, i)``, ``i < n_outputs``, become ``new_inpref[i]`` (unchanged where it is None
    or has ``src_id`` 0); returns the count."""
    table: dict[int, Ref] = {}
    for i in range(n_outputs):
        new = new_inpref[i]
        if new is not None and new[0] != 0:
            table[i] = Ref(int(new[0]), int(new[1]))
    return _remap(nn, old_nodeid, table, fail_on_missing=False)


def change_multi_output_refs(nn: GraphEditor, begin: Node | None, old_nodeid: int, n_outputs: int,
                             newnodes: Sequence[Node | None]) -> int:
    """Refs ``(old_nodeid, i)``, ``i < n_outputs``, become ``(newnodes[i], 0)`` (unchanged where None)."""
    table = [None if n is None else Ref(n.node_id, 0) for n in newnodes[:n_outputs]]
    return change_multi_output_refs_table(nn, begin, old_nodeid, n_outputs, table)
