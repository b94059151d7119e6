"""create_transpose_conv_nodes: a quantized transposed convolution becomes a convolution chain
(hexagon_nn 2.14.1 prepare.c ``create_transpose_conv_nodes`` -> expand_transpose_conv_nodes.c
``expand_transpose_conv_nodes``; weights as transpose_conv_procweights.c ``process_transpose_conv_filter``).

prepare.c runs it right after transpose_consts, so the chain it makes goes through the later passes like
any imported one (make_supernodes fuses it, convert_to_depth32 makes the DepthToSpace_8 a
DepthToSpace_8_d32). For QuantizedTransposeConv2d_8x8p32to8 / _8x8p8to8 without groups (the C's cases 1
and 2), in the C's order of creation:

- a ``[1,1,1,1]`` stride Const for the convolution (the C gives it 16 bytes; only its shape is read);
- when the input needs padding: a ``[1,1,4,2]`` int32 paddings Const and a QuantizedPad_8 (pads
  ``r-1-top, r-1-bottom, s-1-left, s-1-right``; the transposed conv's own pads only when the stride is 1);
- channel scales (input 13, if any) and biases laid out ``[1,1,1,k]``: the original values at
  ``i * padded_filters`` for each of the ``sh*sw`` sub-filters, 1.0 / zero elsewhere;
- the int32 scalar 3 (the C makes the split-dimension Const even without groups; it dies later);
- the weights ``[r, s, din, k]`` (``r = ceil(fh/sh)``, ``s = ceil(fw/sw)``, ``k = sh*sw*padded_filters``,
  filters padded to a multiple of 32 when the stride width is 2, 3, 4 or 8): the filter padded with its
  zero code, space-to-batch by the stride, transposed to HWIO and rotated 180 degrees;
- QuantizedConv2d_8x8to32 (VALID) -> [QuantizedChannelScale_32xf] -> [QuantizeDownAndShrinkRange_32to8,
  8-bit bias] -> QuantizedBiasAdd -> Requantize_32to8 (the transposed conv's output range);
- with a stride above 1: DepthToSpace_8 by ``[sh, sw]`` with crops ``[top, bottom, left, right]`` (and the
  output depth as a 5th entry when the filters were padded), taking the original node's id and outputs;
  else the Requantize_32to8 takes them.

Grouped, depthwise (cases 3-8: QuantizedSplit_8 / QuantizedConcat_8 / subkernel tracks) and 16-bit
transposed convolutions are left as they are (the project's kernels compute them directly).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hexnn_import.graph import NNPad, Node, OutputDef, Ref
from hexnn_import.optimizer.consts import create_const_int32_op, do_prepend_const_node, new_internal_node_id
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.edits import replace_node_with
from hexnn_import.optimizer.lookup import find_node_must_be_Const_from_ref
from hexnn_import.ops.op_groups import TRANSPOSE_CONV_OPS, OpClass
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.slots import QTRIPLE, has_slot, slot, slots

SCALAR = OutputDef((1, 1, 1, 1), "float")
#: the inputs a transposed conv must have as Consts to be expanded (filter and its range, pads, strides, bias
#: and its range)
CONST_SLOTS = ("filter", "filter_min", "filter_max", "pad", "stride", "bias", "bias_min", "bias_max")


def roundup(v: int, m: int) -> int:
    """nnlib's roundup: ``v`` rounded up to a multiple of ``m``."""
    return (v + m - 1) // m * m


def quantize_uint8(val: float, lo: float, hi: float) -> int:
    """nnlib quantize.h ``quantize_uint8`` in float32: ``sat_u8(roundf((val - lo) * 255 / max(1e-18, hi - lo)))``."""
    f32 = np.float32
    rng = max(f32(1e-18), f32(f32(hi) - f32(lo)))
    v = f32(f32(val) - f32(lo)) * f32(f32(255.0) / rng)
    r = np.floor(abs(float(v)) + 0.5) * (1 if v >= 0 else -1)  # roundf: half away from zero
    return int(min(255, max(0, r)))


def pads_num_filters(stride_w: int) -> bool:
    """expand_transpose_conv_nodes: filters are padded to a multiple of 32 for stride width 2, 3, 4 or 8."""
    return 1 < stride_w < 5 or stride_w == 8


