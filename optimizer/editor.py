"""The graph editor of the prepare passes: every change goes through it (docs/architecture.md, "Models learned from": xDSL).

hexagon_nn_prepare_notes.txt, "Functions to replace parts of the graph" and
"Functions to reconnect inputs of existing nodes". The find_node hash and the
consumer index (the noderefhash idea) change at once, so every lookup sees
each edit immediately; so do the editor's own indexes: nodes by op (passes
find their candidates there, without walking the list) and the nodes that
may have lost their last reader (dead-node removal starts from those). The
*list order* changes lazily: removed nodes are marked, new nodes hang before
(or after) an anchor node or at the front, and :meth:`GraphEditor.commit`
rebuilds the list in one O(n) sweep when the list is needed (before a
verify, for a pass that needs list positions, at the end of prepare). A
Python list has O(n) insert and remove; editing it in place would make a
pass quadratic in the node count.

The editor lives for one whole prepare: it also holds the scalar-const cache
(:mod:`.consts`), the op-class set (:mod:`.op_groups`) and the refs that
bypasses redirected (so the source-tensor maps can follow them at the end).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from hexnn_import.errors import GraphError
from hexnn_import.graph import Graph, NNPad, Node, OutputDef, Ref
from hexnn_import.ops.catalog import get_spec
from hexnn_import.ops.op_groups import OpClass, op_class, op_class_set

#: a scalar Const's cache key: its element type and its bits as an int32 (:mod:`.consts`)
ConstKey = tuple[str, int]


@dataclass
class ConstCache:
    """The prepare state's scalar cache (:mod:`.consts` fills it): fixed slots for 0, -inf, +inf, then an LRU."""

    fixed: dict[ConstKey, int] = field(default_factory=dict)
    lru: "OrderedDict[ConstKey, int]" = field(default_factory=OrderedDict)


def as_ref(r: Ref | tuple[int, int]) -> Ref:
    """``r`` as a Ref (Refs are reused: they are immutable)."""
    return r if type(r) is Ref else Ref(int(r[0]), int(r[1]))


