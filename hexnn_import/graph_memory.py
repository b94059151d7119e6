"""The Python graph and the run's per-node state, counted against the memory budget before each phase (issue 38).

:mod:`hexnn_import.memory` refuses what a file declares (arrays, tensors) and the engine's activation plan;
this module adds what the pipeline itself keeps per node, estimated from the node count before the work is
done, so a graph that cannot fit is refused in one line, exit 2, naming its size and the budget - not after
minutes of work. The figures are measured, not derived: a chain of 10,000 quantized ADDs (30,004 nodes, its
copy as imported and 10,000 source-layer records; ``bench/hostile_scale.py``) on CPython 3.11, x86-64:

- :data:`NODE_BYTES`: a node's record with its input refs, output defs, Const array object, its entries in
  the id hash, the consumer index and the tensor maps: 1.0 KiB measured (``sys.getsizeof`` walk), 1.25 KiB
  of resident memory with the allocator's overhead;
- :data:`LAYER_BYTES`: a source-layer record (:class:`~hexnn_import.source_layers.LayerInfo`), ~1.0 KiB;
- :data:`RUN_NODE_BYTES`: what a run keeps per op node besides the caches its kernel counts as it builds
  them: the plan step, kernel and context, the node state, replay and kept range outputs, ~6 KiB;
- :data:`CACHE_NODE_BYTES`: the caches :mod:`hexnn_import.ops.node_cache` counts (1.0-1.6 KiB a node on
  the bundled MobileNetV2, DS-CNN and small models, 2 KiB on the ADD chain).

Phases: the importers may state their node count first (:func:`check_node_count`); a graph being built is
checked every :data:`CHECK_EVERY` nodes (:func:`check_growing`, from :class:`~hexnn_import.graph.Graph`);
prepare, the graph file and the run check the graph they start from (:func:`check_graph`). Const data is
counted by the checks that already cover it (the model file, the tensors).
"""
from __future__ import annotations

from typing import Any, Protocol

from hexnn_import.memory import budget_bytes, check_bytes, format_size


class Graph(Protocol):
    """What is counted of a :class:`hexnn_import.graph.Graph` (which checks itself through this module, so this
    module does not import it)."""

    nodes: list[Any]
    imported: Any
    source_layers: Any

NODE_BYTES = 1280
LAYER_BYTES = 1280
RUN_NODE_BYTES = 6 << 10
CACHE_NODE_BYTES = 2 << 10
#: a graph being built is checked each time it holds a multiple of this many nodes
CHECK_EVERY = 4096
#: graph nodes per source operator assumed before an import (an op with its range and parameter Consts), and
#: the copy of the graph as imported that prepare keeps
NODES_PER_SOURCE_OP = 3
COPIES = 2


def record_bytes(graph: Graph) -> int:
    """Estimated bytes of ``graph``'s records: its nodes, those of the copy it keeps as imported, its layers."""
    nodes = len(graph.nodes) + (len(graph.imported.nodes) if graph.imported is not None else 0)
    return nodes * NODE_BYTES + len(graph.source_layers) * LAYER_BYTES


def _per_node(total: int, nodes: int) -> str:
    return f"{format_size(total // max(nodes, 1))} a node"


def check_node_count(source_ops: int, what: str) -> None:
    """Before an import: ResourceError when ``source_ops`` operators would make a graph (and the copy prepare
    keeps) above the budget, e.g. "model m.onnx: 2,000,000 operators (about 12,000,000 graph nodes) would
    need 14.3 GiB ..."."""
    nodes = source_ops * NODES_PER_SOURCE_OP * COPIES
    need = nodes * NODE_BYTES + source_ops * LAYER_BYTES
    check_bytes(need, f"{what}: {source_ops:,} operators (about {nodes:,} graph nodes, "
                f"{_per_node(need, nodes)}, counted before the import)")


def check_growing(nodes: int) -> None:
    """While a graph is built: ResourceError when its ``nodes`` records alone are above the budget."""
    need = nodes * NODE_BYTES
    if need > budget_bytes():
        check_bytes(need, f"the graph being built ({nodes:,} nodes so far, {_per_node(need, nodes)})")


def check_graph(graph: Graph, phase: str, extra: int = 0, extra_what: str = "") -> int:
    """Before ``phase`` (prepare, writing the graph file, a run): ResourceError when the graph's records and
    ``extra`` bytes the phase adds are above the budget; else the records' bytes."""
    records = record_bytes(graph)
    nodes = len(graph.nodes) + (len(graph.imported.nodes) if graph.imported is not None else 0)
    check_bytes(records + extra, f"{phase} of a graph of {nodes:,} nodes ({format_size(records)} of records, "
                f"{_per_node(records, nodes)}" + (f", {extra_what}" if extra_what else "") + ")")
    return records
