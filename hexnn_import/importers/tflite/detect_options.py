"""The options of TFLite's custom op ``TFLite_Detection_PostProcess`` and the shapes of its outputs.

Both standard SSD export recipes of the TensorFlow Object Detection API (TF1 ``from_frozen_graph`` and the TF2
SavedModel export) leave the op's four outputs unshaped in the file (shape ``[]``): LiteRT sizes them at run time
from the options, in ``detection_postprocess.cc`` ``Prepare``: boxes ``[1, D, 4]``, classes ``[1, D]``, scores
``[1, D]``, num_detections ``[1]`` with ``D = max_detections * max_classes_per_detection``. :func:`shape_outputs`
does the same before op mapping, so every later stage sees the shapes LiteRT gives.
"""
from __future__ import annotations

import struct

from flatbuffers import flexbuffers

from hexnn_import.importers.tflite.reader import TFModel
from hexnn_import.ops.boxes import DetectionParams

OPNAME = "CUSTOM:TFLite_Detection_PostProcess"
_REQUIRED = ("max_detections", "num_classes", "nms_score_threshold", "nms_iou_threshold")


def parse_options(raw: bytes) -> DetectionParams | str:
    """The custom options as :class:`DetectionParams` (TFLite's defaults where a key is absent), or why not."""
    try:
        m = flexbuffers.Loads(raw) if raw else None
    except (ValueError, IndexError, KeyError, TypeError, struct.error, UnicodeDecodeError) as exc:  # corrupt bytes
        return f"unreadable custom options ({type(exc).__name__})"
    if not isinstance(m, dict):
        return "custom options are not a flexbuffer map"
    missing = [k for k in _REQUIRED if k not in m]
    if missing:
        return f"custom options lack {', '.join(missing)}"
    kw = {k: m[k] for k in DetectionParams.__dataclass_fields__ if k in m}
    try:
        p = DetectionParams(**kw)  # type: ignore[arg-type]
    except TypeError as exc:
        return f"bad custom options ({exc})"
    return p


def litert_output_shapes(p: DetectionParams) -> list[tuple[int, ...]]:
    """The output shapes LiteRT's ``Prepare`` gives (module doc)."""
    d = p.max_detections * p.max_classes_per_detection
    return [(1, d, 4), (1, d), (1, d), (1,)]


def shape_outputs(model: TFModel) -> list[str]:
    """Give unshaped (``[]``) outputs of every TFLite_Detection_PostProcess the shapes LiteRT gives them.

    Outputs that have a shape in the file are left alone (the handler checks them); options that do not parse
    leave the op to the handler's check, which names the reason. Returns the notes for the summary."""
    notes: list[str] = []
    for op in model.operators:
        if op.opname != OPNAME or len(op.outputs) != 4 or not all(0 <= i < len(model.tensors) for i in op.outputs):
            continue  # a damaged file is left to the handler's checks, which name it
        p = parse_options(op.custom_options)
        if isinstance(p, str) or p.max_detections < 1 or p.max_classes_per_detection < 1:
            continue
        filled = []
        for i, shape in zip(op.outputs, litert_output_shapes(p)):
            t = model.tensors[i]
            if len(t.shape) == 0 and t.data is None:
                t.shape = shape
                t.shape_signature = shape
                filled.append(t.name)
        if filled:
            notes.append(f"{OPNAME[7:]}: outputs {', '.join(filled)} are unshaped in the file; shaped from the "
                         f"op's options as LiteRT does (max_detections {p.max_detections} x "
                         f"max_classes_per_detection {p.max_classes_per_detection})")
    return notes


__all__ = ["OPNAME", "parse_options", "litert_output_shapes", "shape_outputs"]
