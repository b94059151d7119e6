"""Per-class accuracy and the most frequent confusions of a classifier (issue [Scale]), worked by hand."""
from __future__ import annotations

import numpy as np

from hexnn_import.compare.class_table import class_table, confusions


def test_per_class_accuracy_and_confusions_worked_by_hand() -> None:
    labels = np.array([0, 0, 0, 1, 1, 2])
    top1 = np.array([0, 1, 1, 1, 0, 2])
    assert class_table(top1, labels, ("a", "b", "c")) == [
        {"label": 0, "name": "a", "samples": 3, "top1": 1 / 3}, {"label": 1, "name": "b", "samples": 2, "top1": 0.5},
        {"label": 2, "name": "c", "samples": 1, "top1": 1.0}]
    assert confusions(top1, labels) == [{"label": 0, "predicted": 1, "count": 2},
                                        {"label": 1, "predicted": 0, "count": 1}]
