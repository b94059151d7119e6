"""Resize emitters shared by the importers: bilinear and nearest-neighbour, every coordinate mode.

hexagon_nn's QuantizedResizeBilinear_8 and ResizeNearestNeighbor_8 know
TensorFlow's legacy coordinates only (``src = y * in / out``, or with
align_corners ``y * (in - 1) / (out - 1)``; ops/kernels/resize.py). The
other modes are decomposed onto documented ops:

- **nearest**: the source index of each output row / column is computed
  here exactly as TFLite does (float32 ``scale``, ``floor`` or round half
  away, clamped); when it equals ResizeNearestNeighbor_8's the op is used,
  otherwise two Gather_8 lookups (rows, then columns) copy the same codes;
- **bilinear, half-pixel centers** (``src = (y + 1/2) * in / out - 1/2``,
  clamped to the edge): the input is edge-padded by one (MirrorPad_8
  SYMMETRIC with 1 on each side repeats the edge element), resized with
  legacy coordinates to a finer grid on which every wanted sample is a grid
  point, and every ``m``-th row / column is kept (QuantizedStridedSlice_8).
  Per axis ``g = gcd(2 in, in + out)``, ``m = 2 in / g``, the padded size
  ``N = in + 2`` is resized to ``out' = N * 2 out / g`` and rows
  ``c + m y`` with ``c = m (in + out) / (2 in)`` are kept: there
  ``src' = (c + m y) N / out' = (y + 1/2) in / out + 1/2``, the half-pixel
  source shifted by the one row of padding. All of it is exact code
  resampling. When ``m`` would exceed :data:`MAX_REFINE` (the finer grid
  costs ``m`` times the work per axis) the layer is computed in float
  instead: Dequantize, Gather_f of the two source rows, ``a + f (b - a)``
  with Sub_f / Mul_f / Add_f per axis, and Quantize (AutoQuantize on a
  run-time range) back onto the input's range.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.graph import NNPad, OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import dequantize, node3, quantize_float
from hexnn_import.importers.nodes.movement import gather, mirror_pad, strided_slice
from hexnn_import.importers.nodes.values import Value

#: Largest grid refinement per axis of the exact half-pixel decomposition.
MAX_REFINE = 4

RESIZE_EMITS = ("QuantizedResizeBilinear_8", "ResizeNearestNeighbor_8", "Gather_8", "MirrorPad_8",
                "QuantizedStridedSlice_8", "QuantizedReshape", "Dequantize", "Gather_f", "Sub_f", "Mul_f",
                "Add_f", "Quantize", "AutoQuantize")


# ---- source coordinates (TFLite's arithmetic) ---------------------------------------------
def tflite_nearest_index(n_in: int, n_out: int, align: bool, half: bool) -> np.ndarray:
    """TFLite's nearest source index per output position (float32 ``scale`` and products)."""
    if align and n_out > 1:
        scale = np.float32(n_in - 1) / np.float32(n_out - 1)
    else:
        scale = np.float32(n_in) / np.float32(n_out)
    pos = (np.arange(n_out, dtype=np.float32) + np.float32(0.5 if half else 0.0)) * scale
    if align:
        idx = np.trunc(pos + np.copysign(np.float32(0.5), pos))
    else:
        idx = np.floor(pos)
    idx = np.minimum(idx.astype(np.int64), n_in - 1)
    return np.maximum(idx, 0) if half else idx


