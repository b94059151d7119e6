"""Convolution geometry and the conv-layer emission shared by Conv, QLinearConv and ConvInteger.

ONNX padding (explicit ``pads``, or ``auto_pad``) is matched to the node
padding of hexagon_nn: no padding is VALID; padding equal to SAME's
(``before = pad // 2``, the extra after) is SAME, the mirror is SAME_CAFFE
(SEMANTICS §3); anything else, asymmetric pads included, is an explicit pad
of the zero code (QuantizedPad_V2_8 / QuantizedPad_8, exact) followed by a
VALID convolution. Padding past the last window is never read and is
dropped first. Dilation spreads the kernel taps with zero-weight codes (the
shared ``weights.dilate``).

Groups: 1 is a Supernode (or the float-graph chain), ``group == in
channels`` a depthwise layer, anything else QuantizedGroupedConv2d_8x8p32to8. ConvTranspose goes through
the transposed-conv emitter TFLite's TRANSPOSE_CONV uses (``emit_transpose_conv``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hexnn_import.graph import NNPad
from hexnn_import.importers.nodes.core import Range, bias_dynamic, bias_qint32, emit_conv, node3
from hexnn_import.importers.nodes.dwise_mult import emit_depthwise
from hexnn_import.importers.nodes.movement import pad
from hexnn_import.importers.nodes.transpose_conv import emit_transpose_conv
from hexnn_import.importers.onnx.layout import NHWC
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.onnx.weights import limit_channel_scales
from hexnn_import.importers.nodes.values import Value
from hexnn_import.importers.nodes.weights import LayerWeights, dilate
from hexnn_import.ops.quant import step_zero

if TYPE_CHECKING:
    from hexnn_import.importers.onnx.importer import OnnxImporter

K_LOW_1_32 = 1.0 / 32.0  # channel-scale bound of the grouped / transposed conv ops
CONV_EMITS = ("Supernode_8x8p32to8", "DepthwiseSupernode_8x8p32to8", "QuantizedConv2d_8x8to32",
              "QuantizedDepthwiseConv2d_8x8to32", "QuantizedChannelScale_32xf", "QuantizedBiasAdd_32p32to32",
              "Requantize_32to8", "QuantizeDownAndShrinkRange_32to8", "QuantizedGroupedConv2d_8x8p32to8",
              "QuantizedPad_V2_8", "QuantizedPad_8", "Requantize_8to8", "Transpose_8", "QuantizedReshape",
              "QuantizedTile_8")


@dataclass
class Geometry:
    """One 2-D window op's kernel, strides, dilations and (top, left, bottom, right) ONNX pads."""

    kernel: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pads: tuple[int, int, int, int]

    def eff(self, i: int) -> int:
        return (self.kernel[i] - 1) * self.dilations[i] + 1


def _pair(v: object, default: int) -> tuple[int, int]:
    if v is None:
        return default, default
    vals = [int(a) for a in v]  # type: ignore[union-attr]
    return (vals[0], vals[1]) if len(vals) == 2 else (vals[0], vals[0])


def geometry(node: ONode, in_hw: tuple[int, int], kernel: tuple[int, int]) -> Geometry:
    """Resolve strides, dilations and pads (``auto_pad`` SAME_UPPER / SAME_LOWER / VALID / NOTSET)."""
    strides = _pair(node.attr("strides"), 1)
    dil = _pair(node.attr("dilations"), 1)
    auto = node.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        before, after = [], []
        for i in range(2):
            out = -(-in_hw[i] // strides[i])
            total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - in_hw[i])
            small = total // 2
            before.append(small if auto == "SAME_UPPER" else total - small)
            after.append(total - before[-1])
        pads = (before[0], before[1], after[0], after[1])
    elif auto == "VALID":
        pads = (0, 0, 0, 0)
    else:
        p = [int(v) for v in node.attr("pads", [0, 0, 0, 0])]
        pads = (p[0], p[1], p[2], p[3]) if len(p) == 4 else (0, 0, 0, 0)
    return Geometry(kernel, strides, dil, pads)


MAX_STRIDE = 4096  # strides and dilations past any real model (a stride is a shape Const: keep it small)


def window_problem(node: ONode, in_hw: tuple[int, int], kernel: tuple[int, int],
                   transposed: bool = False) -> str | None:
    """Why a window op's geometry is unusable (None when it is fine): sizes, signs, windows past the input."""
    g = geometry(node, in_hw, kernel)
    if min(g.kernel) < 1 or min(g.strides) < 1 or min(g.dilations) < 1 or min(g.pads) < 0:
        return f"kernel {list(g.kernel)}, strides {list(g.strides)}, dilations {list(g.dilations)}, pads " \
               f"{list(g.pads)}: sizes must be >= 1 and pads >= 0"
    if max(g.strides + g.dilations) > MAX_STRIDE or max(g.pads) > max(in_hw) + max(g.kernel):
        return f"strides {list(g.strides)}, dilations {list(g.dilations)} or pads {list(g.pads)} out of bounds"
    if not transposed and any(g.eff(i) > in_hw[i] + g.pads[i] + g.pads[i + 2] for i in range(2)):
        return f"window {[g.eff(0), g.eff(1)]} larger than the padded input {list(in_hw)}"
    return None


