"""The SSD-style digit detectors of ``models/real/families/`` (keras, exported by the TensorFlow Object Detection
API's TF2 recipe into ``TFLite_Detection_PostProcess``; ``models/real/make_families_ssd.py``) on their canvases.

:func:`evaluate_detector` converts a file with no flags, runs the engine and LiteRT on the same canvases and
measures: each run's accuracy (its top detection has the digit's class and IoU >= 0.5 with the true box), and
how the engine's detections match LiteRT's: every LiteRT detection (of the first ``num_detections``) matched
by an engine detection of the same class with IoU >= 0.9, and the count of detections alike.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from hexnn_import.testing.families import FAMILIES
from hexnn_import.testing.real_models import Reference, to_model_dtype


def iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of boxes ``a [n, 4]`` against ``b [m, 4]`` (ymin, xmin, ymax, xmax) -> ``[n, m]``."""
    a, b = np.asarray(a, np.float64)[:, None], np.asarray(b, np.float64)[None]
    ih = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    iw = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = ih * iw
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])  # noqa: E731
    return inter / np.maximum(area(a) + area(b) - inter, 1e-12)


@dataclass
class DetectorFigures:
    """Engine and LiteRT on ``n`` canvases."""

    file: str
    n: int
    engine_accuracy: float
    runtime_accuracy: float
    detections_matched: float  # share of LiteRT's detections with an engine detection, same class, IoU >= 0.9
    count_agreement: float  # share of canvases where both find as many detections
    runtime_detections: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _output_names(path: Path) -> tuple[str, str, str, str]:
    """The tensor names of the post-process op's outputs: boxes, classes, scores, num_detections."""
    from hexnn_import.importers.tflite.reader import read_tflite

    m = read_tflite(path)
    op = next(o for o in m.operators if o.opname == "CUSTOM:TFLite_Detection_PostProcess")
    return tuple(m.tensors[i].name for i in op.outputs)  # type: ignore[return-value]


def _correct(boxes: np.ndarray, classes: np.ndarray, num: float, box: np.ndarray, label: int) -> bool:
    return num >= 1 and int(classes[0]) == label and float(iou(boxes[:1], box[None])[0, 0]) >= 0.5


def evaluate_detector(entry: Mapping[str, Any], n: int | None = None, folder: Path = FAMILIES) -> DetectorFigures:
    """Module doc; the first ``n`` canvases (all when None)."""
    import hexnn_import as hx

    path = folder / entry["file"]
    graph = hx.prepare(hx.import_model(path))
    d = np.load(folder / entry["data"])
    io = graph.inputs[0]
    x, gt, labels = d[io.name], d["boxes"], d["labels"]
    n = len(labels) if n is None else min(n, len(labels))
    kb, kc, _, kn = _output_names(path)
    runner, ref = hx.Runner(graph), Reference(path)
    ok_e = ok_r = counts = matched = total = 0
    for k in range(n):
        feed = {io.name: to_model_dtype(x[k:k + 1], io.dtype, io.scale, io.zero_point)}
        o, r = runner.run(feed), ref.run(feed)
        ne, nr = int(o[kn].reshape(-1)[0]), int(r[kn].reshape(-1)[0])
        be, ce = o[kb].reshape(-1, 4)[:ne], o[kc].reshape(-1)[:ne]
        br, cr = r[kb].reshape(-1, 4)[:nr], r[kc].reshape(-1)[:nr]
        ok_e += _correct(be, ce, ne, gt[k], int(labels[k]))
        ok_r += _correct(br, cr, nr, gt[k], int(labels[k]))
        counts += ne == nr
        total += nr
        if nr and ne:
            same = (cr[:, None] == ce[None]) & (iou(br, be) >= 0.9)
            matched += int(same.any(axis=1).sum())
    return DetectorFigures(entry["file"], n, ok_e / n, ok_r / n, matched / max(total, 1), counts / n, total)


__all__ = ["iou", "evaluate_detector", "DetectorFigures"]
