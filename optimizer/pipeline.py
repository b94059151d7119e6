"""The prepare pipeline: the passes in the documented order, verified after each
(hexagon_nn_prepare_notes.txt, "Order of Optimization Passes" and "check_graph"; docs/architecture.md).

:func:`run_pipeline` runs each pass whose op classes are present. With
``verify`` (on in tests: see :func:`verify_default`) it then commits the
list edits and runs :meth:`Graph.verify`, and with ``debug_level >= 1``
``check_graph`` with the pass's flags; a broken invariant is raised as
GraphError naming the pass, and a pass that changed nothing is not verified
again. Without either, the list is committed only for the passes that read
list positions and at the end, so a pass costs O(what it touches). The time
of each pass (excluding the checks, as OPTIMIZE_PERF(-1) does) goes into
the returned :class:`PrepareReport`. The cyclic garbage collector is paused
while the passes run (they allocate many small acyclic objects, and each
full collection would rescan the whole graph). At the end the graph's
source-tensor maps follow the refs that bypasses redirected, and drop
tensors that fusion removed.
"""
from __future__ import annotations

import gc
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Iterable, Sequence

from hexnn_import.errors import GraphError, HexnnError
from hexnn_import.graph import Graph, Ref
from hexnn_import.graph_memory import check_graph as check_graph_records
from hexnn_import.optimizer.check import GRAPHCHECK_HASH, check_graph
from hexnn_import.optimizer.cleanup import GatherConstNodes, GatherConstNodesBeforeFusion, RemoveDeadNodes
from hexnn_import.optimizer.d32_passes import ConvertToDepth32, RemoveConcatsWithPlacement, RemoveUnnecessaryD32Converts
from hexnn_import.optimizer.device_defects import device_defect_notes
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.insane_dwise import ConvertInsaneDwise
from hexnn_import.optimizer.pass_base import Pass
from hexnn_import.optimizer.quant_passes import (MakeAutoquantize, MakeAutorequantize, RemoveUnnecessaryDequantQuants,
                                                 RemoveUnnecessaryQuants, RemoveUnnecessaryRequants)
from hexnn_import.optimizer.relus import MoveRelus
from hexnn_import.optimizer.scalar_mpys import FoldScalarMpys
from hexnn_import.optimizer.supernodes import MakeReluXNodes, MakeSupernodes, MarkBiasaddNodes
from hexnn_import.optimizer.transpose_conv import CreateTransposeConvNodes
from hexnn_import.optimizer.transpose_conv16 import CreateTransposeConv16Nodes

#: The documented order (with prepare.c's create_transpose_conv_nodes and convert_insane_dwise after the
#: autoquantize passes and its first gather_const_nodes before make_supernodes, where its optimize() runs
#: them), plus two repeats: dead nodes are removed before the fusions too (as prepare.c does: a bypassed node
#: still reads its producer until then, and would hide a unique consumer), and remove_unnecessary_requants
#: runs again after the fusions, which can give a Requantize_8to8 the very range it requests (a Dequantize ->
#: Quantize pair after a Relu).
DEFAULT_PASSES: tuple[Pass, ...] = (
    MakeAutorequantize(), MakeAutoquantize(), CreateTransposeConvNodes(), CreateTransposeConv16Nodes(),
    ConvertInsaneDwise(),
    RemoveUnnecessaryQuants(), RemoveUnnecessaryDequantQuants(), RemoveUnnecessaryRequants(), RemoveDeadNodes(),
    MarkBiasaddNodes(), MakeReluXNodes(), GatherConstNodesBeforeFusion(), MakeSupernodes(), FoldScalarMpys(),
    MoveRelus(), RemoveUnnecessaryRequants(), ConvertToDepth32(), RemoveUnnecessaryD32Converts(),
    RemoveDeadNodes(), RemoveConcatsWithPlacement(), RemoveDeadNodes(), GatherConstNodes(),
)
PASSES: dict[str, Pass] = {p.name: p for p in DEFAULT_PASSES}


class UnknownPassError(HexnnError):
    """A pass name that the pipeline does not have."""


def passes_by_name(names: Iterable[str]) -> tuple[Pass, ...]:
    """The passes named (in the order given); UnknownPassError lists the valid names."""
    out, unknown = [], []
    for name in (n.strip() for n in names):
        if name in PASSES:
            out.append(PASSES[name])
        elif name:
            unknown.append(name)
    if unknown:
        raise UnknownPassError(f"unknown pass(es) {', '.join(unknown)}; passes are: {', '.join(PASSES)}")
    return tuple(out)


@dataclass
class PassRecord:
    """What one pass did: whether it ran (op classes present), time, rewrites, node counts."""

    name: str
    ran: bool
    seconds: float
    rewrites: int
    nodes_before: int
    nodes_after: int


