"""The flags of results that tell nothing survive the shard merge (``--jobs N``, a Dask cluster) and the
checkpoints of ``--results`` / ``--resume`` (issue 34, finding 4), and the rule for class scores."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np
import pytest

from hexnn_import.compare import CompareOptions, compare
from hexnn_import.compare.comparator import run_comparison
from hexnn_import.compare.degenerate import looks_like_class_scores
from hexnn_import.compare.merge import Merger
from hexnn_import.compare.runners import CompareRunner
from hexnn_import.datasets.samples import Dataset
from hexnn_import.graph import GraphIO
from hexnn_import.testing.degenerate_models import tiny_weight_classifier


class SignRunner(CompareRunner):
    """A stand-in runner: output ``y`` is 1.0 in every element when ``x``'s first value is positive, else 0.0."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.backend, self.model, self.per_layer = name, "test", "-", False
        self.inputs, self.outputs = [GraphIO("x", (1, 2), "float64")], ["y"]

    def infer(self, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"y": np.full((1, 3), float(feed["x"][0, 0] > 0))}


def _data(values: list[float]) -> Dataset:
    return Dataset([{"x": np.array([[v, 0.0]])} for v in values], None, "hand-made")


def test_shards_constant_each_on_another_value_merge_to_an_output_that_varies() -> None:
    test, ref = SignRunner("hexagon"), SignRunner("source")
    low, high = (run_comparison(test, [ref], _data(v)) for v in ([-1.0, -2.0], [3.0, 4.0]))
    for part in (low, high):  # each shard alone: constant on both sides
        assert part.warnings and part.warnings[0].startswith("constant output: 'y' is the same on all 2 samples")
    for order in ((0, 1), (1, 0)):
        merger = Merger()
        for i in order:
            merger.add(i, (low, high)[i])
        merged = merger.result("hand-made")
        stats = merged.comparisons[0].outputs["y"]
        assert merged.warnings == [] and stats.test_constant is False and stats.ref_constant is False


def test_shards_constant_on_one_value_merge_to_a_constant_output() -> None:
    test, ref = SignRunner("hexagon"), SignRunner("source")
    merger = Merger()
    for i, values in enumerate(([1.0, 2.0], [3.0], [4.0, 5.0])):
        merger.add(i, run_comparison(test, [ref], _data(values)))
    merged = merger.result("hand-made")
    assert merged.warnings == ["constant output: 'y' is the same on all 5 samples in hexagon, source: agreement and "
                               "accuracy tell nothing"]


def test_the_warnings_survive_checkpoints_and_resume(tmp_path: Path) -> None:
    model = tmp_path / "random_init.tflite"
    model.write_bytes(tiny_weight_classifier())
    opts = CompareOptions(str(model), random=40, jobs=1, results=str(tmp_path / "run"))  # two shards of 32
    first = compare(opts)
    assert len(list((tmp_path / "run").glob("shard_*.npz"))) == 2
    resumed = compare(CompareOptions(str(model), random=40, jobs=1, results=str(tmp_path / "run"), resume=True))
    want = ("constant output: 'probabilities' is the same on all 40 samples in hexagon, source: agreement and "
            "accuracy tell nothing")
    assert first.warnings == resumed.warnings == [want]


@pytest.mark.parametrize("name, shape, rows, scores", [
    ("logits", (1, 10), False, True),
    ("StatefulPartitionedCall:0", (1, 1000), False, True),
    ("prob", (1, 1, 1, 1001), False, True),
    ("Identity", (1, 63), False, False),             # 21 hand landmarks x 3 (MediaPipe Hands)
    ("Identity_3", (1, 1404), False, False),         # face mesh, 468 x 3
    ("class_scores", (1, 63), False, True),          # a 63-class classifier says so in its name
    ("landmarks", (1, 10), False, False),            # 5 face points x 2
    ("bbox", (1, 4), False, False),
    ("presence", (1, 1), False, False),              # one value is no choice of class
    ("logits", (4, 10), False, False),               # a batch is rows only for run
    ("logits", (4, 10), True, True),
    ("features", (1, 128), False, False),            # an embedding
    ("heatmap", (1, 64, 64, 21), False, False),
])
def test_the_class_score_rule(name: str, shape: tuple[int, ...], rows: bool, scores: bool) -> None:
    assert looks_like_class_scores(name, shape, rows) is scores
