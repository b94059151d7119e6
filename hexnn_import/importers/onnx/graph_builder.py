"""The ONNX importer's state: the model, its live nodes, the tensor table and the fusion plan.

What the checks (:mod:`.common`), the planners (:mod:`.fuse`) and the layer records (:mod:`.layer_records`)
read; the importer (:mod:`.importer`) subclasses it with the walk, so those modules sit below the importer
and import nothing of it.
"""
from __future__ import annotations

from typing import Mapping

from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.onnx.fusion_plan import FusionPlan
from hexnn_import.importers.onnx.reader import ONode, OnnxModel
from hexnn_import.importers.onnx.tensor_store import TensorStore


class OnnxGraphBuilder(GraphBuilder):
    """The graph builder the ONNX handlers append through, with the tensor table (``tensors``,
    :class:`TensorStore`) and the fusion plan (``plan``, :class:`FusionPlan`) it owns; the walk is
    :class:`~hexnn_import.importers.onnx.importer.OnnxImporter`'s."""

    def __init__(self, model: OnnxModel, calibration: Mapping[str, tuple[float, float]] | None = None):
        super().__init__(model.label, "onnx", calibration)
        self.m = model
        self.live = self._live_nodes()
        self.tensors = TensorStore(model, self, self.live)
        self.plan = FusionPlan()

    def _live_nodes(self) -> list[ONode]:
        """Nodes some graph output depends on, in model order (dead branches are not imported)."""
        need = set(self.m.outputs)
        live = []
        for node in reversed(self.m.nodes):
            if any(o in need for o in node.outputs if o):
                live.append(node)
                need.update(i for i in node.inputs if i)
        return live[::-1]
