"""ONNX pooling: MaxPool, AveragePool (count_include_pad, ceil_mode), GlobalAveragePool, GlobalMaxPool.

QuantizedMaxPool_8 / QuantizedAvgPool_8 read only in-bounds taps under
SAME / SAME_CAFFE padding (SEMANTICS §6), which is exactly ONNX's "pads not
counted" (``count_include_pad=0``) and ceil_mode's partial windows whenever
the pads fit one of those two modes (:func:`onnx.conv_layer.padding_plan`).
Other pads are explicit: MaxPool pads with code 0 (the range minimum never
wins a max), AveragePool with ``count_include_pad=1`` pads zeros that count,
AveragePool with ``count_include_pad=0`` is bands of VALID pools over the
in-bounds taps (:mod:`onnx.pool_bands`).
Global pools reduce H and W: QuantizedMean_8 straight onto the output range,
QuantizedMaxPool_8 over one window.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import NNPad
from hexnn_import.importers.nodes import whole_pool
from hexnn_import.importers.nodes.core import Range, emit_conv, node3, same_range
from hexnn_import.importers.nodes.reduce import emit_mean, emit_reduce_extreme
from hexnn_import.importers.onnx.common import check_data, used_tensors
from hexnn_import.importers.onnx.conv_layer import Geometry, geometry, pad_input, padding_plan, window_problem
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import NHWC
from hexnn_import.importers.onnx.pool_bands import Band, average_in_bounds, axis_bands
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.nodes.values import Value

POOL_EMITS = ("QuantizedMaxPool_8", "QuantizedAvgPool_8", "QuantizedPad_V2_8", "QuantizedPad_8", "Requantize_8to8",
              "Transpose_8", "QuantizedReshape", "DepthwiseSupernode_8x8p32to8", "QuantizedSlice_8", "QuantizedConcat_8")


def _geometry(imp: OnnxImporter, node: ONode) -> tuple[Geometry, tuple[int, int], tuple[int, int]]:
    x = imp.tensors.shape(node.inputs[0])
    y = imp.tensors.shape(node.outputs[0])
    k = [int(v) for v in node.attr("kernel_shape")]
    return geometry(node, (x[2], x[3]), (k[0], k[1])), (x[2], x[3]), (y[2], y[3])


def check_pool(imp: OnnxImporter, node: ONode) -> str | None:
    """2-D window (a 1-D one on [N, C, L] is done as 2-D with H = 1), no dilation, no used Indices output;
    AveragePool with count_include_pad=0 and any pads averages the in-bounds taps (bands of VALID pools)."""
    why = check_data(imp, node)
    if why:
        return why
    if len(imp.tensors.shape(node.inputs[0])) != 4 or len(node.attr("kernel_shape") or []) != 2:
        return "pooling over other than 2 spatial dimensions"
    if any(int(d) != 1 for d in node.attr("dilations") or []):
        return "dilated pooling"
    if len(node.outputs) > 1 and node.outputs[1] and node.outputs[1] in used_tensors(imp):
        return "the Indices output is used"
    g, in_hw, out_hw = _geometry(imp, node)
    why = window_problem(node, in_hw, g.kernel)
    if why:
        return why
    mode, used = plan(node, g, in_hw, out_hw)
    if node.op_type in ("AveragePool", "QLinearAveragePool") and used is not None:
        if not node.attr("count_include_pad", 0):
            return None if _bands(g, in_hw, out_hw) else "a window wholly inside the padding (no tap to average)"
        if any(used[i][1] > g.pads[i + 2] for i in range(2)):
            return "ceil_mode windows past the pads with count_include_pad=1"
    return None


def plan(node: ONode, g: Geometry, in_hw: tuple[int, int], out_hw: tuple[int, int]
         ) -> tuple[NNPad, list[tuple[int, int]] | None]:
    """padding_plan, except that AveragePool's counted pads (count_include_pad=1) are always explicit."""
    mode, used = padding_plan(in_hw, out_hw, g)
    if node.op_type in ("AveragePool", "QLinearAveragePool") and node.attr("count_include_pad", 0) and any(g.pads):
        used = [(g.pads[i], max(0, (out_hw[i] - 1) * g.strides[i] + g.eff(i) - in_hw[i] - g.pads[i]))
                for i in range(2)]
        mode = NNPad.VALID
    return mode, used


def _bands(g: Geometry, in_hw: tuple[int, int], out_hw: tuple[int, int]) -> tuple[list[Band], list[Band]] | None:
    """Row and column bands of an average over in-bounds taps (onnx.pool_bands); None: an empty window."""
    rows, cols = (axis_bands(in_hw[i], g.kernel[i], g.strides[i], g.pads[i], out_hw[i]) for i in range(2))
    return None if rows is None or cols is None else (rows, cols)


