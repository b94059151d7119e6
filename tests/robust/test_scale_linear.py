"""The XS3 lowering of a 2,000-ADD chain stays linear in layers (issue 38, finding 2: ``xs3/graph_pass.py`` walked
every source tensor once per layer, so 4,000 ADDs took 31 s and 10,000 took 478 s; ``bench/hostile_scale.py``
times the whole 10,000-layer export).

Two properties a per-layer walk breaks: the graph's source-tensor maps are walked whole a fixed number of times
whatever the layer count (counted on the maps themselves), and four times the layers cost well under sixteen
times the CPU (a linear pass gives about four; the walk per layer was quadratic).
"""
from __future__ import annotations

import gc
import time
from typing import Any, Iterator

from hexnn_import.graph import Graph
from hexnn_import.importers.tflite.importer import import_tflite
from hexnn_import.testing.hostile_chains import add_chain_tflite
from hexnn_import.xs3.network_desc import network_desc
from hexnn_import.xs3.run import lowered_graph


class CountingDict(dict):  # type: ignore[type-arg]
    """A dict that counts the walks of all its entries (``items``, ``keys``, ``values``, iteration)."""

    walks = 0

    def items(self) -> Any:
        self.walks += 1
        return super().items()

    def keys(self) -> Any:
        self.walks += 1
        return super().keys()

    def values(self) -> Any:
        self.walks += 1
        return super().values()

    def __iter__(self) -> Iterator[Any]:
        self.walks += 1
        return super().__iter__()


def _import(tmp_path: Any, n: int) -> Graph:
    path = tmp_path / f"chain{n}.tflite"
    path.write_bytes(add_chain_tflite(n))
    return import_tflite(path)


def _lower(graph: Graph) -> tuple[float, int]:
    """CPU seconds of the lowering, the graph pass and the network description (arena plan included), and the
    whole walks of the two source-tensor maps made meanwhile."""
    graph.tensor_map = CountingDict(graph.tensor_map)
    graph.tensor_ranges = CountingDict(graph.tensor_ranges)
    gc.collect()
    gc.disable()  # a collection landing in one run only would skew the ratio
    try:
        t0 = time.process_time()
        lowered, plan, placements = lowered_graph(graph)
        net, arena = network_desc(lowered, "chain")
        cpu = time.process_time() - t0
    finally:
        gc.enable()
    assert lowered is graph and len(net.layers) == len(plan.results) == len(placements)
    assert all(p.target == "xs3" for p in placements) and arena.size == 3 * 128  # x and two chain tensors live
    return cpu, graph.tensor_map.walks + graph.tensor_ranges.walks  # type: ignore[attr-defined]


def test_a_2000_layer_chain_lowers_in_linear_time(tmp_path: Any) -> None:
    cpu_small, walks_small = _lower(_import(tmp_path, 500))
    cpu_large, walks_large = _lower(_import(tmp_path, 2000))
    assert walks_large == walks_small <= 4, (walks_small, walks_large)  # the old pass: two walks per layer
    assert cpu_large < 8 * max(cpu_small, 0.02), (cpu_small, cpu_large)  # linear: ~4x; quadratic: ~16x
