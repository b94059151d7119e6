"""What a comparison gives: each runner's own scores, each (tested, reference) pair's tensor statistics, and
the flags of the layers where accuracy is lost - the result the comparator makes (:mod:`.comparator`), shards
merge (:mod:`.merge`), the results folder keeps (:mod:`.checkpoint`) and the reports print (:mod:`.report`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from hexnn_import.compare.tensor_stats import TensorStats

#: a layer is flagged when its SQNR drops by more than this below the layer before it
FLAG_DROP_DB = 10.0
#: ... and is below this (so that 1-LSB noise between two bit-faithful runs is never flagged)
FLAG_CEILING_DB = 40.0


@dataclass
class Comparison:
    """The tested runner against one reference."""

    candidate: str
    reference: str
    outputs: dict[str, TensorStats] = field(default_factory=dict)
    layers: dict[str, TensorStats] = field(default_factory=dict)
    top1: float | None = None
    top5: float | None = None
    unmatched: dict[str, str] = field(default_factory=dict)  # tensor -> why it was not compared

    def worst_output(self) -> TensorStats | None:
        """The output with the lowest SQNR."""
        return min(self.outputs.values(), key=lambda s: s.sqnr_db, default=None)

    def flags(self, min_sqnr: float | None = None) -> dict[str, bool]:
        """Per layer: flagged (see :func:`flag_layers`)."""
        return flag_layers(list(self.layers.values()), min_sqnr)


@dataclass
class RunnerResult:
    """What one runner scored on its own: accuracy (fractions) when labels were given."""

    name: str
    backend: str
    model: str
    accuracy: float | None = None
    top5_accuracy: float | None = None
    #: per class (with labels): ``{"label", "name", "samples", "top1"}``; the most frequent confusions:
    #: ``{"label", "predicted", "count"}`` (:mod:`.class_table`)
    per_class: list[dict] = field(default_factory=list)
    confusions: list[dict] = field(default_factory=list)
    #: the class it predicts for every sample, when only one (:func:`.degenerate.one_class`)
    one_class: int | None = None


@dataclass
class CompareResult:
    """Everything a report needs."""

    model: str
    data: str
    samples: int
    runners: list[RunnerResult]
    comparisons: list[Comparison]
    classifier: str | None = None
    per_layer: bool = False
    #: per runner, each sample's classifier top-k class indices, best first (``[samples, k]``, k <= 5): what
    #: top-1 / top-5 agreement and accuracy are computed from, so that shards merge exactly (:mod:`.merge`)
    predictions: dict[str, np.ndarray] = field(default_factory=dict)
    labels: np.ndarray | None = None
    #: class names by label, when the data names them
    classes: tuple[str, ...] | None = None
    #: the first tested runner's outputs of every sample (``keep_outputs``), stacked per output
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    #: the classifier output's number of classes (0: no classifier output)
    n_classes: int = 0
    #: results that tell nothing, one line each naming the output and the runners (:mod:`.degenerate`)
    warnings: list[str] = field(default_factory=list)


def flag_layers(layers: Sequence[TensorStats], min_sqnr: float | None = None) -> dict[str, bool]:
    """Flag the layers where accuracy is lost.

    A layer is flagged when its SQNR is below ``min_sqnr`` (when given), or
    when it is below :data:`FLAG_CEILING_DB` and more than
    :data:`FLAG_DROP_DB` below the layer before it in graph order: the layer
    that loses the accuracy stands out, not every layer after it.
    """
    flags: dict[str, bool] = {}
    prev = FLAG_CEILING_DB + FLAG_DROP_DB
    for s in layers:
        sq = s.sqnr_db
        below_bar = min_sqnr is not None and sq < min_sqnr
        drop = sq < FLAG_CEILING_DB and sq < min(prev, FLAG_CEILING_DB + FLAG_DROP_DB) - FLAG_DROP_DB
        flags[s.name] = bool(below_bar or drop)
        prev = sq
    return flags
