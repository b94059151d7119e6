"""TFLite's custom op TFLite_Detection_PostProcess (SSD box decoding + NMS) -> nodes.detect.

Inputs: box encodings ``[1, N, 4]`` (ty, tx, th, tw), class predictions
``[1, N, C + offset]`` (a leading background column when wider than
``num_classes``), constant anchors ``[N, 4]`` (ycenter, xcenter, h, w; float
or quantized). Outputs (float32): boxes ``[1, S, 4]`` (ymin, xmin, ymax,
xmax), classes ``[1, S]``, scores ``[1, S]``, num_detections ``[1]``. Options
are the flexbuffer map TFLite reads (max_detections, max_classes_per_detection,
detections_per_class, nms_score_threshold, nms_iou_threshold, num_classes,
y/x/h/w_scale, use_regular_nms), parsed with ``flatbuffers.flexbuffers``
(:mod:`tflite.detect_options`, which also shapes outputs the file leaves
unshaped, as LiteRT does, before any handler runs).

Differences from TFLite, all documented in :mod:`nodes.detect`: slots past
``num_detections`` are zeros (TFLite leaves them unwritten); box
coordinates are computed in float64 from float32 corner anchors (within a
few float32 ulps of TFLite's); in a float model the scores are 8-bit values
of the graph, so near-equal scores may order differently. Regular NMS is
imported when ``detections_per_class >= max_detections`` (then the per-class
cap cannot bind) and the score threshold is >= 0.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import shape4
from hexnn_import.importers.nodes.detect import (
    DETECT_EMITS,
    DetectSpec,
    detection_postprocess,
    strict_threshold,
)
from hexnn_import.importers.tflite.common import activation_kind
from hexnn_import.importers.tflite.detect_options import OPNAME, parse_options
from hexnn_import.importers.tflite.importer import TFLiteImporter, is_quantized, tflite_op
from hexnn_import.importers.tflite.reader import TFOperator, TFTensor
from hexnn_import.importers.nodes.values import Value

def _real(t: TFTensor) -> np.ndarray:
    """A constant tensor's values: float data, or quantized codes dequantized in float32 as TFLite does."""
    data = np.asarray(t.data)
    if t.dtype == "float32" or t.quant is None:
        return data.astype(np.float32)
    return ((data.astype(np.float32) - np.float32(t.quant.zero_point[0])) * np.float32(t.quant.scale[0]))


def _check(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Box encodings [1,N,4] and scores [1,N,C] (float32 or per-tensor quantized), constant anchors [N,4];
    consistent num_classes, max_detections and box scales; float32 outputs of TFLite's shapes."""
    if len(op.inputs) != 3 or len(op.outputs) != 4:
        return f"{len(op.inputs)} inputs / {len(op.outputs)} outputs, expected 3 / 4"
    p = parse_options(op.custom_options)
    if isinstance(p, str):
        return p
    enc, cls, anc = (imp.tensor(i) for i in op.inputs)
    for t in (enc, cls):
        if activation_kind(t) is None and t.data is None:
            return f"input {t.name} of type {t.dtype} is not float32 or per-tensor int8/uint8"
    if anc.data is None or anc.dtype not in ("float32", "int8", "uint8") or (anc.dtype != "float32" and
                                                                            not is_quantized(anc)):
        return "anchors are not a constant float or quantized tensor"
    n = anc.shape[0] if len(anc.shape) == 2 else -1
    if enc.shape != (1, n, 4) or len(cls.shape) != 3 or cls.shape[:2] != (1, n) or anc.shape != (n, 4):
        return f"shapes {list(enc.shape)}, {list(cls.shape)}, {list(anc.shape)} are not [1,N,4], [1,N,C], [N,4]"
    if p.num_classes < 1 or cls.shape[2] < p.num_classes:
        return f"num_classes {p.num_classes} for {cls.shape[2]} score columns"
    if p.max_detections < 1 or not 1 <= p.max_classes_per_detection <= p.num_classes:
        return "max_detections < 1 or max_classes_per_detection outside 1..num_classes"
    if min(p.y_scale, p.x_scale, p.h_scale, p.w_scale) == 0:
        return "a zero box scale"
    if p.use_regular_nms:
        if p.detections_per_class < p.max_detections:
            return "regular NMS with detections_per_class < max_detections"
        if p.nms_score_threshold < 0:
            return "regular NMS with a negative score threshold"
    if n < p.max_detections:
        return f"{n} anchors for max_detections {p.max_detections}"
    slots = p.max_detections * (1 if p.use_regular_nms else p.max_classes_per_detection)
    want = [(1, slots, 4), (1, slots), (1, slots), (1,)]
    for i, s in zip(op.outputs, want):
        t = imp.tensor(i)
        if t.dtype != "float32" or tuple(t.shape) != s:
            return f"output {t.name} is {t.dtype}{list(t.shape)}, expected float32{list(s)}"
    return None


def _tflite_levels(t: TFTensor) -> np.ndarray | None:
    """TFLite's float32 score of each quint8 code of a quantized tensor (None for float tensors)."""
    if not is_quantized(t):
        return None
    assert t.quant is not None
    codes = np.arange(256, dtype=np.float32) - (np.float32(128) if t.dtype == "int8" else np.float32(0))
    return (codes - np.float32(t.quant.zero_point[0])) * np.float32(t.quant.scale[0])


@tflite_op(OPNAME, DETECT_EMITS, _check)
def detection_postprocess_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """TFLite_Detection_PostProcess -> nodes.detect.detection_postprocess (fast or regular NMS)."""
    p = parse_options(op.custom_options)
    assert not isinstance(p, str)
    cls_t, anc_t = imp.tensor(op.inputs[1]), imp.tensor(op.inputs[2])
    scores = imp.qvalue(op.inputs[1])
    spec = DetectSpec(p.max_detections, p.max_classes_per_detection, p.num_classes,
                      cls_t.shape[2] - p.num_classes,
                      strict_threshold(p.nms_score_threshold, scores, _tflite_levels(cls_t)),
                      float(np.float32(p.nms_iou_threshold)), (p.y_scale, p.x_scale, p.h_scale, p.w_scale),
                      bool(p.use_regular_nms))
    name = imp.tensor(op.outputs[0]).name
    refs = detection_postprocess(imp, name, imp.qvalue(op.inputs[0]), scores, _real(anc_t), spec)
    for i, ref in zip(op.outputs, refs):
        t = imp.tensor(i)
        imp.set_output(i, Value(ref, shape4(t.shape), "float"))

