"""Per-class accuracy and the most frequent confusions of a classifier (issue [Scale]), from each sample's
top-1 class and label."""
from __future__ import annotations

from typing import Sequence

import numpy as np

#: confusions listed per runner
TOP_CONFUSIONS = 10


def _name(classes: Sequence[str] | None, k: int) -> str:
    return classes[k] if classes is not None and 0 <= k < len(classes) else str(k)


def class_table(top1: np.ndarray, labels: np.ndarray, classes: Sequence[str] | None = None) -> list[dict]:
    """One row per label present: ``{"label", "name", "samples", "top1"}`` (top-1 accuracy of the class)."""
    y = np.asarray(labels).reshape(-1).astype(np.int64)
    p = np.asarray(top1).reshape(-1).astype(np.int64)
    rows = []
    for k in np.unique(y):
        mask = y == k
        rows.append({"label": int(k), "name": _name(classes, int(k)), "samples": int(mask.sum()),
                     "top1": float(np.mean(p[mask] == k))})
    return rows


def confusions(top1: np.ndarray, labels: np.ndarray, most: int = TOP_CONFUSIONS) -> list[dict]:
    """The ``most`` most frequent (label, predicted) pairs with label != predicted: ``{"label",
    "predicted", "count"}``, by count, then label, then prediction."""
    y = np.asarray(labels).reshape(-1).astype(np.int64)
    p = np.asarray(top1).reshape(-1).astype(np.int64)
    wrong = y != p
    if not wrong.any():
        return []
    pairs, counts = np.unique(np.stack([y[wrong], p[wrong]], axis=1), axis=0, return_counts=True)
    order = sorted(range(len(counts)), key=lambda i: (-int(counts[i]), int(pairs[i, 0]), int(pairs[i, 1])))
    return [{"label": int(pairs[i, 0]), "predicted": int(pairs[i, 1]), "count": int(counts[i])}
            for i in order[:most]]
