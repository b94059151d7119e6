"""The XS3 execution path: the imported graph with its lowered layers as XS3 nodes, on the one engine.

The model is imported as usual (one hexagon graph, not prepared, so every
source tensor keeps its node and range; a prepared graph brings its imported
form, ``Graph.imported``); :func:`~.lower.lower_graph` chooses
kernels for the layers the importer recorded, and
:func:`~.graph_pass.apply_lowering` replaces their nodes by ``XS3_<kernel>``
nodes, whose kernels (:mod:`.graph_ops`) the engine runs like any other.
Layers that were not lowered, and every other op, stay Hexagon nodes, so a
whole model runs either way.
"""
from __future__ import annotations

from hexnn_import.graph import Graph
from hexnn_import.ops.op_groups import is_xs3
from hexnn_import.runner import Runner
from hexnn_import.xs3.gc_pause import fewer_collections
from hexnn_import.xs3.graph_pass import Placement, apply_lowering
from hexnn_import.xs3.lower import LoweringPlan, lower_graph, lowerable_graph
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions

__all__ = ["Placement", "XS3Runner", "lowered_graph"]


def lowered_graph(graph: Graph, options: VPUOptions = DEFAULT_OPTIONS) -> tuple[Graph, LoweringPlan, list[Placement]]:
    """Lower an imported graph (changed in place) or a prepared one (a copy of its imported form,
    :func:`~.lower.lowerable_graph`) and put the XS3 nodes in; returns the graph, the plan and every layer's
    placement (fewer garbage collections meanwhile: :mod:`.gc_pause`)."""
    with fewer_collections():
        base = lowerable_graph(graph)
        plan = lower_graph(base)
        return base, plan, apply_lowering(base, plan, options)


class XS3Runner(Runner):
    """Runs an imported (or prepared) graph with its lowered layers on the simulated XS3 kernels (source dtypes
    in and out).

    ``placements`` says where every layer runs and, for the Hexagon ones, why.
    ``literal=True`` runs every XS3 node through its literal kernel instead
    of the exact fast form of :mod:`.kernels_fast`.
    """

    def __init__(self, graph: Graph, options: VPUOptions = DEFAULT_OPTIONS, literal: bool = False):
        graph, self.plan, self.placements = lowered_graph(graph, options)
        self.options = options
        super().__init__(graph)
        if literal:  # read by the XS3 nodes' kernels (graph_ops) when they first run
            for node in graph.nodes:
                if is_xs3(node.op):
                    self.engine.state.setdefault(node.node_id, {})["literal"] = True

    @property
    def xs3_layers(self) -> list[str]:
        return [p.name for p in self.placements if p.target == "xs3"]
