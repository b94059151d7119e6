"""Lower an int8 TFLite model's conv / fully-connected layers to XS3 kernels: Replace, then Legalize.

:func:`lower_model` reads every operator (:mod:`.layers`), asks the Replace
rules (:mod:`.replace`) for a kernel, then legalizes the weights and BSO
(:mod:`.legalize`). Every layer gets a :class:`LayerResult`; a layer that
cannot be lowered keeps the reason (from Replace, or a BSO / kernel
constraint met in Legalize) and stays on the Hexagon engine.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from hexnn_import.importers.tflite_reader import TFModel
from hexnn_import.xs3.errors import XS3Error
from hexnn_import.xs3.layers import LayerInfo, read_layers
from hexnn_import.xs3.legalize import LoweredLayer, legalize
from hexnn_import.xs3.replace import XS3Op, replace


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

    model: TFModel
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


def lower_model(model: TFModel | str | os.PathLike, label: str | None = None,
                input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> LoweringPlan:
    """The lowering plan of a TFLite model (a path, read as the importer reads it: input shapes fixed and
    constants folded, or a parsed :class:`TFModel`)."""
    if not isinstance(model, TFModel):
        from hexnn_import.importers.tflite_import import load_tflite

        label = label or str(model)
        model, _ = load_tflite(model, input_shapes)
    return LoweringPlan(model, [lower_layer(layer) for layer in read_layers(model)], label or "model")