def transpose_conv_weights(w: np.ndarray, zero: int, bh: int, bw: int, pad_filters: bool) -> np.ndarray:
    """process_transpose_conv_filter without groups, depthwise or channel multiplier: ``[O, fh, fw, din]`` ->
    ``[fh'/bh, fw'/bw, din, bh*bw*O']``.

    The filter is padded after its end with ``zero`` to ``O' = roundup(O, 32)`` filters (when
    ``pad_filters``), ``fh' = roundup(fh, bh)``, ``fw' = roundup(fw, bw)``; read as ``[O'*fh'/bh, bh, fw'/bw,
    bw, din]`` and transposed by ``(1, 3, 0, 2, 4)`` (space-to-batch); read as ``[bh*bw*O', fh'/bh, fw'/bw,
    din]`` and transposed by ``(1, 2, 3, 0)``; then its ``fh'/bh * fw'/bw`` units of ``din*bh*bw*O'`` values
    taken in reverse order (rotate_filter).
    """
    o, fh, fw, din = w.shape
    po = roundup(o, 32) if pad_filters else o
    ph, pw = roundup(fh, bh), roundup(fw, bw)
    padded = np.full((po, ph, pw, din), zero, dtype=w.dtype)
    padded[:o, :fh, :fw, :] = w
    sh, sw = ph // bh, pw // bw
    s2b = padded.reshape(po * sh, bh, sw, bw, din).transpose(1, 3, 0, 2, 4)
    hwio = np.ascontiguousarray(s2b).reshape(bh * bw * po, sh, sw, din).transpose(1, 2, 3, 0)
    units = np.ascontiguousarray(hwio).reshape(sh * sw, din * bh * bw * po)[::-1]
    return np.ascontiguousarray(units).reshape(sh, sw, din, bh * bw * po)


def _i32(v: int) -> int:
    """A uint32_t of the C stored into an int32_t (wraps)."""
    return int(np.array([v & 0xFFFFFFFF], dtype=np.uint32).view(np.int32)[0])


