"""Acceptance (issue [Model families], detection): the SSD-style digit detectors, exported by the TensorFlow Object
Detection API's TF2 recipe into TFLite_Detection_PostProcess (whose outputs the file leaves unshaped), convert with
no flags, run, and find LiteRT's boxes on real canvases (a digit pasted at a random place; make_families_ssd.py).

Bars on the first 60 canvases: every LiteRT detection found by the engine with the same class and IoU >= 0.9 (int8
with uint8 input: all of them; the float file, run in 8 bits with run-time ranges: >= 85%), as many detections on
>= 95% of canvases, and accuracy (top detection of the right class with IoU >= 0.5 to the true box) within one
canvas of LiteRT's (float: 3 canvases).
"""
from __future__ import annotations

import pytest

from hexnn_import.testing.detector_family import evaluate_detector, iou
from hexnn_import.testing.families import load_families

import numpy as np

DETECTORS = [e for e in load_families() if e.get("task") == "detector"]
N = 60


def test_iou_worked_by_hand() -> None:
    a = np.array([[0.0, 0.0, 2.0, 2.0]])
    b = np.array([[1.0, 1.0, 3.0, 3.0], [0.0, 0.0, 2.0, 2.0], [5.0, 5.0, 6.0, 6.0]])
    np.testing.assert_allclose(iou(a, b), [[1 / 7, 1.0, 0.0]])


def test_both_detectors_are_there() -> None:
    assert sorted(e["quant"] for e in DETECTORS) == ["float", "int8-io"]


@pytest.mark.parametrize("entry", DETECTORS, ids=[e["file"] for e in DETECTORS])
def test_detector_finds_litert_boxes(entry) -> None:
    fig = evaluate_detector(entry, n=N)
    quantized = entry["quant"] != "float"
    assert fig.runtime_accuracy > 0.8 and fig.runtime_detections >= N // 2, fig  # an informative detector
    assert fig.detections_matched >= (1.0 if quantized else 0.85), fig
    assert fig.count_agreement >= 0.95, fig
    assert abs(fig.engine_accuracy - fig.runtime_accuracy) <= (1 if quantized else 3) / N + 1e-9, fig