class GraphEditor:
    """Edits one graph during prepare; :meth:`commit` makes the list match the indexes."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.const_cache = ConstCache()
        self.redirects: dict[Ref, Ref] = {}
        #: called with every node added or rewired (a pass's worklist listens here)
        self.listeners: list[Callable[[Node], None]] = []
        self._removed: set[int] = set()              # id() of nodes to drop at commit
        self._before: dict[int, list[Node]] = {}     # id(anchor) -> nodes placed just before it
        self._after: dict[int, list[Node]] = {}      # id(anchor) -> nodes placed just after it
        self._front: list[list[Node]] = []           # prepended (consts): each call's nodes, in call order
        self._made: dict[int, Node] = {}             # ids of nodes made but not yet placed
        self._by_op: dict[str, dict[int, Node]] = {}  # op -> {id(node): node}, every live node
        self._pos: dict[int, int] | None = None      # id(node) -> list index at the last commit (lazy)
        self._maybe_dead: set[int] = set()           # ids of nodes that may have lost their last reader
        self._all_maybe_dead = True                  # ... and, until the first take_maybe_dead, every node
        for n in graph.nodes:
            self._by_op.setdefault(n.op, {})[id(n)] = n
        self.op_groups: OpClass = op_class_set(self._by_op)
        #: count of edits so far (a pass that leaves it unchanged changed nothing)
        self.changes = 0
        #: check each placed node's refs at once (the pipeline turns it off when it does not verify)
        self.check_refs = True

    # ---- nodes ------------------------------------------------------------
    def alive(self, node: Node) -> bool:
        """True while ``node`` is in the graph (its id maps to this very node)."""
        return self.graph.find_node(node.node_id) is node

    def known(self, node_id: int) -> Node | None:
        """A node of the graph, or a node made (not yet placed) with this id."""
        return self.graph.find_node(node_id) or self._made.get(node_id)

    def new_internal_node_id(self) -> int:
        """A fresh id no node has and no ref names (nn_graph_new_internal_node_id)."""
        while True:
            nid = self.graph.new_id()
            if not self.graph.is_referenced(nid) and nid not in self._made:
                return nid

    def make_node(self, op: str, inputs: Iterable[Ref | tuple[int, int]], output_defs: Iterable[OutputDef],
                  padding: NNPad | int = NNPad.NA, name: str = "", node_id: int | None = None) -> Node:
        """Build a node (an op's ctor); it joins the graph through replace_nodes / insert_nodes."""
        if get_spec(op) is None:
            raise GraphError(f"node {name or node_id}: op {op} is not in the op catalog")
        nid = self.new_internal_node_id() if node_id is None else int(node_id)
        node = Node(nid, op, [as_ref(r) for r in inputs],
                    [OutputDef(tuple(o.shape), o.dtype) for o in output_defs], NNPad(padding), name)
        self._made[nid] = node
        return node

    def _check_refs(self, node: Node) -> None:
        find, made = self.graph.find_node, self._made
        for r in node.inputs:
            src = find(r.src_id) or made.get(r.src_id)  # known(), inline: once per input of every node placed
            if src is None or not 0 <= r.output_idx < len(src.output_defs):
                raise GraphError(f"node {node.label} ({node.op}): input {tuple(r)} names no output of a node")

    def _add(self, node: Node) -> None:
        nid = node.node_id
        if self.graph.find_node(nid) is node:
            raise GraphError(f"node {node.label} ({node.op}) is already in the graph")
        if self.check_refs and node.inputs:
            self._check_refs(node)
        self.graph.index_node(node)
        if self._made.get(nid) is node:
            del self._made[nid]
        bucket = self._by_op.get(node.op)
        if bucket is None:  # a new op: its class joins the set (the set only grows, so once per op is enough)
            bucket = self._by_op[node.op] = {}
            self.op_groups |= op_class(node.op)
        bucket[id(node)] = node
        self._maybe_dead.add(nid)
        self.changes += 1
        if self.listeners:
            self._notify(node)

    def _remove(self, node: Node) -> None:
        self._producers_may_die(node)
        self.graph.unindex_node(node)
        self._removed.add(id(node))
        self._by_op.get(node.op, {}).pop(id(node), None)
        self.changes += 1

    def _producers_may_die(self, node: Node) -> None:
        self._maybe_dead.update([r[0] for r in node.inputs])  # r.src_id

    def _require_alive(self, nodes: Sequence[Node]) -> None:
        if len(nodes) > 1 and len({id(n) for n in nodes}) != len(nodes):
            raise GraphError("the same node is named twice for removal")
        for n in nodes:
            if not self.alive(n):
                raise GraphError(f"node {n.label} ({n.op}) is not in the graph")

    def _notify(self, node: Node) -> None:
        for listener in self.listeners:
            listener(node)

    # ---- placement (the notes' three replacement functions) -----------------
    def replace(self, new_node: Node | None, rm_nodes: Sequence[Node]) -> None:
        """Remove ``rm_nodes`` (first one required); ``new_node`` takes the first one's place."""
        self._require_alive(rm_nodes)
        for n in rm_nodes:
            self._remove(n)
        if new_node is not None:
            self._add(new_node)
            self._before.setdefault(id(rm_nodes[0]), []).append(new_node)

    def place(self, nodes: Sequence[Node], rm_node: Node | None, anchor: Node | None, after: bool) -> int:
        """Remove ``rm_node`` (if any) and put ``nodes`` where it was, else at ``anchor`` (None: the front)."""
        if rm_node is not None:
            self._require_alive([rm_node])
            self._remove(rm_node)
            anchor, after = rm_node, False
        elif anchor is not None and not self.alive(anchor):
            raise GraphError(f"anchor node {anchor.label} ({anchor.op}) is not in the graph")
        for n in nodes:
            self._add(n)
        if anchor is None:
            # each insertion goes to the head, before the nodes put there earlier (prepare.c's prepend)
            self._front.append(list(nodes))  # joined last-first at commit (a list insert at 0 was quadratic)
        else:
            (self._after if after else self._before).setdefault(id(anchor), []).extend(nodes)
        return len(nodes)

    def rewire(self, node: Node, refs: Iterable[Ref | tuple[int, int]]) -> None:
        """Set a node's input refs, keeping the consumer index (node_rehash_inputrefs)."""
        refs = [as_ref(r) for r in refs]
        if self.alive(node):
            self._producers_may_die(node)
            self.graph.set_inputs(node, refs)
        else:
            node.inputs = refs
        self.changes += 1
        self._notify(node)

    # ---- the list ---------------------------------------------------------
    def _positions(self) -> dict[int, int]:
        if self._pos is None:
            self._pos = {id(n): i for i, n in enumerate(self.graph.nodes)}
        return self._pos

    def position(self, node: Node) -> int | None:
        """Index of ``node`` in the list as of the last commit (None for nodes placed since)."""
        return self._positions().get(id(node))

    def nodes_of(self, ops: Iterable[str], ordered: bool = True) -> list[Node]:
        """The live nodes of these ops: in list order as of the last commit, then those placed since
        (``ordered=False``: by op name, each op's nodes in the order the editor first saw them - no list walk;
        the names are sorted so a pass's visiting order, and with it the ids of the nodes it makes, does not
        depend on the process's string hash seed)."""
        found = [n for op in sorted(ops) for n in self._by_op.get(op, {}).values()]
        if not ordered or len(found) < 2:
            return found
        pos = self._positions()
        last = len(pos)
        return sorted(found, key=lambda n: pos.get(id(n), last))

    def count(self) -> int:
        """Number of live nodes (from the op index)."""
        return sum(len(d) for d in self._by_op.values())

    def op_counts(self) -> dict[str, int]:
        """Live node count per op (from the op index; no list walk)."""
        return {op: len(d) for op, d in sorted(self._by_op.items()) if d}

    def take_maybe_dead(self) -> list[Node]:
        """The live nodes that may have lost their last reader since the last call (and forget them)."""
        find = self.graph.find_node
        out = [n for n in map(find, self._maybe_dead) if n is not None]
        if self._all_maybe_dead:
            out += self.graph.nodes  # (removed ones among them fail alive(); new ones are in the set)
            self._all_maybe_dead = False
        self._maybe_dead.clear()
        return out

    def consts_first(self) -> int:
        """Commit, moving every Const to the front (stable); returns how many Consts changed position."""
        self.commit()
        nodes = self.graph.nodes
        consts = [n for n in nodes if n.op == "Const"]
        moved = sum(1 for a, b in zip(consts, nodes) if a is not b)
        if moved:
            self.graph.nodes = consts + [n for n in nodes if n.op != "Const"]
            self._pos = None
            self.changes += 1
        return moved

    @property
    def dirty(self) -> bool:
        """True when the list does not yet show every edit."""
        return bool(self._removed or self._before or self._after or self._front)

    def commit(self) -> None:
        """Rebuild the node list in one sweep: drop removed nodes, place new ones at their anchors."""
        if not self.dirty:
            return
        out: list[Node] = []
        removed, before, after = self._removed, self._before, self._after
        front = [n for group in reversed(self._front) for n in group]
        for node in front + self.graph.nodes:
            key = id(node)
            if key in before or key in after:
                self._emit(node, out)
            elif key not in removed:
                out.append(node)
        self.graph.nodes = out
        self._pos = None
        removed.clear()
        before.clear()
        after.clear()
        self._front.clear()

    def _emit(self, root: Node, out: list[Node]) -> None:
        """Append ``root`` with the nodes anchored before / after it (recursively), minus removed ones."""
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, done_before = stack.pop()
            key = id(node)
            if not done_before:
                stack.append((node, True))
                stack.extend((m, False) for m in reversed(self._before.pop(key, ())))
                continue
            if key not in self._removed:
                out.append(node)
            stack.extend((m, False) for m in reversed(self._after.pop(key, ())))
