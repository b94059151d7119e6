"""Choose and legalize the XS3 kernels of a graph's source layers: Replace, then Legalize.

:func:`lower_graph` walks the quantized layers the importer recorded on the
graph (``graph.source_layers``, :mod:`hexnn_import.source_layers`: any
source format), asks the Replace rules (:mod:`.replace`) for a kernel, then
legalizes the weights and BSO (:mod:`.legalize`). Every layer gets a
:class:`LayerResult`; a layer that cannot be lowered keeps the reason (from
Replace, or a BSO / kernel constraint met in Legalize) and stays on the
Hexagon engine. :mod:`.graph_pass` then puts the lowered layers into the
graph as XS3 nodes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hexnn_import.graph import Graph
from hexnn_import.source_layers import LayerInfo
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.legalize import LoweredLayer, legalize
from hexnn_import.xs3.replace import XS3Op
from hexnn_import.xs3.replace_rules import replace


@dataclass
class LayerResult:
    """One operator's outcome: the lowered layer, or why it was not lowered."""

    layer: LayerInfo
    lowered: LoweredLayer | None = None
    reason: str | None = None
    replaced: XS3Op | None = None

    @property
    def name(self) -> str:
        return self.layer.name

    def entry(self) -> dict[str, Any]:
        """The manifest entry (without agreement): source op and tensors, kernel, shapes, lowered / reason."""
        d: dict[str, Any] = {
            "name": self.layer.name, "op": self.layer.opname, "op_index": self.layer.index,
            "inputs": [t.name for t in self.layer.inputs], "outputs": [t.name for t in self.layer.outputs],
            "source_input_shape": list(self.layer.x.shape) if self.layer.inputs else [],
            "source_output_shape": list(self.layer.y.shape) if self.layer.outputs else [],
            "lowered": self.lowered is not None, "reason": self.reason,
        }
        if self.lowered is not None:
            d.update(self.lowered.describe())
            d["replace_rule"] = self.lowered.op.rule
            d["canonicalizations"] = list(self.lowered.op.canonical)
        else:
            d["kernel"] = self.replaced.kernel if self.replaced is not None else None
        return d


@dataclass
class LoweringPlan:
    """Every operator of a model with its lowering outcome, in model order."""

    graph: Graph
    results: list[LayerResult] = field(default_factory=list)
    label: str = "model"

    @property
    def lowered(self) -> list[LayerResult]:
        return [r for r in self.results if r.lowered is not None]

    @property
    def not_lowered(self) -> list[LayerResult]:
        return [r for r in self.results if r.lowered is None]

    def by_name(self, name: str) -> LayerResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)


def lower_layer(layer: LayerInfo) -> LayerResult:
    """Replace, then Legalize one layer; constraint and BSO errors become the reason."""
    op = replace(layer)
    if isinstance(op, str):
        return LayerResult(layer, reason=op)
    try:
        return LayerResult(layer, lowered=legalize(op), replaced=op)
    except XS3Error as exc:
        return LayerResult(layer, reason=f"{op.kernel}: {exc}", replaced=op)


def lower_graph(graph: Graph, label: str | None = None) -> LoweringPlan:
    """The lowering plan of an imported graph's source layers."""
    results = [lower_layer(layer) for layer in graph.source_layers]
    return LoweringPlan(graph, results, label or str(graph.meta.get("source", "model")))


def lowerable_graph(graph: Graph) -> Graph:
    """The graph the lowering works on: an imported graph itself, or a prepared graph's copy of its imported form
    (``graph.imported``, which prepare keeps and graph files save), or a prepared graph with no source layer
    itself (a copy: nothing lowers); XS3Error when a prepared graph with source layers has no imported form."""
    if not graph.prepared:
        return graph
    if graph.imported is None and not graph.source_layers:  # no quantized layer: nothing lowers, all on Hexagon
        return graph.clone()
    if graph.imported is None:
        raise XS3Error(f"{graph.meta.get('source', 'the graph')}: a prepared graph without the imported graph the XS3 "
                       "lowering works on (a graph file written before version 2, or prepared without source "
                       "layers); give the model file, or convert it again")
    return graph.imported.clone()


def lower_model(graph: Graph, label: str | None = None) -> LoweringPlan:
    """The lowering plan of an imported (or prepared) graph, as ``hexnn-import xs3-export`` lowers it."""
    return lower_graph(lowerable_graph(graph), label)
