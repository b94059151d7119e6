"""TFLite RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (align_corners, half_pixel_centers).

The output size comes from the output tensor (the ``size`` input must be
constant and agree). Lowering in :mod:`hexnn_import.importers.nodes.resize`:
legacy coordinates map onto QuantizedResizeBilinear_8 /
ResizeNearestNeighbor_8; half-pixel centers are decomposed (exact code
resampling on a finer grid, or two Gather_8 for nearest). Arithmetic
differences from TFLite: the bilinear ops interpolate codes exactly and
round half away, TFLite's integer kernels use 10-bit (int8) or float
(uint8) weights, so an output may differ by one code.
"""
from __future__ import annotations

from hexnn_import.importers.nodes.resize import (
    RESIZE_EMITS,
    resize_bilinear,
    resize_nearest,
)
from hexnn_import.importers.tflite.common import const_ints, finish
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.handlers.shape import check_move
from hexnn_import.importers.tflite.reader import TFOperator


def _check_resize(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A 4-D input, a constant size equal to the output's height and width; not align_corners and
    half_pixel_centers together."""
    why = check_move(imp, op, (0,), 1, (1,))
    if why:
        return why
    if len(imp.tensor(op.inputs[0]).shape) != 4:
        return "input is not 4-D"
    size = const_ints(imp, op, 1).reshape(-1).tolist()  # type: ignore[union-attr]
    if size != list(imp.tensor(op.outputs[0]).shape[1:3]):
        return f"size {size} does not match the output shape {list(imp.tensor(op.outputs[0]).shape)}"
    o = op.options
    if o is not None and o.AlignCorners() and o.HalfPixelCenters():
        return "align_corners and half_pixel_centers both set"
    return None


def _flags(op: TFOperator) -> tuple[bool, bool]:
    o = op.options
    return (bool(o.AlignCorners()), bool(o.HalfPixelCenters())) if o is not None else (False, False)


@tflite_op("RESIZE_BILINEAR", RESIZE_EMITS + ("Requantize_8to8",), _check_resize)
def resize_bilinear_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """RESIZE_BILINEAR -> QuantizedResizeBilinear_8 (half-pixel: nodes.resize's decomposition)."""
    yt = imp.tensor(op.outputs[0])
    align, half = _flags(op)
    y = resize_bilinear(imp, imp.qvalue(op.inputs[0]), (yt.shape[1], yt.shape[2]), align, half, yt.name)
    finish(imp, op, y)


@tflite_op("RESIZE_NEAREST_NEIGHBOR", RESIZE_EMITS + ("Requantize_8to8",), _check_resize)
def resize_nearest_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """RESIZE_NEAREST_NEIGHBOR with TFLite's float32 source indices (ResizeNearestNeighbor_8 or Gather_8)."""
    yt = imp.tensor(op.outputs[0])
    align, half = _flags(op)
    y = resize_nearest(imp, imp.qvalue(op.inputs[0]), (yt.shape[1], yt.shape[2]), align, half, yt.name)
    finish(imp, op, y)
