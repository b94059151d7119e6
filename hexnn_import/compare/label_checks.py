"""Whether the labels of ``--data`` fit the model: integer class indices of its classifier output (the first
output that looks like class scores, :func:`.degenerate.looks_like_class_scores`), checked before any run.
"""
from __future__ import annotations

import os
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npformat

from hexnn_import.compare.degenerate import looks_like_class_scores
from hexnn_import.datasets.samples import Dataset
from hexnn_import.errors import InputDataError
from hexnn_import.graph import Graph


def classifier_classes(graph: Graph) -> tuple[str, int] | None:
    """``(output name, number of classes)`` of the output accuracy is measured on - the first that looks like
    class scores (:func:`looks_like_class_scores`), as the comparator picks it - or None when there is none."""
    for gio in graph.outputs:
        if looks_like_class_scores(gio.name, gio.shape):
            return gio.name, int(gio.shape[-1])
    return None


def _class_range(classes: tuple[str, int] | None) -> str:
    if classes is None:
        return "integer class indices"
    return f"integer class indices in [0, {classes[1] - 1}] (output '{classes[0]}' has {classes[1]} classes)"


def check_labels_dtype(path: "str | os.PathLike", classes: tuple[str, int] | None) -> None:
    """InputDataError when DATA.npz's ``labels`` are not numbers (strings, objects, dates), read from the
    array's header alone (numpy ``lib/format.py``) before any sample is loaded."""
    try:
        with zipfile.ZipFile(path) as zf, zf.open("labels.npy") as member:
            version = npformat.read_magic(member)
            read = npformat.read_array_header_1_0 if version == (1, 0) else npformat.read_array_header_2_0
            dtype = np.dtype(read(member)[2])
    except (KeyError, OSError, ValueError, EOFError, TypeError, zipfile.BadZipFile, zlib.error):
        return  # no labels, or not an npz: load_dataset says what is wrong in its own words
    if dtype.kind not in "biuf":
        raise InputDataError(f"{path}: 'labels' has dtype {dtype}; expected {_class_range(classes)}")


def check_labels(dataset: Dataset, classes: tuple[str, int] | None) -> None:
    """InputDataError naming the valid range when a label is not a class of the model's classifier output
    (accuracy against such labels would be a meaningless 0%)."""
    if dataset.labels is None or classes is None:
        return
    y = np.asarray(dataset.labels)
    bad = np.flatnonzero((y < 0) | (y >= classes[1]))
    if bad.size:
        i = int(bad[0])
        raise InputDataError(f"{dataset.source}: label {int(y[i])} of sample {i} ({bad.size} of {y.size} labels "
                             f"outside); 'labels' must hold {_class_range(classes)}")
