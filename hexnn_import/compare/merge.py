"""Merge the results of a run's shards into one (issue [Scale]): the same figures whatever ran the shards,
whatever order they finish in, in memory that does not grow with the number of samples' statistics.

Each shard is a fixed slice of the samples (``shards.Job``), compared the same way by whichever process
ran it, so its numbers are the same under ``--jobs 1``, ``--jobs N`` or a Dask cluster. :class:`Merger`
folds each shard in as it arrives: energies into exact running sums (:class:`ExactSum`: the correctly
rounded sum of every value added, in any order - ``math.fsum``'s partials), maxima with ``max``, counts as
integers; it keeps only each sample's top-k classes and label (a few integers per sample), from which
agreement, accuracy and the per-class figures are computed once at the end
(:func:`.comparator.score_predictions`). Tensors are listed in the order of the first shard that has them.
Whether an output varied (:mod:`.degenerate`) merges exactly too: it varied in some shard, or two shards'
first samples differ (their fingerprints).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from hexnn_import.compare.comparator import score_predictions
from hexnn_import.compare.results import Comparison, CompareResult, RunnerResult
from hexnn_import.compare.tensor_stats import TensorStats


class ExactSum:
    """A running sum without rounding error (Shewchuk's partials, as ``math.fsum`` keeps them)."""

    def __init__(self) -> None:
        self.partials: list[float] = []

    def add(self, x: float) -> None:
        i = 0
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                self.partials[i] = lo
                i += 1
            x = hi
        self.partials[i:] = [x]

    @property
    def value(self) -> float:
        return math.fsum(self.partials)


@dataclass
class _Stats:
    """One tensor's statistics being merged."""

    name: str
    where: tuple[int, int]  # (shard, position in it) where it was first seen: the report's order
    sums: tuple[ExactSum, ...] = field(default_factory=lambda: tuple(ExactSum() for _ in range(4)))
    max_abs: float = 0.0
    max_lsb: float | None = None
    ints: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # off, lsb_count, count, samples
    #: per side (reference, tested): a first sample's fingerprint, and whether the side varied
    firsts: list[str | None] = field(default_factory=lambda: [None, None])
    varies: list[bool] = field(default_factory=lambda: [False, False])

    def _spread(self, side: int, first: str | None, varies: bool) -> None:
        if first is None:
            return
        self.varies[side] = self.varies[side] or varies or (self.firsts[side] not in (None, first))
        self.firsts[side] = self.firsts[side] or first

    def add(self, s: TensorStats) -> None:
        for acc, v in zip(self.sums, (s.signal, s.noise, s.dot, s.test_sq)):
            acc.add(v)
        self.max_abs = max(self.max_abs, s.max_abs)
        if s.max_lsb is not None:
            self.max_lsb = s.max_lsb if self.max_lsb is None else max(self.max_lsb, s.max_lsb)
        for k, v in enumerate((s.off, s.lsb_count, s.count, s.samples)):
            self.ints[k] += v
        self._spread(0, s.ref_first, s.ref_varies)
        self._spread(1, s.test_first, s.test_varies)

    def stats(self) -> TensorStats:
        signal, noise, dot, test_sq = (a.value for a in self.sums)
        off, lsb_count, count, samples = self.ints
        return TensorStats(self.name, signal, noise, dot, test_sq, self.max_abs, self.max_lsb, off, lsb_count, count,
                           samples, ref_first=self.firsts[0], ref_varies=self.varies[0], test_first=self.firsts[1],
                           test_varies=self.varies[1])


def _fold(table: dict[str, _Stats], shard: int, tensors: dict[str, TensorStats]) -> None:
    for pos, (name, s) in enumerate(tensors.items()):
        entry = table.get(name)
        if entry is None:
            entry = table[name] = _Stats(name, (shard, pos))
        elif (shard, pos) < entry.where:
            entry.where = (shard, pos)
        entry.add(s)


def _ordered(table: dict[str, _Stats]) -> dict[str, TensorStats]:
    return {e.name: e.stats() for e in sorted(table.values(), key=lambda e: e.where)}


class Merger:
    """Folds shards in as they finish (module doc); :meth:`result` once all are in."""

    def __init__(self) -> None:
        self.first: CompareResult | None = None
        self.samples = 0
        self.n_classes = 0
        self.classifier: tuple[int, str] | None = None
        self.outputs: list[dict[str, _Stats]] = []
        self.layers: list[dict[str, _Stats]] = []
        self.unmatched: list[dict[str, tuple[tuple[int, int], str]]] = []
        self.predictions: dict[int, dict[str, np.ndarray]] = {}
        self.labels: dict[int, np.ndarray | None] = {}

    def add(self, shard: int, part: CompareResult) -> None:
        if self.first is None:
            self.first = part
            self.outputs = [{} for _ in part.comparisons]
            self.layers = [{} for _ in part.comparisons]
            self.unmatched = [{} for _ in part.comparisons]
        for j, comp in enumerate(part.comparisons):
            _fold(self.outputs[j], shard, comp.outputs)
            _fold(self.layers[j], shard, comp.layers)
            for pos, (name, why) in enumerate(comp.unmatched.items()):
                if name not in self.unmatched[j] or (shard, pos) < self.unmatched[j][name][0]:
                    self.unmatched[j][name] = ((shard, pos), why)
        self.samples += part.samples
        self.n_classes = max(self.n_classes, part.n_classes)
        if part.classifier and (self.classifier is None or shard < self.classifier[0]):
            self.classifier = (shard, part.classifier)
        self.predictions[shard] = part.predictions
        self.labels[shard] = None if part.labels is None else np.asarray(part.labels, dtype=np.int64)

    def result(self, data: str, classes: Sequence[str] | None = None) -> CompareResult:
        """The merged result over ``data`` (every shard added)."""
        assert self.first is not None, "no shard was merged"
        order = sorted(self.predictions)
        comps = [Comparison(c.candidate, c.reference, _ordered(self.outputs[j]), _ordered(self.layers[j]),
                            unmatched={n: w for n, (_, w) in sorted(self.unmatched[j].items(),
                                                                     key=lambda kv: kv[1][0])})
                 for j, c in enumerate(self.first.comparisons)]
        names = [r.name for r in self.first.runners]
        preds = {n: np.concatenate([self.predictions[i][n] for i in order])
                 for n in names if all(n in self.predictions[i] for i in order)}
        labels = None
        if all(self.labels[i] is not None for i in order):
            labels = np.concatenate([self.labels[i] for i in order])  # type: ignore[misc]
        result = CompareResult(self.first.model, data, self.samples,
                               [RunnerResult(r.name, r.backend, r.model) for r in self.first.runners], comps,
                               self.classifier[1] if self.classifier else None, self.first.per_layer, preds,
                               labels, tuple(classes) if classes is not None else None, n_classes=self.n_classes)
        score_predictions(result)
        return result

