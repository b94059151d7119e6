"""Passes and pattern passes with a worklist (docs/architecture.md, "Models learned from": xDSL).

A pass is a frozen dataclass with a ``name``; :meth:`Pass.apply` edits the
graph through a :class:`GraphEditor` and returns how many rewrites it made.
A :class:`PatternPass` visits the nodes whose op is one of its ``roots``
(from the editor's op index; in list order, like the notes' graph_iterator,
when the pass is ``ordered``) from a worklist: every node the editor adds or rewires while the pass runs
is pushed again if it is a root, so a rewrite that creates a new match is
seen without restarting from the top. Each node is visited a bounded number
of times, so a pass costs O(candidates + edits), not O(nodes).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import ClassVar, Iterable

from hexnn_import.errors import GraphError
from hexnn_import.graph import Node
from hexnn_import.optimizer.check import GRAPHCHECK_HASH
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.ops.op_groups import OpClass


class Worklist:
    """FIFO of nodes, each queued at most once at a time."""

    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self._queue: deque[Node] = deque()
        self._queued: set[int] = set()
        for n in nodes:
            self.push(n)

    def push(self, node: Node) -> None:
        """Queue ``node`` unless it is queued already."""
        if id(node) not in self._queued:
            self._queued.add(id(node))
            self._queue.append(node)

    def pop(self) -> Node | None:
        """The next node, or None when empty."""
        if not self._queue:
            return None
        node = self._queue.popleft()
        self._queued.discard(id(node))
        return node


@dataclass(frozen=True)
class Pass:
    """One prepare pass. Runs only when every class in ``requires`` is in the graph's op-class set."""

    name: str = "pass"
    requires: ClassVar[OpClass] = OpClass.NONE
    #: True when the pass reads list positions (the pipeline commits the list first)
    needs_list: ClassVar[bool] = False
    #: check_graph flags the pipeline checks after this pass (at debug_level >= 1)
    check_flags: ClassVar[int] = GRAPHCHECK_HASH

    def should_run(self, ed: GraphEditor) -> bool:
        """False when a class this pass needs is absent (the pass would find nothing)."""
        return (ed.op_groups & self.requires) == self.requires

    def apply(self, ed: GraphEditor) -> int:
        """Edit the graph; returns the number of rewrites."""
        raise NotImplementedError


@dataclass(frozen=True)
class PatternPass(Pass):
    """A pass made of one ``match_and_rewrite`` tried on each root node (worklist-driven)."""

    roots: ClassVar[frozenset[str]] = frozenset()
    #: visit the roots in list order (else in op-index order: imported nodes in list order, then new ones)
    ordered: ClassVar[bool] = False
    #: visits allowed per node (initial and pushed) before the pass is declared runaway
    MAX_VISITS: ClassVar[int] = 16

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        """Rewrite the pattern rooted at ``node`` if it matches; True when the graph changed."""
        raise NotImplementedError

    def apply(self, ed: GraphEditor) -> int:
        candidates = ed.nodes_of(self.roots, ordered=self.ordered)
        work = Worklist(candidates)
        seen: set[int] = {id(n) for n in candidates}  # distinct nodes that entered the worklist

        def listen(node: Node) -> None:
            if node.op in self.roots:
                seen.add(id(node))
                work.push(node)

        ed.listeners.append(listen)
        rewrites = visits = 0
        try:
            while (node := work.pop()) is not None:
                visits += 1
                if visits > self.MAX_VISITS * (len(seen) + 1):
                    raise GraphError(f"pass {self.name} does not converge (rewrites keep matching)")
                if ed.alive(node) and node.op in self.roots and self.match_and_rewrite(node, ed):
                    rewrites += 1
        finally:
            ed.listeners.remove(listen)
        return rewrites
