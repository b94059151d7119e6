"""ONNX Resize (opset 10+) and Upsample (7, 9): nearest and bilinear over H and W of NCHW data.

Nearest: the source row / column of every output position is computed by
the onnx package's reference Resize on an index ramp (so every
coordinate_transformation_mode and nearest_mode follows the specification
exactly); when the indices are ResizeNearestNeighbor_8's the op is used,
otherwise two Gather_8 copy the same codes (nodes.movement.gather).
Bilinear: ``asymmetric`` is TensorFlow's legacy mapping
(QuantizedResizeBilinear_8), ``align_corners`` its align-corners mapping,
``half_pixel`` / ``pytorch_half_pixel`` the exact half-pixel decomposition
of nodes.resize. Cubic and tf_crop_and_resize are not supported.
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from hexnn_import.importers.nodes.core import node3
from hexnn_import.importers.nodes.movement import gather
from hexnn_import.importers.nodes.resize import RESIZE_EMITS, legacy_nearest_index, resize_bilinear
from hexnn_import.importers.onnx.common import check_data, const_input, need_const
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import NHWC
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.nodes.values import Value

HALF = ("half_pixel", "pytorch_half_pixel")


def scales_of(imp: OnnxImporter, node: ONode) -> list[float]:
    """The per-axis scale factors (from ``scales`` or ``sizes / input``)."""
    x, y = imp.tensors.shape(node.inputs[0]), imp.tensors.shape(node.outputs[0])
    if node.op_type == "Upsample" and node.since < 9:
        return [float(s) for s in node.attr("scales")]
    pos = 1 if node.op_type == "Upsample" or node.since < 11 else 2
    s = const_input(imp, node, pos)
    if s is not None and np.asarray(s).size:
        return [float(v) for v in np.asarray(s).reshape(-1)]
    return [o / i for o, i in zip(y, x)]


def mode_of(node: ONode) -> tuple[str, str]:
    """(mode, coordinate_transformation_mode) with each op's defaults."""
    mode = node.attr("mode", "nearest") or "nearest"
    if node.op_type == "Upsample" or node.since < 11:
        return ("linear" if mode in ("linear", "bilinear") else mode), "asymmetric"
    return mode, node.attr("coordinate_transformation_mode", "half_pixel") or "half_pixel"


def _check(imp: OnnxImporter, node: ONode) -> str | None:
    """Resizes H and W of a rank-4 tensor with constant scales / sizes, no antialias or axes; nearest (not
    tf_crop_and_resize), or linear with an asymmetric, align_corners or half-pixel mode and scales equal to
    output / input sizes."""
    why = check_data(imp, node) or need_const(imp, node, tuple(range(1, len(node.inputs))))
    if why:
        return why
    x, y = imp.tensors.shape(node.inputs[0]), imp.tensors.shape(node.outputs[0])
    if len(x) != 4 or x[:2] != y[:2]:
        return "resize of other than the H and W axes of a rank-4 tensor"
    if node.attr("antialias", 0) or node.attr("axes") is not None:
        return "antialias / axes"
    mode, ctm = mode_of(node)
    scales = scales_of(imp, node)
    if mode == "nearest":
        return None if ctm != "tf_crop_and_resize" else f"coordinate_transformation_mode {ctm}"
    if mode != "linear":
        return f"mode {mode}"
    if ctm not in ("asymmetric", "align_corners") + HALF:
        return f"linear resize with coordinate_transformation_mode {ctm}"
    if any(abs(s - o / i) > 1e-6 for s, o, i in zip(scales[2:], y[2:], x[2:])):
        return "linear resize whose scales differ from output / input sizes"
    if ctm == "pytorch_half_pixel" and min(y[2:]) == 1:
        return "pytorch_half_pixel to a size of 1"
    return None


def nearest_index(node: ONode, n_in: int, n_out: int, scale: float, opset: int) -> np.ndarray:
    """Source index of each output position along one axis: ONNX's reference Resize of an index ramp."""
    from onnx.reference import ReferenceEvaluator

    if node.op_type == "Upsample" or node.since < 11:
        return np.minimum(np.floor(np.arange(n_out) / scale).astype(np.int64), n_in - 1)
    attrs = {k: node.attr(k) for k in ("coordinate_transformation_mode", "nearest_mode") if node.attr(k) is not None}
    ramp = np.arange(n_in, dtype=np.float32).reshape(1, n_in)
    res = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", **attrs)
    ref = ReferenceEvaluator(res, opsets={"": max(opset, 13)})
    out = ref.run(None, {"x": ramp, "s": np.array([1.0, scale], np.float32)})[0].reshape(-1)
    if out.size != n_out:  # a scale whose product floors differently: fall back to the sizes form
        res = helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="nearest", **attrs)
        ref = ReferenceEvaluator(res, opsets={"": max(opset, 13)})
        out = ref.run(None, {"x": ramp, "z": np.array([1, n_out], np.int64)})[0].reshape(-1)
    return out.astype(np.int64)


def resize_nearest_index(imp: OnnxImporter, v: Value, rows: np.ndarray, cols: np.ndarray, name: str) -> Value:
    """ResizeNearestNeighbor_8 when the indices are its own, else Gather_8 rows then columns."""
    bb, h, w, d = v.shape
    out_hw = (rows.size, cols.size)
    for align in (False, True):
        if np.array_equal(rows, legacy_nearest_index(h, out_hw[0], align)) and \
                np.array_equal(cols, legacy_nearest_index(w, out_hw[1], align)):
            refs = [v.data, imp.int_const(list(out_hw), f"{name}/size"), v.mn, v.mx,
                    imp.int_const(int(align), f"{name}/align_corners")]
            return node3(imp, "ResizeNearestNeighbor_8", refs, (bb, *out_hw, d), name, v.range)  # type: ignore[list-item]
    y = v
    if not np.array_equal(rows, np.arange(h)):
        idx = imp.int_const(rows.astype(np.int32), f"{name}/rows")
        y = gather(imp, y, idx, (1, 1, 1, rows.size), 1, 1, (bb, rows.size, w, d), f"{name}/rows")
    if not np.array_equal(cols, np.arange(w)):
        idx = imp.int_const(cols.astype(np.int32), f"{name}/cols")
        y = gather(imp, y, idx, (1, 1, 1, cols.size), 1, 2, (bb, rows.size, cols.size, d), f"{name}/cols")
    return y


@onnx_op(("Resize", "Upsample"), RESIZE_EMITS + ("Transpose_8",), _check)
def resize(imp: OnnxImporter, node: ONode) -> None:
    """Resize / Upsample over H and W (module doc)."""
    out = node.outputs[0]
    x = imp.tensors.value(node.inputs[0], NHWC)
    mode, ctm = mode_of(node)
    oh, ow = imp.tensors.shape(out)[2:]
    if mode == "nearest":
        s = scales_of(imp, node)
        rows = nearest_index(node, x.shape[1], oh, s[2], imp.m.opset)
        cols = nearest_index(node, x.shape[2], ow, s[3], imp.m.opset)
        imp.tensors.finish(out, resize_nearest_index(imp, x, rows, cols, out), NHWC)
        return
    y = resize_bilinear(imp, x, (oh, ow), ctm == "align_corners", ctm in HALF, out)
    imp.tensors.finish(out, y, NHWC)
