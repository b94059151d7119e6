"""The fusion plan: what the planners decide before the ONNX walk (:mod:`.fuse` module doc), as one record.

Below the importer and the planners alike: the registry's planner type, the importer's state
(:mod:`.graph_builder`) and every planner name it, and it names nothing of theirs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hexnn_import.importers.onnx.reader import ONode

Range = tuple[float, float]


@dataclass
class FusionPlan:
    """What is fused before the walk: ONNX node indices (``ONode.index``) to what absorbs them."""

    #: Conv index -> the BatchNormalization folded into it
    bn: dict[int, ONode] = field(default_factory=dict)
    #: Conv / Gemm / MatMul index -> the Relu / Clip folded into its output range
    act: dict[int, ONode] = field(default_factory=dict)
    #: ConvInteger / MatMulInteger index -> its dynamic-quantization chain (onnx.handlers.qop_dynamic.DynLayer)
    dynamic: dict[int, Any] = field(default_factory=dict)
    #: nodes imported as part of another node's emission (the walk skips them)
    absorbed: set[int] = field(default_factory=set)
    #: tensor name -> the fixed range a fusion chose for it (read before its declared / calibrated one)
    range_override: dict[str, Range] = field(default_factory=dict)
    #: node index -> the handler that imports a whole chain ending at that node (its other nodes absorbed;
    #: e.g. onnx.handlers.transformer's LayerNorm and GELU patterns); the walk calls it instead of the op's own
    chains: dict[int, Any] = field(default_factory=dict)

    def merge(self, part: "FusionPlan") -> "FusionPlan":
        """This plan with ``part``'s decisions added (a node absorbed twice is one planner's mistake)."""
        twice = self.absorbed & part.absorbed
        if twice:
            raise ValueError(f"nodes {sorted(twice)} absorbed by two fusions")
        return FusionPlan({**self.bn, **part.bn}, {**self.act, **part.act}, {**self.dynamic, **part.dynamic},
                          self.absorbed | part.absorbed, {**self.range_override, **part.range_override},
                          {**self.chains, **part.chains})
