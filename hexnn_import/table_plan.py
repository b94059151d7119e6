"""The tables a graph's kernels will keep, counted before the first run (issue 38 [Robust], finding 1).

:mod:`hexnn_import.ops.table_store` counts each kept table as a kernel builds it; this module adds the check
in advance that the activation plan has (:meth:`hexnn_import.engine.Engine.check_memory`): before a run
starts, the tables every node will build are summed with the run's activations, and a graph whose tables
cannot fit the memory budget (:mod:`hexnn_import.memory`) is refused, one line naming the node at which the
sum passes it, with nothing built.

Known in advance: a ``QuantizedAdd_8p8to8`` of same-shape operands whose output range is given (inputs 6
and 7 finite, so nnlib's ``qadd_888_check`` fixes it once) and whose input ranges are fixed at convert time
(Consts, an earlier such add's zero-fixed range, or what
:func:`hexnn_import.optimizer.ranges.static_range` follows). Its tables are the ``addsub_scaling`` tables of
``op_add.c`` for one :class:`~hexnn_import.ops.nnlib_addsub.Scaling`, under the very key the kernel shares
them by (``ops/kernels/add8.py``): nodes with one scaling count once. A table whose key depends on the data
(an auto range) is counted when it is built, as before.

Then the rest of what a run keeps (:func:`check_run_state`): the graph's records and each op node's state and
caches (:mod:`hexnn_import.graph_memory`, bytes a node measured), summed in run order with the activations and
these tables, so a run that cannot fit is refused before its first node, naming the node where the budget
runs out.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator

import numpy as np

from hexnn_import.graph import Graph, Node, Ref
from hexnn_import.graph_memory import CACHE_NODE_BYTES, RUN_NODE_BYTES, record_bytes
from hexnn_import.memory import budget_bytes, check_bytes, format_size
from hexnn_import.ops.nnlib_addsub import ScalingFailed, check_info, input_params, scaling
from hexnn_import.optimizer.ranges import static_range

Range = tuple[np.float32, np.float32]
#: entries of one 256x256 table (``ops/kernels/add8.py`` ``TABLE_CODES``)
TABLE_CODES = 256 * 256
#: resident bytes of a kept table per byte counted, the allocator's share included: 238,037 against 196,608 a
#: table set on a 2,000-ADD chain of distinct ranges (RSS before and after its first run, CPython 3.11, glibc)
TABLE_RESIDENT = 1.22
ADD = "QuantizedAdd_8p8to8"


def planned_tables(graph: Graph) -> Iterator[tuple[Node, Hashable, int]]:
    """``(node, key, bytes)`` of every table known in advance, in run order (a key may repeat: shared)."""
    fixed: dict[Ref, np.float32] = {}  # outputs 1, 2 of the adds with a given range: its zero-fixed ends
    memo: dict[tuple, tuple[Hashable, int] | None] = {}
    for node in graph.nodes:
        if node.op != ADD or len(node.inputs) < 8:
            continue
        spec = _range(graph, fixed, node.inputs[6], node.inputs[7])
        if spec is None or not (math.isfinite(spec[0]) and math.isfinite(spec[1])):
            continue
        info = check_info(*spec)
        fixed[Ref(node.node_id, 1)], fixed[Ref(node.node_id, 2)] = info.out_min, info.out_max
        a_rng = _range(graph, fixed, node.inputs[2], node.inputs[3])
        b_rng = _range(graph, fixed, node.inputs[4], node.inputs[5])
        if a_rng is None or b_rng is None or not _same_shapes(graph, node):
            continue
        key = (float(info.out_min), float(info.out_max), *map(float, a_rng), *map(float, b_rng))
        if key not in memo:
            memo[key] = _add_table(info.out_min, info.out_max, a_rng, b_rng)
        if memo[key] is not None:
            yield node, *memo[key]  # type: ignore[misc]


def _add_table(out_min: np.float32, out_max: np.float32, a_rng: Range, b_rng: Range) -> tuple[Hashable, int] | None:
    """The store key and bytes of a fixed-range add's tables (``add8._tables``), None when scaling fails (the
    run refuses the node)."""
    zeros, steps = input_params(a_rng, b_rng)
    try:
        sc = scaling(out_min, out_max, zeros, steps, True)
    except ScalingFailed:
        return None
    return ("qadd_tables", sc), TABLE_CODES * (1 if sc.underrange else 3)


def _range(graph: Graph, fixed: dict[Ref, np.float32], lo: Ref, hi: Ref) -> Range | None:
    """A (min, max) pair as the kernel reads it (float32), when fixed before the run."""
    if lo in fixed and hi in fixed:
        return fixed[lo], fixed[hi]
    known = static_range(graph, lo, hi)
    return None if known is None else (np.float32(known[0]), np.float32(known[1]))


def _same_shapes(graph: Graph, node: Node) -> bool:
    """The two data operands' declared shapes agree (the add's same-shape path, which keeps the tables)."""
    a, b = node.inputs[0], node.inputs[1]
    sa = graph.node(a.src_id).output_defs[a.output_idx].shape
    sb = graph.node(b.src_id).output_defs[b.output_idx].shape
    return tuple(sa) == tuple(sb)


def check_table_plan(graph: Graph, activations: int,
                     check: Callable[[int, str], None] = check_bytes) -> int:
    """ResourceError (one line, naming the node) when the tables known in advance, with the run's
    ``activations`` bytes, exceed the memory budget; else the tables' bytes (each shared key once)."""
    seen: set[Hashable] = set()
    total = nodes = 0
    limit = budget_bytes() - activations
    for node, key, nbytes in planned_tables(graph):
        if key in seen:
            continue
        seen.add(key)
        total += nbytes
        nodes += 1
        if total > limit:
            check(activations + total, f"node {node.label} ({node.op}): the 256x256 tables kept between runs "
                  f"({nodes} distinct, {format_size(total)} up to this node, counted before the run) with the "
                  f"run's activations ({format_size(activations)})")
    return total