def pool(imp: OnnxImporter, node: ONode, x: Value, op: str, out_range: Range | None = None) -> Value:
    """The pool op on NHWC ``x`` (module doc for the padding); an AveragePool with other pads and
    count_include_pad=0 in bands of VALID pools (:mod:`onnx.pool_bands`)."""
    g, in_hw, out_hw = _geometry(imp, node)
    mode, used = plan(node, g, in_hw, out_hw)
    name = node.outputs[0]
    shape = imp.tensors.out_graph_shape(name, NHWC)
    if used is not None and op == "QuantizedAvgPool_8" and not node.attr("count_include_pad", 0):
        rows, cols = _bands(g, in_hw, out_hw)  # type: ignore[misc]

        def piece(part: Value, kernel: tuple[int, int], piece_name: str) -> Value:
            out_hw_piece = tuple((part.shape[1 + i] - kernel[i]) // g.strides[i] + 1 for i in range(2))
            return window_pool(imp, part, op, kernel, g.strides, NNPad.VALID, out_range,
                               (x.shape[0], *out_hw_piece, x.shape[3]), piece_name)
        return average_in_bounds(imp, x, rows, cols, g.strides, _pieces_range(x, out_range), name, piece)
    if used is not None:  # MaxPool: code 0 never wins; AveragePool (count_include_pad): zeros that count
        x = pad_input(imp, x, used, float("-inf") if op == "QuantizedMaxPool_8" else 0.0, name)
        mode = NNPad.VALID
    return window_pool(imp, x, op, g.kernel, g.strides, mode, out_range, shape, name)


def _pieces_range(x: Value, out_range: Range | None) -> Range | None:
    """The one range the band pieces are joined on: the output's when fixed (each piece rounds onto it
    once), else the input's (QuantizedAvgPool_8 keeps it), or None (run-time: the concat merges)."""
    return out_range if out_range is not None and x.range is not None else x.range


def window_pool(imp: OnnxImporter, x: Value, op: str, kernel: tuple[int, int], strides: tuple[int, int],
                mode: NNPad, out_range: Range | None, shape: tuple[int, ...], name: str) -> Value:
    """One pool op on NHWC ``x``.

    An average over full windows (no uncounted padding) onto an ``out_range``
    other than the input's is a DepthwiseSupernode whose weights are all
    ``1 / taps``: one rounding straight onto the output range, where
    QuantizedAvgPool_8 (which keeps the input's range) and a Requantize_8to8
    would round twice. A 1x1 output over a depth that is not a multiple of 32 pools copies of the channels
    (:mod:`~hexnn_import.importers.nodes.whole_pool`).
    """
    if (op == "QuantizedAvgPool_8" and mode == NNPad.VALID and out_range is not None and x.range is not None
            and not same_range(x.range, out_range)):
        taps = kernel[0] * kernel[1]
        w = np.full((kernel[0], kernel[1], x.shape[3], 1), 255, np.uint8)
        return emit_conv(imp, name, x, w, (0.0, 1.0 / taps), None, np.zeros(x.shape[3]), out_range, strides,
                         NNPad.VALID, shape, depthwise=True)  # type: ignore[arg-type]
    gr = imp.graph
    refs = [gr.shape_ref((1, kernel[0], kernel[1], 1), f"{name}/window"),
            gr.shape_ref((1, strides[0], strides[1], 1), f"{name}/stride")]
    if op == "QuantizedAvgPool_8" and whole_pool.needs_wide_depth(shape):  # type: ignore[arg-type]
        wide = whole_pool.widen(imp, x, name)
        y = node3(imp, op, wide.triple() + refs, (*shape[:3], wide.shape[3]), name, wide.range, mode)
        return whole_pool.narrow(imp, y, shape[3], name)
    return node3(imp, op, x.triple() + refs, shape, name, x.range, mode)


@onnx_op("MaxPool", POOL_EMITS, check_pool)
def max_pool(imp: OnnxImporter, node: ONode) -> None:
    """MaxPool -> QuantizedMaxPool_8 (range passes through)."""
    imp.tensors.finish(node.outputs[0], pool(imp, node, imp.tensors.value(node.inputs[0], NHWC), "QuantizedMaxPool_8"), NHWC)


@onnx_op("AveragePool", POOL_EMITS, check_pool)
def average_pool(imp: OnnxImporter, node: ONode) -> None:
    """AveragePool -> QuantizedAvgPool_8 (range passes through)."""
    out = node.outputs[0]
    imp.tensors.finish(out, pool(imp, node, imp.tensors.value(node.inputs[0], NHWC), "QuantizedAvgPool_8", imp.tensors.act_range(out)), NHWC)


def check_global(imp: OnnxImporter, node: ONode) -> str | None:
    """A rank-4 input (two spatial dimensions)."""
    why = check_data(imp, node)
    if why:
        return why
    return None if len(imp.tensors.shape(node.inputs[0])) == 4 else "global pooling over other than 2 spatial dimensions"


@onnx_op("GlobalAveragePool", ("QuantizedMean_8", "Transpose_8", "QuantizedReshape", "Requantize_8to8"), check_global)
def global_average_pool(imp: OnnxImporter, node: ONode) -> None:
    """GlobalAveragePool -> QuantizedMean_8 over H, W onto the output's range (one rounding)."""
    out = node.outputs[0]
    y = emit_mean(imp, imp.tensors.value(node.inputs[0], NHWC), (1, 2), imp.tensors.act_range(out), out)
    imp.tensors.finish(out, y, NHWC)


@onnx_op("GlobalMaxPool", ("QuantizedMaxPool_8", "Transpose_8", "QuantizedReshape", "Requantize_8to8"), check_global)
def global_max_pool(imp: OnnxImporter, node: ONode) -> None:
    """GlobalMaxPool -> one QuantizedMaxPool_8 window over H, W (exact)."""
    out = node.outputs[0]
    imp.tensors.finish(out, emit_reduce_extreme(imp, imp.tensors.value(node.inputs[0], NHWC), (1, 2), True, out), NHWC)
