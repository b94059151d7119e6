"""SSD detection post-processing (TFLite's Detection_PostProcess) on documented hexagon_nn ops.

The lowering, in float after Dequantize of the box encodings and class scores:

1. **decode**: Box_Decoder_f (TF's center-size box coder) with the anchors
   as corner boxes and the four scales (y, x, h, w);
2. **NMS**: BoxWithNmsLimit_f (hard NMS, score above a threshold, at most
   ``detections`` per class and per image, with its ``keeps`` output = the
   anchor index of every kept box). Its class 0 is the background and is
   skipped, so the class columns follow a zero column. Its IoU uses the
   Caffe2 ``+1`` pixel convention; boxes are therefore fed scaled by
   ``2**40`` (exact in float32), where the ``+1`` changes an IoU by less
   than float32 rounding of TFLite's own IoU;

   - *fast NMS* (TFLite's default): one class-agnostic NMS over each
     anchor's best class score (TopK_f over the classes); the kept anchors'
     top ``max_classes_per_detection`` classes and scores are gathered;
   - *regular NMS*: per-class NMS over all classes; the kept boxes (listed
     by class) are ordered by descending score with TopK_f;
3. **outputs**: boxes / classes / scores gathered by the kept anchor indices
   (Gather_f / Gather_int32), slots past the detection count zeroed with a
   mask ``clamp(count - slot, 0, 1)`` (TFLite leaves them unwritten), and
   the count itself (BoxWithNmsLimit_f's per-image count).

The score threshold handed in must already be *strict* (the op keeps
``score > threshold``, TFLite ``score >= threshold``): see
:func:`strict_threshold`. Equal scores: lower anchor first (stable), as
TFLite's fast NMS; TFLite's regular NMS sorts its merged list unstably.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.graph import NNPad, OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import dequantize
from hexnn_import.importers.nodes.values import Value
from hexnn_import.ops.quant import dequantize_u8

#: Box scale that makes BoxWithNmsLimit_f's "+1 pixel" negligible (a power of two: exact).
BOX_SCALE = 2.0 ** 40

DETECT_EMITS = ("Dequantize", "Box_Decoder_f", "Slice_f", "Slice_int32", "TopK_f", "Concat_f", "Mul_f",
                "Gather_f", "Gather_int32", "BoxWithNmsLimit_f", "CastInt32ToFloat32", "Reshape", "Sub_f", "Add_f",
                "Clamp_f")


@dataclass(frozen=True)
class DetectSpec:
    """What the lowering needs: limits, strict score threshold, IoU threshold, scales, NMS kind."""

    max_detections: int
    classes_per_detection: int
    num_classes: int
    label_offset: int          # class columns start here in the scores tensor
    score_threshold: float     # strict (score > threshold)
    iou_threshold: float
    scales: tuple[float, float, float, float]   # y, x, h, w
    regular: bool


def strict_threshold(thr: float, scores: Value, tflite_levels: np.ndarray | None = None) -> float:
    """A threshold ``t`` with ``score > t`` exactly when the source's ``score >= thr``.

    Scores are quint8 codes dequantized by the graph: with a fixed range the
    threshold is put half-way between the last failing and first passing
    code (``tflite_levels``, the source's own dequantized values per quint8
    code, decide which pass; by default the graph's values); with a run-time
    range, the float32 just below ``thr``.
    """
    t32 = np.float32(thr)
    if scores.range is None:
        return float(np.nextafter(t32, np.float32(-np.inf)))
    mn, mx = (float(np.float32(v)) for v in scores.range)
    ours = dequantize_u8(np.arange(256), mn, mx).astype(np.float32).astype(np.float64)
    decide = ours if tflite_levels is None else np.asarray(tflite_levels, np.float64)
    passing = np.flatnonzero(decide >= t32)
    if passing.size == 0:
        return float(ours[255]) + 1.0
    q = int(passing[0])
    return float(ours[0]) - 1.0 if q == 0 else (ours[q - 1] + ours[q]) / 2.0


def _node(b: GraphBuilder, op: str, refs: list[Ref], outs: list[tuple[tuple[int, ...], str]], name: str) -> list[Ref]:
    node = b.graph.append(op, refs, [OutputDef(tuple(s), t) for s, t in outs], NNPad.NA, name)  # type: ignore[arg-type]
    return [Ref(node.node_id, i) for i in range(len(outs))]


def _f(b: GraphBuilder, op: str, refs: list[Ref], shape: tuple[int, ...], name: str, dtype: str = "float") -> Ref:
    return _node(b, op, refs, [(shape, dtype)], name)[0]


def _fconst(b: GraphBuilder, data: np.ndarray, name: str) -> Ref:
    return b.graph.const_ref(np.asarray(data, np.float32), name)


def _gather(b: GraphBuilder, index: Ref, n_index: int, table: Ref, tshape: tuple[int, int, int, int], axis: int,
            name: str, dtype: str = "float") -> tuple[Ref, tuple[int, int, int, int]]:
    """Gather_f / Gather_int32 of a ``[1,1,1,n]`` index along ``axis`` of a table whose leading dims are 1."""
    shape = list(tshape)
    shape[axis] = n_index
    op = "Gather_f" if dtype == "float" else "Gather_int32"
    refs = [index, table, b.int_const(axis, f"{name}/dim"), b.int_const(1, f"{name}/rank")]
    return _f(b, op, refs, tuple(shape), name, dtype), tuple(shape)  # type: ignore[return-value]


def _slice(b: GraphBuilder, x: Ref, start: list[int], size: list[int], name: str, dtype: str = "float") -> Ref:
    op = "Slice_f" if dtype == "float" else "Slice_int32"
    return _f(b, op, [x, b.int_const(start, f"{name}/start"), b.int_const(size, f"{name}/size")], tuple(size), name,
              dtype)


def _concat_depth(b: GraphBuilder, parts: list[Ref], shape: tuple[int, ...], name: str) -> Ref:
    return _f(b, "Concat_f", [b.int_const(3, f"{name}/dim"), *parts], shape, name)


def detection_postprocess(b: GraphBuilder, name: str, encodings: Value, scores: Value, anchors: np.ndarray,
                          spec: DetectSpec) -> tuple[Ref, Ref, Ref, Ref]:
    """Boxes ``[1,1,S,4]``, classes ``[1,1,1,S]``, scores ``[1,1,1,S]``, count ``[1,1,1,1]`` (float refs).

    ``encodings`` ``[1,1,N,4]`` (ty, tx, th, tw) and ``scores``
    ``[1,1,N,label_offset + classes]`` are quint8 values; ``anchors`` ``[N, 4]``
    (ycenter, xcenter, h, w) real numbers. ``S = max_detections *
    classes_per_detection`` (fast NMS) or ``max_detections`` (regular).
    """
    n = int(encodings.shape[2])
    c, d, k = spec.num_classes, spec.max_detections, spec.classes_per_detection
    a = np.asarray(anchors, np.float64).reshape(n, 4)
    corners = np.stack([a[:, 0] - a[:, 2] / 2, a[:, 1] - a[:, 3] / 2, a[:, 0] + a[:, 2] / 2, a[:, 1] + a[:, 3] / 2], 1)
    deltas = dequantize(b, encodings, f"{name}/encodings")
    dec = _f(b, "Box_Decoder_f", [deltas, _fconst(b, corners.reshape(1, 1, n, 4), f"{name}/anchors"),
                                  _fconst(b, np.reshape(spec.scales, (1, 1, 1, 4)), f"{name}/scales")],
             (1, 1, n, 4), f"{name}/decode")
    sc = dequantize(b, scores, f"{name}/scores")
    if spec.label_offset or scores.shape[3] != c:
        sc = _slice(b, sc, [0, 0, 0, spec.label_offset], [1, 1, n, c], f"{name}/classes")
    big = _f(b, "Mul_f", [dec, _fconst(b, np.full((1, 1, 1, 1), BOX_SCALE), f"{name}/box_scale")], (1, 1, n, 4),
             f"{name}/scaled")
    zero_col = _fconst(b, np.zeros((1, 1, n, 1)), f"{name}/background")
    if spec.regular:
        nms_scores = _concat_depth(b, [zero_col, sc], (1, 1, n, c + 1), f"{name}/nms_scores")
        rep = b.int_const(np.tile(np.arange(4), c + 1).astype(np.int32), f"{name}/per_class")
        nms_boxes, _ = _gather(b, rep, 4 * (c + 1), big, (1, 1, n, 4), 3, f"{name}/nms_boxes")
        length = c * n
    else:
        top_v, top_i = _node(b, "TopK_f", [sc, b.int_const(k, f"{name}/k")], [((1, 1, n, k), "float"),
                                                                             ((1, 1, n, k), "int32")], f"{name}/topk")
        best = top_v if k == 1 else _slice(b, top_v, [0, 0, 0, 0], [1, 1, n, 1], f"{name}/best")
        nms_scores = _concat_depth(b, [zero_col, best], (1, 1, n, 2), f"{name}/nms_scores")
        nms_boxes = _concat_depth(b, [_fconst(b, np.zeros((1, 1, n, 4)), f"{name}/background_boxes"), big],
                                  (1, 1, n, 8), f"{name}/nms_boxes")
        length = n
    refs = [nms_scores, nms_boxes, _fconst(b, np.full((1, 1, 1, 1), n), f"{name}/splits"),
            b.float_const(spec.score_threshold, f"{name}/score_threshold"),
            b.float_const(spec.iou_threshold, f"{name}/iou_threshold"), b.int_const(d, f"{name}/max_detections"),
            b.int_const(0, f"{name}/soft"), b.int_const(0, f"{name}/method"), b.float_const(0.5, f"{name}/sigma"),
            b.float_const(0.0, f"{name}/min_score"), b.int_const(0, f"{name}/rotated")]
    cols = c + 1 if spec.regular else 2
    o_s, _, o_c, count, keeps, _ = _node(b, "BoxWithNmsLimit_f", refs, [
        ((1, 1, 1, length), "float"), ((1, 1, length, 4), "float"), ((1, 1, 1, length), "float"),
        ((1, 1, 1, 1), "float"), ((1, 1, 1, length), "int32"), ((1, 1, 1, cols), "int32")], f"{name}/nms")
    if spec.regular:
        vals, order = _node(b, "TopK_f", [o_s, b.int_const(d, f"{name}/sort_k")],
                            [((1, 1, 1, d), "float"), ((1, 1, 1, d), "int32")], f"{name}/sort")
        kept, _ = _gather(b, order, d, keeps, (1, 1, 1, length), 3, f"{name}/kept", "int32")
        cls1, _ = _gather(b, order, d, o_c, (1, 1, 1, length), 3, f"{name}/kept_classes")
        cls = _f(b, "Add_f", [cls1, _fconst(b, np.full((1, 1, 1, 1), -1.0), f"{name}/minus1")], (1, 1, 1, d),
                 f"{name}/class_ids")
        rows, slots = kept, d
    else:
        kept = _slice(b, keeps, [0, 0, 0, 0], [1, 1, 1, d], f"{name}/kept", "int32")
        v, _ = _gather(b, kept, d, top_v, (1, 1, n, k), 2, f"{name}/kept_scores")
        ci, _ = _gather(b, kept, d, top_i, (1, 1, n, k), 2, f"{name}/kept_classes", "int32")
        slots = d * k
        vals = _f(b, "Reshape", [v, b.int_const([1, 1, 1, slots], f"{name}/flat_scores")], (1, 1, 1, slots),
                  f"{name}/scores_flat")
        cf = _f(b, "CastInt32ToFloat32", [ci], (1, 1, d, k), f"{name}/class_float")
        cls = _f(b, "Reshape", [cf, b.int_const([1, 1, 1, slots], f"{name}/flat_classes")], (1, 1, 1, slots),
                 f"{name}/class_ids")
        rows = kept
        if k > 1:
            rep = b.int_const(np.repeat(np.arange(d), k).astype(np.int32), f"{name}/repeat")
            rows, _ = _gather(b, rep, slots, kept, (1, 1, 1, d), 3, f"{name}/rows", "int32")
    boxes, _ = _gather(b, rows, slots, dec, (1, 1, n, 4), 2, f"{name}/kept_boxes")
    slot_no = _fconst(b, (np.arange(slots) // (1 if spec.regular else k)).reshape(1, 1, 1, slots), f"{name}/slot")
    left = _f(b, "Sub_f", [count, slot_no], (1, 1, 1, slots), f"{name}/left")
    mask = _f(b, "Clamp_f", [left, b.float_const(0.0, f"{name}/zero"), b.float_const(1.0, f"{name}/one")],
              (1, 1, 1, slots), f"{name}/mask")
    mask_rows = _f(b, "Reshape", [mask, b.int_const([1, 1, slots, 1], f"{name}/mask_shape")], (1, 1, slots, 1),
                   f"{name}/mask_rows")
    out_boxes = _f(b, "Mul_f", [boxes, mask_rows], (1, 1, slots, 4), f"{name}/boxes")
    out_classes = _f(b, "Mul_f", [cls, mask], (1, 1, 1, slots), f"{name}/classes")
    out_scores = _f(b, "Mul_f", [vals, mask], (1, 1, 1, slots), f"{name}/scores")
    return out_boxes, out_classes, out_scores, count
