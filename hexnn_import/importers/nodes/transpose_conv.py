"""Transposed convolution emitter shared by the importers (QuantizedTransposeConv2d_8x8p32to8).

The op (hexagon_nn_ops.txt, ops/kernels/conv_variants.py) computes the
scatter form of TF ``conv2d_transpose`` with weights ``[O, H, W, I]``, a full
output ``(in - 1) * stride + f`` cropped by explicit pads, a qint32 bias and
the Supernode output stage of SEMANTICS §5. It serves both range cases:

- fixed input and output ranges: the bias is qint32 on a power-of-two
  fraction of the product step (``emit.bias_qint32``) and the output range
  is the source model's;
- run-time ranges (float model without calibration): the op reads its input
  range at run time, the bias gets its own symmetric qint32 range
  (``emit.bias_dynamic``, converted to accumulator units by the op), and the
  output ends are ``-inf`` / ``+inf``: the op's auto range (§5), which
  widens persistently to cover the data - the range is computed from the
  data, as QuantizeDownAndShrinkRange_32to8 does for the plain conv chain.

Two adaptations, both exact:

- an output taller / wider than the full output (a source pad that crops
  less than nothing: TFLite's ``VALID`` with ``output_shape`` beyond
  ``(in - 1) * stride + f``) is reached by padding the *input* with rows /
  columns of its zero code, which contribute exactly 0 to every sum;
- per-channel weights whose channel scale ``k = s[c] / max(s)`` is at most
  1/32 (the op accepts ``(1/32, 1]``) are split into channel groups, each
  with its own weight range (the group's largest scale) and scales within
  the bound; the groups' outputs, on the same output range, are joined by
  QuantizedConcat_8 and put back in channel order by one Gather_8 on depth.

Grouped layers (ONNX ConvTranspose ``group`` > 1: weights ``[O/group, H, W, I]``, the op's 14th input)
take one node with the channel scales always given; the caller brings their scales within the bound
(a channel group cannot split a conv group).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, bias_dynamic, bias_qint32, node3
from hexnn_import.importers.nodes.movement import concat, gather, pad
from hexnn_import.importers.nodes.values import Value

#: The op's channel-scale bound: each k in (1/32, 1] (op text).
K_LOW = 1.0 / 32.0

TRANSPOSE_CONV_EMITS = ("QuantizedTransposeConv2d_8x8p32to8", "QuantizedPad_8", "QuantizedPad_V2_8",
                        "QuantizedConcat_8", "Gather_8", "QuantizedReshape", "Requantize_8to8")


def transpose_conv_pads(in_hw: tuple[int, int], f_hw: tuple[int, int], stride: tuple[int, int],
                        out_hw: tuple[int, int], same: bool) -> tuple[int, int, int, int]:
    """``(top, bottom, left, right)`` crops of the full output, TFLite's rule (bottom / right may be < 0).

    TFLite pads as the forward convolution from the output would:
    ``o = ceil(out / s)`` (SAME) or ``(out + s - f) // s`` (VALID),
    ``total = max(0, (o - 1) * s + f - out)``, ``before = total // 2``; the
    rest of the full output ``(in - 1) * s + f`` beyond ``before + out`` is cropped after.
    """
    crops = []
    for n_in, f, s, n_out in zip(in_hw, f_hw, stride, out_hw):
        o = -(-n_out // s) if same else (n_out + s - f) // s
        before = max(0, (o - 1) * s + f - n_out) // 2
        crops += [before, (n_in - 1) * s + f - before - n_out]
    return crops[0], crops[1], crops[2], crops[3]


def channel_groups(k: np.ndarray | None, n_out: int) -> list[np.ndarray]:
    """Output channels split so that within a group every ``k / max(k of group)`` exceeds 1/32."""
    if k is None or float(np.min(k)) > K_LOW:
        return [np.arange(n_out)]
    order = np.argsort(-k, kind="stable")
    groups: list[list[int]] = []
    for c in order:
        if groups and k[c] > k[groups[-1][0]] * K_LOW:
            groups[-1].append(int(c))
        else:
            groups.append([int(c)])
    return [np.sort(np.asarray(g)) for g in groups]


def _one_node(b: GraphBuilder, name: str, x: Value, w: np.ndarray, w_range: Range, k: np.ndarray | None,
              bias_real: np.ndarray, out_range: Range | None, stride: tuple[int, int],
              crops: tuple[int, int, int, int], out_shape: tuple[int, int, int, int], group: int = 1) -> Value:
    g = b.graph
    refs = [x.data, g.const_ref(w, f"{name}/weights"), x.mn, x.mx, *b.range_consts(w_range, f"{name}/weights"),
            g.const_ref(np.asarray(crops, np.int32).reshape(1, 1, 2, 2), f"{name}/pads"),
            g.shape_ref((1, stride[0], stride[1], 1), f"{name}/stride")]
    if x.range is not None:
        prod = (x.range[1] - x.range[0]) / 255.0 * (w_range[1] - w_range[0]) / 255.0
        refs += bias_qint32(b, bias_real, prod, f"{name}/bias")
    else:
        refs += bias_dynamic(b, bias_real, f"{name}/bias")
    refs += list(b.range_consts(out_range if out_range is not None else (-np.inf, np.inf), f"{name}/out"))
    if group != 1 or (k is not None and float(np.min(k)) < 1.0):
        kk = np.ones(out_shape[3]) if k is None else k
        refs.append(g.const_ref(kk.astype(np.float32).reshape(1, 1, 1, -1), f"{name}/channel_scale"))
    if group != 1:
        refs.append(b.int_const(group, f"{name}/groups"))
    return node3(b, "QuantizedTransposeConv2d_8x8p32to8", refs, out_shape, name, out_range)  # type: ignore[arg-type]


def emit_transpose_conv(b: GraphBuilder, name: str, x: Value, w: np.ndarray, w_range: Range, k: np.ndarray | None,
                        bias_real: np.ndarray, out_range: Range | None, stride: tuple[int, int],
                        crops: tuple[int, int, int, int], out_shape: tuple[int, int, int, int],
                        group: int = 1) -> Value:
    """A transposed convolution onto quint8 (module doc).

    ``w``: quint8 codes ``[O, H, W, I]`` (grouped: ``[O/group, H, W, I]``) on ``w_range`` with channel
    scales ``k`` (None when per-tensor; grouped: one per output channel, each in (1/32, 1]);
    ``bias_real``: real bias per output channel; ``crops``: (top, bottom, left, right) of the full output,
    from :func:`transpose_conv_pads` or the ONNX importer's ``transpose_pads`` (bottom / right may be
    negative); ``out_range`` None: run-time (auto) range.
    """
    top, bottom, left, right = crops
    sh, sw = stride
    extra_h = -(-max(0, -bottom) // sh)
    extra_w = -(-max(0, -right) // sw)
    if extra_h or extra_w:
        x = pad(b, x, [(0, 0), (0, extra_h), (0, extra_w), (0, 0)], 0.0, f"{name}/extend")
        bottom += extra_h * sh
        right += extra_w * sw
    crops = (top, bottom, left, right)
    groups = channel_groups(k, w.shape[0]) if group == 1 else [np.arange(out_shape[3])]
    if len(groups) == 1:
        return _one_node(b, name, x, w, w_range, k, bias_real, out_range, stride, crops, out_shape, group)
    assert k is not None
    parts = []
    for i, ch in enumerate(groups):
        kg = float(k[ch].max())
        g_range = (w_range[0] * kg, w_range[1] * kg)
        parts.append(_one_node(b, f"{name}/group{i}", x, np.ascontiguousarray(w[ch]), g_range, k[ch] / kg,
                               bias_real[ch], out_range, stride, crops, out_shape[:3] + (len(ch),)))
    joined = concat(b, parts, 3, out_shape, out_range, f"{name}/join")
    order = np.concatenate(groups)
    inverse = np.argsort(order).astype(np.int32)
    idx = b.int_const(inverse, f"{name}/channel_order")
    return gather(b, joined, idx, (1, 1, 1, len(inverse)), 1, 3, out_shape, f"{name}/reorder")