def legacy_nearest_index(n_in: int, n_out: int, align: bool) -> np.ndarray:
    """ResizeNearestNeighbor_8's source index (exact rationals; ops/kernels/resize.py)."""
    y = np.arange(n_out, dtype=np.int64)
    if align:
        if n_out == 1:
            return np.zeros(1, np.int64)
        num, den = y * (n_in - 1), n_out - 1
        return np.minimum((2 * num + den) // (2 * den), n_in - 1)
    return np.minimum(y * n_in // n_out, n_in - 1)


def half_pixel_plan(n_in: int, n_out: int) -> tuple[int, int, int]:
    """``(m, out', c)`` of the exact half-pixel decomposition of one axis (module doc)."""
    if n_in == n_out:
        return 1, n_in, 0
    g = math.gcd(2 * n_in, n_in + n_out)
    m = 2 * n_in // g
    return m, (n_in + 2) * 2 * n_out // g, m * (n_in + n_out) // (2 * n_in)


def half_pixel_weights(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TFLite's half-pixel bilinear taps per output position: ``(i0, i1, f)`` (float path)."""
    scale = np.float32(n_in) / np.float32(n_out)
    src = (np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    lo = np.floor(src)
    i0 = np.maximum(lo.astype(np.int64), 0)
    i1 = np.minimum(np.ceil(src).astype(np.int64), n_in - 1)
    return i0, i1, (src - i0.astype(np.float32)).astype(np.float32)


# ---- emitters --------------------------------------------------------------------------------
def _size(b: GraphBuilder, hw: tuple[int, int], name: str) -> Ref:
    return b.int_const(list(hw), f"{name}/size")


def resize_nearest(b: GraphBuilder, v: Value, out_hw: tuple[int, int], align: bool, half: bool, name: str) -> Value:
    """Nearest-neighbour resize with TFLite's source indices (ResizeNearestNeighbor_8 or two Gather_8)."""
    bb, h, w, d = v.shape
    rows = tflite_nearest_index(h, out_hw[0], align, half)
    cols = tflite_nearest_index(w, out_hw[1], align, half)
    legacy = [legacy_nearest_index(h, out_hw[0], align), legacy_nearest_index(w, out_hw[1], align)]
    if not half and np.array_equal(rows, legacy[0]) and np.array_equal(cols, legacy[1]):
        refs = [v.data, _size(b, out_hw, name), v.mn, v.mx, b.int_const(int(align), f"{name}/align_corners")]
        return node3(b, "ResizeNearestNeighbor_8", refs, (bb, *out_hw, d), name, v.range)  # type: ignore[list-item]
    y = v
    if not np.array_equal(rows, np.arange(h)):
        idx = b.int_const(rows.astype(np.int32), f"{name}/rows")
        y = gather(b, y, idx, (1, 1, 1, out_hw[0]), 1, 1, (bb, out_hw[0], w, d), f"{name}/rows")
    if not np.array_equal(cols, np.arange(w)):
        idx = b.int_const(cols.astype(np.int32), f"{name}/cols")
        y = gather(b, y, idx, (1, 1, 1, out_hw[1]), 1, 2, (bb, out_hw[0], out_hw[1], d), f"{name}/cols")
    return y


def resize_bilinear(b: GraphBuilder, v: Value, out_hw: tuple[int, int], align: bool, half: bool,
                    name: str) -> Value:
    """Bilinear resize: QuantizedResizeBilinear_8, or the half-pixel decompositions of the module doc."""
    bb, h, w, d = v.shape
    if not half:
        refs = [v.data, _size(b, out_hw, name), v.mn, v.mx, b.int_const(int(align), f"{name}/align_corners")]
        return node3(b, "QuantizedResizeBilinear_8", refs, (bb, *out_hw, d), name, v.range)  # type: ignore[list-item]
    plans = [half_pixel_plan(h, out_hw[0]), half_pixel_plan(w, out_hw[1])]
    if max(p[0] for p in plans) > MAX_REFINE:
        return _half_pixel_float(b, v, out_hw, name)
    pads = [(0, 0), (0, 0) if h == out_hw[0] else (1, 1), (0, 0) if w == out_hw[1] else (1, 1), (0, 0)]
    y = mirror_pad(b, v, pads, True, f"{name}/edge")
    fine = (plans[0][1], plans[1][1])
    refs = [y.data, _size(b, fine, f"{name}/fine"), y.mn, y.mx, b.int_const(0, f"{name}/align_corners")]
    y = node3(b, "QuantizedResizeBilinear_8", refs, (bb, *fine, d), f"{name}/fine", v.range)  # type: ignore[list-item]
    return strided_slice(b, y, [0, plans[0][2], plans[1][2], 0], [1, plans[0][0], plans[1][0], 1],
                         [bb, out_hw[0], out_hw[1], d], f"{name}/pick")


def _float_node(b: GraphBuilder, op: str, refs: list[Ref], shape: tuple[int, ...], name: str) -> Ref:
    node = b.graph.append(op, refs, [OutputDef(tuple(shape), "float")], NNPad.NA, name)  # type: ignore[arg-type]
    return Ref(node.node_id, 0)


def _half_pixel_float(b: GraphBuilder, v: Value, out_hw: tuple[int, int], name: str) -> Value:
    """Half-pixel bilinear in float: per axis ``a + f (b - a)`` of the two gathered source rows."""
    x = dequantize(b, v, name)
    shape = list(v.shape)
    for axis, n_out in ((1, out_hw[0]), (2, out_hw[1])):
        n_in = shape[axis]
        if n_in == n_out:
            continue
        i0, i1, f = half_pixel_weights(n_in, n_out)
        tag = f"{name}/{'hw'[axis - 1]}"
        shape[axis] = n_out
        taps = []
        for k, idx in enumerate((i0, i1)):
            refs = [b.int_const(idx.astype(np.int32), f"{tag}/index{k}"), x, b.int_const(axis, f"{tag}/dim{k}"),
                    b.int_const(1, f"{tag}/rank{k}")]
            taps.append(_float_node(b, "Gather_f", refs, shape, f"{tag}/gather{k}"))
        fshape = [1, 1, 1, 1]
        fshape[axis] = n_out
        fref = b.graph.const_ref(f.reshape(fshape), f"{tag}/frac")
        diff = _float_node(b, "Sub_f", [taps[1], taps[0]], shape, f"{tag}/sub")
        step = _float_node(b, "Mul_f", [diff, fref], shape, f"{tag}/mul")
        x = _float_node(b, "Add_f", [taps[0], step], shape, f"{tag}/add")
    return quantize_float(b, x, tuple(shape), v.range, name)