def padding_plan(in_hw: tuple[int, int], out_hw: tuple[int, int], g: Geometry
                 ) -> tuple[NNPad, list[tuple[int, int]] | None]:
    """(node padding, explicit (before, after) per spatial axis or None) - module doc."""
    used = []
    for i in range(2):
        before = g.pads[i]
        after = max(0, (out_hw[i] - 1) * g.strides[i] + g.eff(i) - in_hw[i] - before)
        used.append((before, after))
    if all(p == (0, 0) for p in used) and all(
            (in_hw[i] - g.eff(i)) // g.strides[i] + 1 == out_hw[i] for i in range(2)):
        return NNPad.VALID, None
    for mode in (NNPad.SAME, NNPad.SAME_CAFFE):
        ok = True
        for i in range(2):
            out = -(-in_hw[i] // g.strides[i])
            total = max(0, (out - 1) * g.strides[i] + g.eff(i) - in_hw[i])
            small = total // 2
            want = (small, total - small) if mode == NNPad.SAME else (total - small, small)
            ok = ok and out == out_hw[i] and used[i] == want
        if ok:
            return mode, None
    return NNPad.VALID, used


def pad_input(imp: "OnnxImporter", x: Value, used: list[tuple[int, int]] | None, value: float, name: str) -> Value:
    """Explicit spatial padding of an NHWC value with real ``value`` (no node when None)."""
    if used is None:
        return x
    return pad(imp, x, [(0, 0), used[0], used[1], (0, 0)], value, f"{name}/pad")


def conv_layer(imp: "OnnxImporter", node: ONode, x: Value, lw: LayerWeights, bias: np.ndarray, out_name: str,
               out_range: Range | None) -> Value:
    """Conv / QLinearConv / a folded Conv+BatchNormalization onto ``out_range`` (module doc).

    ``x`` is NHWC; ``lw.codes`` are quint8 in the ONNX layout ``[O, I/group, kh, kw]``.
    """
    o, ig, kh, kw = lw.codes.shape
    group = int(node.attr("group", 1))
    g = geometry(node, (x.shape[1], x.shape[2]), (kh, kw))
    out_shape = imp.tensors.out_graph_shape(out_name, NHWC)
    mode, used = padding_plan((x.shape[1], x.shape[2]), (out_shape[1], out_shape[2]), g)
    x = pad_input(imp, x, used, 0.0, out_name)
    zero = step_zero(*lw.w_range)[1]
    if group == 1:
        w = dilate(np.ascontiguousarray(lw.codes.transpose(2, 3, 1, 0)), zero, *g.dilations)
        return emit_conv(imp, out_name, x, w, lw.w_range, lw.k, bias, out_range, g.strides, mode, out_shape)
    cin = x.shape[3]
    if group == cin and ig == 1 and o % cin == 0:
        w = lw.codes.reshape(cin, o // cin, kh, kw).transpose(2, 3, 0, 1)
        w = dilate(np.ascontiguousarray(w), zero, *g.dilations)
        return emit_depthwise(imp, out_name, x, w, lw.w_range, lw.k, bias, out_range, g.strides, mode, out_shape)
    return grouped_conv(imp, x, lw, bias, group, g, mode, out_shape, out_range, out_name)


def grouped_conv(imp: "OnnxImporter", x: Value, lw: LayerWeights, bias: np.ndarray, group: int, g: Geometry,
                 mode: NNPad, out_shape: tuple[int, int, int, int], out_range: Range | None, name: str) -> Value:
    """QuantizedGroupedConv2d_8x8p32to8 (filter ``[fh, fw, din/groups, dout]``, SAME or VALID padding)."""
    if mode == NNPad.SAME_CAFFE:  # the grouped op takes SAME or VALID: pad explicitly
        used = []
        for i in range(2):
            out = out_shape[1 + i]
            total = max(0, (out - 1) * g.strides[i] + g.eff(i) - x.shape[1 + i])
            used.append((total - total // 2, total // 2))
        x, mode = pad_input(imp, x, used, 0.0, name), NNPad.VALID
    lw, notes = limit_channel_scales(lw, K_LOW_1_32, 0, name)
    for n in notes:
        imp.note(n)
    zero = step_zero(*lw.w_range)[1]
    w = dilate(np.ascontiguousarray(lw.codes.transpose(2, 3, 1, 0)), zero, *g.dilations)
    gr = imp.graph
    refs = [x.data, gr.const_ref(w, f"{name}/weights")]
    bias_refs = _bias_refs(imp, x, lw, bias, name)
    wmn, wmx = imp.range_consts(lw.w_range, f"{name}/weights")
    refs += [bias_refs[0], x.mn, x.mx, wmn, wmx, bias_refs[1], bias_refs[2],  # type: ignore[list-item]
             gr.shape_ref((1, g.strides[0], g.strides[1], 1), f"{name}/stride"), imp.int_const(group, f"{name}/groups")]
    refs += list(imp.range_consts(out_range if out_range is not None else (-math.inf, math.inf), f"{name}/out"))
    if lw.k is not None:
        refs.append(gr.const_ref(lw.k.astype(np.float32).reshape(1, 1, 1, -1), f"{name}/channel_scale"))
    return node3(imp, "QuantizedGroupedConv2d_8x8p32to8", refs, out_shape, name, out_range, mode)  # type: ignore[arg-type]


def _bias_refs(imp: "OnnxImporter", x: Value, lw: LayerWeights, bias: np.ndarray, name: str) -> list:
    """qint32 bias refs on the product step when the input range is fixed, else on its own range."""
    if x.range is not None:
        prod = (x.range[1] - x.range[0]) / 255.0 * (lw.w_range[1] - lw.w_range[0]) / 255.0
        return bias_qint32(imp, bias, prod, f"{name}/bias")
    return bias_dynamic(imp, bias, f"{name}/bias")


def transpose_conv_layer(imp: "OnnxImporter", node: ONode, x: Value, lw: LayerWeights, bias: np.ndarray,
                         out_name: str, out_range: Range | None) -> Value:
    """ConvTranspose through the shared emitter (``emit_transpose_conv``, as TFLite's TRANSPOSE_CONV).

    ONNX weights are ``[I, O/group, kh, kw]`` (per-channel scales along axis 1), dilated here and laid
    out ``[O/group, kh, kw, I]``; the crops of the full result come from :func:`transpose_pads`. A
    per-channel layer whose scales span more than the op's (1/32, 1] is split into channel groups by the
    emitter (exact); a grouped one cannot be split, so its weights are rescaled (``limit_channel_scales``,
    noted in the summary).
    """
    _, og, kh, kw = lw.codes.shape
    group = int(node.attr("group", 1))
    g = geometry(node, (x.shape[1], x.shape[2]), (kh, kw))
    out_shape = imp.tensors.out_graph_shape(out_name, NHWC)
    pads = transpose_pads(node, (x.shape[1], x.shape[2]), (out_shape[1], out_shape[2]), g)
    if group != 1:
        lw, notes = limit_channel_scales(lw, K_LOW_1_32, 1, out_name)
        for n in notes:
            imp.note(n)
    zero = step_zero(*lw.w_range)[1]
    w_hwio = dilate(np.ascontiguousarray(lw.codes.transpose(2, 3, 0, 1)), zero, *g.dilations)  # [kh,kw,I,O/g]
    w = np.ascontiguousarray(w_hwio.transpose(3, 0, 1, 2))  # [O/g, kh, kw, I]
    k = None if lw.k is None else np.tile(lw.k.reshape(-1), group)
    crops = (pads[0], pads[1], pads[2], pads[3])
    return emit_transpose_conv(imp, out_name, x, w, lw.w_range, k, bias, out_range, g.strides, crops, out_shape,
                               group)


def transpose_pads(node: ONode, in_hw: tuple[int, int], out_hw: tuple[int, int], g: Geometry) -> list[int]:
    """(top, bottom, left, right) crops of the full transposed-conv result giving ONNX's output.

    The full result has ``(in - 1) * s + eff`` rows; ONNX takes ``out`` of
    them starting at the begin pad (``auto_pad`` / ``output_shape``: the
    spec's split of the total padding). The end crop is negative when
    output_padding asks for rows past the full result (the caller extends
    the input by zero rows then).
    """
    auto = node.attr("auto_pad", "NOTSET") or "NOTSET"
    explicit = node.attr("output_shape") is None and auto == "NOTSET"
    out = []
    for i in range(2):
        full = (in_hw[i] - 1) * g.strides[i] + g.eff(i)
        if explicit:
            before = g.pads[i]
        else:
            total = full + int((node.attr("output_padding") or [0, 0])[i]) - out_hw[i]
            before = total // 2 if auto == "SAME_UPPER" else total - total // 2
        after = full - out_hw[i] - before  # negative: output_padding past the full result
        if before < 0:
            raise ValueError(f"output size {out_hw[i]} needs a negative begin pad")
        out += [before, after]
    return out
