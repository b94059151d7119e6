"""The ultralytics YOLOv8 digit detector of ``models/real/families/`` (``models/real/make_families_yolo.py``) on its
test canvases, the engine against onnxruntime.

The export has one output ``[1, 4 + nc, anchors]``: per anchor the box (cx, cy, w, h in input pixels) and the
class scores after sigmoid, no NMS (ultralytics' ``Detect`` head in export mode). :func:`nms` is the usual
post-processing in numpy (best class per anchor, score threshold, class-aware greedy NMS), applied alike to both
runtimes' outputs. :func:`evaluate_yolo` converts the file with no flags (a float file runs with run-time ranges),
runs the engine and onnxruntime on the same canvases one at a time and measures: the raw output's SQNR, each
runtime's share of the true boxes found (same class, IoU >= 0.5), and the share of onnxruntime's boxes the engine
finds with the same class and IoU >= 0.9, and, scores aside, the share of onnxruntime's boxes whose anchor holds a
box within IoU 0.9 in the engine's output (the box branch: DFL softmax, distances, decode).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hexnn_import.compare.metrics import sqnr_from_sums
from hexnn_import.testing.families import FAMILIES
from hexnn_import.testing.real_models import Reference, to_model_dtype


def iou_xyxy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of boxes ``a [n, 4]`` against ``b [m, 4]`` (x1, y1, x2, y2) -> ``[n, m]``."""
    a, b = np.asarray(a, np.float64)[:, None], np.asarray(b, np.float64)[None]
    iw = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    ih = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = iw * ih
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])
    return inter / np.maximum(area(a) + area(b) - inter, 1e-12)


@dataclass
class Detections:
    """One image's boxes after NMS, best first: ``boxes [k, 4]`` xyxy, ``classes [k]``, ``scores [k]`` and the
    ``anchors [k]`` (output columns) they come from."""

    boxes: np.ndarray
    classes: np.ndarray
    scores: np.ndarray
    anchors: np.ndarray


def nms(out: np.ndarray, conf: float = 0.25, iou_thr: float = 0.5) -> Detections:
    """Post-process one raw output ``[4 + nc, anchors]`` (or ``[1, 4 + nc, anchors]``): each anchor's best class,
    scores >= ``conf``, then greedy class-aware NMS (a box is dropped when its IoU with a kept box of the same class
    exceeds ``iou_thr``)."""
    out = np.asarray(out, np.float64).reshape(-1, np.shape(out)[-1])
    cls, score = out[4:].argmax(0), out[4:].max(0)
    keep = np.nonzero(score >= conf)[0]
    keep = keep[np.argsort(-score[keep], kind="stable")]
    boxes = xyxy(out[:4, keep])
    same = (iou_xyxy(boxes, boxes) > iou_thr) & (cls[keep][:, None] == cls[keep][None])
    alive = np.ones(len(keep), bool)
    for i in range(len(keep)):  # over candidate boxes (a few dozen), not tensor elements
        if alive[i]:
            alive[i + 1:] &= ~same[i, i + 1:]
    return Detections(boxes[alive], cls[keep][alive], score[keep][alive], keep[alive])


def xyxy(cxcywh: np.ndarray) -> np.ndarray:
    """Boxes ``[4, k]`` (cx, cy, w, h rows, the export's layout) -> ``[k, 4]`` (x1, y1, x2, y2)."""
    cx, cy, w, h = np.asarray(cxcywh, np.float64)
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1)


def matched(ref_boxes: np.ndarray, ref_classes: np.ndarray, got: Detections, iou_min: float) -> int:
    """How many of the reference boxes have a detection in ``got`` of the same class with IoU >= ``iou_min``."""
    if len(ref_classes) == 0 or len(got.classes) == 0:
        return 0
    hit = (iou_xyxy(ref_boxes, got.boxes) >= iou_min) & (np.asarray(ref_classes)[:, None] == got.classes[None])
    return int(hit.any(axis=1).sum())


@dataclass
class YoloFigures:
    """Engine and onnxruntime on ``n`` canvases."""

    file: str
    n: int
    sqnr_db: float  # the raw output [1, 4 + nc, anchors], all canvases together
    box_sqnr_db: float  # its first four rows (cx, cy, w, h)
    score_sqnr_db: float  # its class-score rows
    engine_max_score: float  # the engine's highest class score over the canvases
    runtime_max_score: float
    true_boxes: int
    engine_recall: float  # share of true boxes found: same class, IoU >= 0.5, score >= 0.25
    runtime_recall: float
    runtime_boxes: int  # onnxruntime's detections after NMS
    boxes_matched: float  # share of them the engine finds: same class, IoU >= 0.9
    anchor_boxes_close: float  # share of them whose anchor's box in the engine's output has IoU >= 0.9 (scores aside)
    output_spread: float  # onnxruntime's output std across the canvases, mean over elements

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def evaluate_yolo(entry: Mapping[str, Any], n: int | None = None, folder: Path = FAMILIES) -> YoloFigures:
    """Module doc; the first ``n`` canvases of the entry's npz (``images``, ``boxes``, ``classes``; all when None)."""
    import hexnn_import as hx

    path = folder / entry["file"]
    graph = hx.prepare(hx.import_model(path))
    d = np.load(folder / entry["data"])
    io = graph.inputs[0]
    n = len(d["images"]) if n is None else min(n, len(d["images"]))
    runner, ref = hx.Runner(graph), Reference(path)
    outs_e, outs_r = [], []
    true = found_e = found_r = ort_boxes = same = close = 0
    for k in range(n):
        feed = {io.name: to_model_dtype(d["images"][k:k + 1], io.dtype, io.scale, io.zero_point)}
        e = np.asarray(next(iter(runner.run(feed).values())), np.float64)
        r = np.asarray(next(iter(ref.run(feed).values())), np.float64)
        outs_e.append(e)
        outs_r.append(r)
        de, dr = nms(e), nms(r)
        keep = d["classes"][k] >= 0
        gb, gc = d["boxes"][k][keep], d["classes"][k][keep]
        true += len(gc)
        found_e += matched(gb, gc, de, 0.5)
        found_r += matched(gb, gc, dr, 0.5)
        ort_boxes += len(dr.classes)
        same += matched(dr.boxes, dr.classes, de, 0.9)
        close += int((np.diag(iou_xyxy(dr.boxes, xyxy(e.reshape(e.shape[-2:])[:4, dr.anchors]))) >= 0.9).sum())
    oe, orr = np.concatenate(outs_e), np.concatenate(outs_r)
    sq = [_sqnr(orr[:, rows], oe[:, rows]) for rows in (slice(None), slice(0, 4), slice(4, None))]
    return YoloFigures(entry["file"], n, *sq, float(oe[:, 4:].max()), float(orr[:, 4:].max()), true,
                       found_e / max(true, 1), found_r / max(true, 1), ort_boxes, same / max(ort_boxes, 1),
                       close / max(ort_boxes, 1), float(orr.std(axis=0).mean()))


def _sqnr(ref: np.ndarray, got: np.ndarray) -> float:
    return sqnr_from_sums(float(np.sum(ref ** 2)), float(np.sum((ref - got) ** 2)))


__all__ = ["Detections", "YoloFigures", "evaluate_yolo", "iou_xyxy", "matched", "nms", "xyxy"]