@dataclass
class PrepareReport:
    """The per-pass table of one prepare, and the op counts before and after."""

    records: list[PassRecord] = field(default_factory=list)
    op_counts_before: dict[str, int] = field(default_factory=dict)
    op_counts_after: dict[str, int] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Total time in the passes (checks excluded)."""
        return sum(r.seconds for r in self.records)

    def as_dicts(self) -> list[dict]:
        """The records as JSON-ready dicts."""
        return [asdict(r) for r in self.records]

    def table(self) -> str:
        """The timing table as text, one line per pass."""
        lines = [f"{'pass':34} {'ms':>9} {'rewrites':>8} {'nodes':>13}"]
        for r in self.records:
            ms = f"{r.seconds * 1e3:9.2f}" if r.ran else f"{'skipped':>9}"
            lines.append(f"{r.name:34} {ms} {r.rewrites:8d} {r.nodes_before:6d}->{r.nodes_after:<6d}")
        lines.append(f"{'total':34} {self.seconds * 1e3:9.2f}")
        return "\n".join(lines)


def verify_default() -> bool:
    """Whether passes are verified when the caller does not say: on under pytest ("on in tests"),
    or as the environment variable HEXNN_VERIFY (1 / 0) says; off otherwise."""
    env = os.environ.get("HEXNN_VERIFY")
    if env is not None:
        return env.strip().lower() not in ("", "0", "false", "no", "off")
    return "PYTEST_CURRENT_TEST" in os.environ


def _checked(ed: GraphEditor, name: str, verify: bool, flags: int, debug_level: int) -> None:
    """Commit the list, then verify() (when asked) and check_graph; GraphError names the pass."""
    if not verify and debug_level < 1:
        return
    ed.commit()
    try:
        if verify:
            ed.graph.verify()
        check_graph(ed.graph, flags, debug_level)
    except GraphError as exc:
        what = f"pass {name} broke the graph" if name else "the graph given to prepare is broken"
        raise GraphError(f"{what}: {exc}") from exc


def run_pipeline(graph: Graph, passes: Sequence[Pass] | None = None, verify: bool | None = None,
                 debug_level: int = 0) -> PrepareReport:
    """Run ``passes`` (default: all, in order) on ``graph`` in place; returns the report.

    ``verify`` None means :func:`verify_default` (on in tests).
    """
    verify = verify_default() if verify is None else verify
    check_graph_records(graph, "prepare")  # the records (and the copy kept as imported) within the memory budget
    collecting = gc.isenabled()
    gc.disable()  # passes make many small acyclic objects; full collections would rescan the graph
    try:
        ed = GraphEditor(graph)
        ed.check_refs = verify or debug_level >= 1
        _checked(ed, "", verify, GRAPHCHECK_HASH, debug_level)
        report = PrepareReport(op_counts_before=ed.op_counts())
        for p in DEFAULT_PASSES if passes is None else passes:
            before, changes = ed.count(), ed.changes
            start = time.perf_counter()
            ran = p.should_run(ed)
            rewrites = 0
            if ran:
                try:
                    if p.needs_list:
                        ed.commit()
                    rewrites = p.apply(ed)
                except GraphError as exc:
                    raise GraphError(f"pass {p.name}: {exc}") from exc
            seconds = time.perf_counter() - start
            # a pass that changed nothing leaves the graph verified by the pass before it
            _checked(ed, p.name, verify and ed.changes != changes, p.check_flags, debug_level)
            report.records.append(PassRecord(p.name, ran, seconds, rewrites, before, ed.count()))
        ed.commit()
        follow_redirects(ed)
        report.op_counts_after = ed.op_counts()
        device_defect_notes(ed.graph)   # a node the DSP's own code gets wrong: a note and a warning (issue 36)
    finally:
        if collecting:
            gc.enable()
    return report


def _follow(ed: GraphEditor, ref: Ref) -> Ref | None:
    for _ in range(64):
        node = ed.graph.find_node(ref.src_id)
        if node is not None and ref.output_idx < len(node.output_defs):
            return ref
        nxt = ed.redirects.get(ref)
        if nxt is None:
            return None
        ref = nxt
    return None


def follow_redirects(ed: GraphEditor) -> None:
    """Point the graph's source-tensor maps at live refs; drop the tensors that no longer exist."""
    g = ed.graph
    tmap = {name: _follow(ed, r) for name, r in g.tensor_map.items()}
    g.tensor_map = {k: r for k, r in tmap.items() if r is not None}
    ranges = {name: (_follow(ed, a), _follow(ed, b)) for name, (a, b) in g.tensor_ranges.items()}
    g.tensor_ranges = {k: (a, b) for k, (a, b) in ranges.items()
                       if a is not None and b is not None and k in g.tensor_map}