def check_run_state(graph: Graph, activations: int, tables: int,
                    check: Callable[[int, str], None] = check_bytes) -> int:
    """ResourceError (one line, naming the node at which the budget runs out) when the graph's records
    (:func:`hexnn_import.graph_memory.record_bytes`), what a run keeps per op node
    (:data:`~hexnn_import.graph_memory.RUN_NODE_BYTES` and the caches, :data:`~hexnn_import.graph_memory.
    CACHE_NODE_BYTES`), the tables known in advance at their resident size (:data:`TABLE_RESIDENT` times
    their bytes, each counted at the first node that needs it) and the ``activations`` exceed the budget,
    summed in run order before the first node runs. Returns the bytes the kernels do not count as they build
    them (the records and :data:`RUN_NODE_BYTES` a node): the table store's baseline beside the activations.
    ``tables`` (their bytes as counted) only describes them."""
    records = record_bytes(graph)
    per_node = RUN_NODE_BYTES + CACHE_NODE_BYTES
    ops = [n for n in graph.nodes if not n.is_const and n.op not in ("INPUT", "OUTPUT")]
    first: dict[int, int] = {}  # node id -> bytes of the tables it is the first to need
    seen: set[Hashable] = set()
    if tables:
        for node, key, nbytes in planned_tables(graph):
            if key not in seen:
                seen.add(key)
                first[node.node_id] = first.get(node.node_id, 0) + nbytes
    total = activations + records
    limit = budget_bytes()
    for k, node in enumerate(ops, 1):
        total += per_node + int(first.get(node.node_id, 0) * TABLE_RESIDENT)
        if total > limit:
            check(total, f"node {node.label} ({node.op}): the run's state of {k:,} op nodes up to this one "
                  f"({format_size(per_node)} a node, counted before the run) with their 256x256 tables "
                  f"({format_size(tables)} counted, {TABLE_RESIDENT}x that resident), the graph's records "
                  f"({len(graph.nodes):,} nodes, {format_size(records)}) and the activations "
                  f"({format_size(activations)})")
    if total > limit:  # no op node: the records and activations alone
        check(total, f"the graph's records ({len(graph.nodes):,} nodes, {format_size(records)}) with the run's "
              f"activations ({format_size(activations)})")
    return records + RUN_NODE_BYTES * len(ops)