@dataclass(frozen=True)
class CreateTransposeConvNodes(PatternPass):
    """QuantizedTransposeConv2d_8x8p{32,8}to8 (no groups) -> [pad] -> conv chain -> [DepthToSpace_8]."""

    name: str = "create_transpose_conv_nodes"
    requires: ClassVar[OpClass] = OpClass.TRANSPOSECONV
    ordered: ClassVar[bool] = True  # graph_iterator: list order
    roots: ClassVar[frozenset[str]] = frozenset(TRANSPOSE_CONV_OPS)

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        if len(node.inputs) < 13 or len(node.inputs) > 15:
            return False
        consts = [find_node_must_be_Const_from_ref(ed, r) for r in slots(node, *CONST_SLOTS)]
        scaled = has_slot(node, "channel_scale")
        scale_node = find_node_must_be_Const_from_ref(ed, slot(node, "channel_scale")) if scaled else None
        producer = ed.known(slot(node, "data").src_id)
        if producer is None or any(c is None for c in consts) or (scaled and scale_node is None):
            return False
        if has_slot(node, "groups"):
            grp = find_node_must_be_Const_from_ref(ed, slot(node, "groups"))
            if grp is None or int(np.asarray(grp.data).reshape(-1)[0]) != 1:
                return False  # groups > 1 (cases 3-8) are not expanded here
        self._expand(ed, node, producer, consts, scale_node)
        return True

    @staticmethod
    def _expand(ed: GraphEditor, node: Node, producer: Node, consts: list[Node], scale_node: Node | None) -> None:
        w_node, wmin, wmax, pads_node, stride_node, bias_node, bmin, bmax = consts
        bias_op, bias8 = TRANSPOSE_CONV_OPS[node.op]
        data, lo, hi = slots(node, *QTRIPLE)
        in_shape = list(producer.output_defs[data.output_idx].shape)
        in_dtype = producer.output_defs[data.output_idx].dtype
        pads = [int(v) for v in np.asarray(pads_node.data).reshape(-1)[:4]]
        bh, bw = stride_node.output_defs[0].shape[1:3]
        o, fh, fw, din = w_node.output_defs[0].shape
        w_lo, w_hi = (float(np.asarray(c.data).reshape(-1)[0]) for c in (wmin, wmax))
        b_lo, b_hi = (float(np.asarray(c.data).reshape(-1)[0]) for c in (bmin, bmax))
        stride_wxh = bh * bw
        pad_filters = pads_num_filters(bw)
        po = roundup(o, 32) if pad_filters else o
        qzero, bias_qzero8 = quantize_uint8(0.0, w_lo, w_hi), quantize_uint8(0.0, b_lo, b_hi)
        out_shape = list(node.output_defs[0].shape)
        k = po * stride_wxh
        r, s = roundup(fh, bh) // bh, roundup(fw, bw) // bw

        strides = new_internal_node_id(ed)
        do_prepend_const_node(ed, strides, 1, 1, 1, 1, None, "uint8")
        conv_h, conv_w = in_shape[1] - 1 + r, in_shape[2] - 1 + s
        crop_bottom = (in_shape[1] - 1 + r) * bh - pads[0] - out_shape[1]
        crop_right = (in_shape[2] - 1 + s) * bw - pads[2] - out_shape[2]
        pt = pb = pl = pr = 0
        if stride_wxh == 1:
            pt, pb, pl, pr = pads
            conv_h, conv_w = out_shape[1], out_shape[2]
        paddings = [0, 0, r - 1 - pt, r - 1 - pb, s - 1 - pl, s - 1 - pr, 0, 0]
        new_nodes: list[Node] = []
        if any(paddings):
            pad_id = new_internal_node_id(ed)
            do_prepend_const_node(ed, pad_id, 1, 1, 4, 2, [_i32(v) for v in paddings], "int32")
            padded = (in_shape[0], in_shape[1] + 2 * (r - 1) - pt - pb, in_shape[2] + 2 * (s - 1) - pl - pr,
                      in_shape[3])
            pad = ed.make_node("QuantizedPad_8", [data, lo, hi, Ref(pad_id, 0)],
                               [OutputDef(padded, in_dtype), SCALAR, SCALAR])
            new_nodes.append(pad)
            data, lo, hi = Ref(pad.node_id, 0), Ref(pad.node_id, 1), Ref(pad.node_id, 2)

        def spread(values: np.ndarray, fill: float | int, dtype: str) -> np.ndarray:
            out = np.full(k, fill, dtype=np.dtype(np.float32 if dtype == "float" else
                                                 np.uint8 if dtype == "uint8" else np.int32))
            for i in range(stride_wxh):
                out[i * po:i * po + values.size] = values
            return out

        scale_id = None
        if scale_node is not None:
            scale_id = new_internal_node_id(ed)
            do_prepend_const_node(ed, scale_id, 1, 1, 1, k, spread(np.asarray(scale_node.data).reshape(-1), 1.0,
                                                                   "float"), "float")
        bias_dtype = "uint8" if bias8 else "int32"
        bias_id = new_internal_node_id(ed)
        do_prepend_const_node(ed, bias_id, 1, 1, 1, k, spread(np.asarray(bias_node.data).reshape(-1),
                                                              bias_qzero8 if bias8 else 0, bias_dtype), bias_dtype)
        create_const_int32_op(ed, 3)  # the C's split dimension, made whether or not there are groups
        w_id = new_internal_node_id(ed)
        weights = transpose_conv_weights(np.asarray(w_node.data, dtype=np.uint8), qzero, bh, bw, pad_filters)
        do_prepend_const_node(ed, w_id, r, s, din, k, weights, "uint8")

        conv_shape = (out_shape[0], conv_h, conv_w, k)
        acc = [OutputDef(conv_shape, "qint32"), SCALAR, SCALAR]
        conv = ed.make_node("QuantizedConv2d_8x8to32", [data, Ref(w_id, 0), lo, hi,
                                                         *slots(node, "filter_min", "filter_max"), Ref(strides, 0)],
                            acc, NNPad.VALID)
        prev = conv
        new_nodes.append(conv)
        if scale_id is not None:
            prev = ed.make_node("QuantizedChannelScale_32xf", [Ref(conv.node_id, 0), Ref(scale_id, 0),
                                                                Ref(conv.node_id, 1), Ref(conv.node_id, 2)], acc)
            new_nodes.append(prev)
        if bias8:
            prev = ed.make_node("QuantizeDownAndShrinkRange_32to8", [Ref(prev.node_id, i) for i in range(3)],
                                [OutputDef(conv_shape, "quint8"), SCALAR, SCALAR])
            new_nodes.append(prev)
        badd = ed.make_node(bias_op, [Ref(prev.node_id, 0), Ref(bias_id, 0), Ref(prev.node_id, 1),
                                      Ref(prev.node_id, 2), *slots(node, "bias_min", "bias_max")], acc)
        rq_out = [OutputDef(conv_shape, "quint8"), SCALAR, SCALAR]
        last_id = node.node_id if stride_wxh == 1 else None
        if last_id is not None:
            rq_out = [OutputDef(conv_shape, node.output_defs[0].dtype), SCALAR, SCALAR]
        rq_in = [Ref(badd.node_id, i) for i in range(3)] + slots(node, "out_min", "out_max")
        rq = ed.make_node("Requantize_32to8", rq_in, rq_out, NNPad.NA, node.name if last_id is not None else "",
                          node_id=last_id)
        new_nodes += [badd, rq]
        if stride_wxh > 1:
            block_id = new_internal_node_id(ed)
            do_prepend_const_node(ed, block_id, 1, 1, 1, 2, [bh, bw], "int32")
            crops = [pads[0], _i32(crop_bottom), pads[2], _i32(crop_right), o][:5 if pad_filters else 4]
            crops_id = new_internal_node_id(ed)
            do_prepend_const_node(ed, crops_id, 1, 1, 1, len(crops), crops, "int32")
            d2s = ed.make_node("DepthToSpace_8", [Ref(rq.node_id, 0), Ref(block_id, 0), Ref(rq.node_id, 1),
                                                  Ref(rq.node_id, 2), Ref(crops_id, 0)],
                               [node.output_defs[0], SCALAR, SCALAR], NNPad.NA, node.name, node_id=node.node_id)
            new_nodes.append(d2s)
        replace_node_with(ed, None, node, *new_nodes)
