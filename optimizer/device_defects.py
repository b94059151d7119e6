"""Convert-time warnings where a prepared node reaches a known defect of hexagon_nn's device code (issue 36).

The engine computes what the device computes where the device is deterministic, its defects included; a user
should still learn that the DSP's answer there is off. :func:`device_defect_notes` looks at the prepared graph
(constant inputs only) and, for each node that reaches such a defect, appends one note to
``graph.meta["notes"]`` (the convert summary prints notes; ``--json`` keeps them) and issues one
:class:`DeviceDefectWarning` (the command line prints it as one ``warning:`` line). The defects are traced in
docs/verification.md ("The device-code cases"):

- DepthwiseSupernode_*_d32 on ``dwconv2dbbb_s1_7xN_asm`` / ``dwconv2dbbb_s2_5xN_asm`` (filter width 7 and
  stride width 1, or 5 and 2) with channel scales over more than 32 channels that do not repeat every 32
  channels: every depth slice after the first takes the first slice's requantization scales
  (:func:`hexnn_import.ops.kernels.dwise_scaled.scales_slice_defect`; the engine follows it). The importers
  split every such chain with a Const output range or ending in QuantizeDownAndShrinkRange_32to8 (a float
  model's) into groups of <= 32 channels before prepare (:mod:`hexnn_import.optimizer.dwise_split`), so a
  converted model reaches it only where the chain could not be split (a Requantize_32to8 with a free end, a
  graph file saved before the split): those nodes keep the note.

- QuantizedMean_8 (op_reducing_mean.c ``set_output_scaling_for_mean``) caps its multiplier
  ``in_step / (out_step * n)`` at 0.99999: where the ranges (known from Consts, :func:`.ranges.static_range`)
  make it larger, by enough to move an output code at the far end of the range by half a code or more, every
  output is pulled towards the zero code (:func:`hexnn_import.ops.nnlib_reduce_device.mean_cap_shortfall`; the
  engine follows the cap).

- QuantizedResizeBilinear_8 (flat; prepare keeps it flat at depth 1-2 and a power-of-2 output width) with
  align_corners: to an output side of 1, ``resizebilinear_general``'s scale ``(in - 1) / (out - 1)`` is inf or NaN
  and every code is 255 (a note; the engine reproduces it); on the ``resizebilinear_hvx`` path (output width 4x,
  ``(w_in - 1) % 3 == 0``) one output row from several input rows crashes the device (a NULL row pointer), so
  prepare refuses that node at convert time (:func:`hexnn_import.ops.nnlib_resize_flat.hvx_refusal`).

- Supernode_u16x16p32to16_d32 on an input whose byte planes ``supernode_u16b_check`` misaligns (op_supernode_16b.c
  l. 3830-3874, 1008-1019: the odd plane ``in_oedelta`` bytes after the even one, sized at check without the input's
  right pad and kept at execute, not a multiple of 128): the HVX kernels' aligned loads read the odd plane 64 bytes
  off and the outputs are wrong (:func:`hexnn_import.importers.nodes.int16_narrow.u16_planes_misaligned`; the
  engine keeps the intended answer). The int16x8 importer widens such a layer's input with zero columns
  (:mod:`hexnn_import.importers.nodes.int16_narrow`), so a converted model reaches it only through a graph file
  saved before that or a 16-bit transposed conv of its own: those nodes keep the note.

- QuantizedMatMul_8x8to32 with a Const B of K <= 16 rows and N > 32 columns (and A of one row, or K = 16):
  ``matmul_asm`` steps through the copy of B ``matmul_check_ref`` packed by K padded to 16 rows instead of 32, so
  outputs from 32 on are 0 or other columns' sums (:func:`hexnn_import.ops.kernels.conv.asm_block_defect`; the
  engine follows it). The importers send those shapes to QuantizedMatMul_8x8to32_ref.

- DepthwiseSupernode_*_d32 whose output depth is not its input depth (a depth multiplier > 1, which prepare.c
  keeps in the node: ``nodeinfo->depth_multiplier``): op_dwise_snode_8bit.c's kernels walk the output channels
  one to one over the input's and log "needs shuffling", so they read channels the input does not have: every
  such node is wrong on a DSP, or its execute fails (not deterministic: the engine keeps the intended answer).
  prepare.c fuses only a multiplier-1 chain itself (dwconv_extrachecks), but the importers fuse a quantized
  layer's declared chain; they emit every such layer with a multiplier > 1 as a channel replication and a
  multiplier-1 layer (:mod:`hexnn_import.importers.nodes.dwise_mult`), so a converted model reaches it only
  through a graph file saved before that or a DepthwiseSupernode of its own: those nodes get the note.

- QuantizedMaxPool_8_d32 on a depthwise layer's output whose d32 left padding is not 4 (op_maxpool_d32.c asm
  slices, padzap_d32.S): moved windows or wrongly zapped columns (:mod:`hexnn_import.optimizer.maxpool_left`,
  :func:`~hexnn_import.optimizer.maxpool_left.left_pool_note`). The importers split such a pool into a rows and
  a columns pool, which the device computes right; SAME on a left padding of 0 or 5-7 keeps the note, and a
  window needing more left columns than that padding has is refused (the device fails it).

The other traced device defects are not reachable from a constant-shaped check: Concat's offset wrap needs
run-time ranges 128x apart, ResizeBilinear's 4x path reads past the row only where ``(w_in - 1) * depth`` is a
multiple of 128 (the next row's first pixel, which the engine follows with a run-time warning; on the last row
bytes past the tensor, where it keeps its answer).
"""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from hexnn_import.errors import DeviceDefectWarning, OpError
from hexnn_import.graph import Graph, Node
from hexnn_import.importers.nodes.int16_narrow import u16_planes_misaligned
from hexnn_import.ops.kernels.conv import asm_block_defect
from hexnn_import.ops.kernels.dwise_scaled import scales_slice_defect
from hexnn_import.ops.nnlib_f32 import adjust_minmax_for_zero
from hexnn_import.ops.nnlib_reduce_device import mean_cap_shortfall, mean_ratio
from hexnn_import.ops.nnlib_resize_flat import device_path, hvx_refusal
from hexnn_import.ops.quant import adjust_range
from hexnn_import.optimizer.maxpool_left import left_pool_note
from hexnn_import.optimizer.ranges import static_range

DWISE_D32 = ("DepthwiseSupernode_8x8p32to8_d32", "DepthwiseSupernode_8x8p8to8_d32")
U16_SUPERNODE = "Supernode_u16x16p32to16_d32"


def _const(graph: Graph, node: Node, idx: int) -> np.ndarray | None:
    """The data of input ``idx`` where a Const gives it, else None."""
    if idx >= len(node.inputs):
        return None
    src = graph.find_node(node.inputs[idx].src_id)
    return None if src is None or not src.is_const else src.data


def _dwise_note(graph: Graph, node: Node) -> str | None:
    """The note for a depthwise supernode that reaches the channel-scales slice defect, or None."""
    w, stride, k = _const(graph, node, 1), _const(graph, node, 6), _const(graph, node, 12)
    if w is None or k is None or np.ndim(w) != 4:
        return None
    k32 = np.asarray(k, np.float32).reshape(-1)
    dout = int(w.shape[2]) * int(w.shape[3])
    if k32.size != dout:
        return None
    stride_w = int(((1,) * (4 - np.ndim(stride)) + tuple(np.shape(stride)))[2]) if stride is not None else 1
    if not scales_slice_defect(w.shape, stride_w, k32):
        return None
    kern = "dwconv2dbbb_s1_7xN_asm" if int(w.shape[1]) == 7 else "dwconv2dbbb_s2_5xN_asm"
    return (f"{node.label}: device defect: hexagon_nn's {kern} requantizes channels 32-{dout - 1} with the "
            f"channel scales of channels 0-31, so its output there is off (the engine reproduces the device)")


def _dmul_note(graph: Graph, node: Node) -> str | None:
    """The note for a depthwise supernode whose output depth is not its input depth: a Const filter
    ``[fh, fw, din, m]`` with a depth multiplier m > 1 (prepare.c keeps it: ``nodeinfo->depth_multiplier``), or
    None."""
    w = _const(graph, node, 1)
    if w is None or np.ndim(w) != 4 or int(w.shape[3]) == 1:
        return None
    din, m = int(w.shape[2]), int(w.shape[3])
    return (f"{node.label}: device defect: hexagon_nn's {node.op} (op_dwise_snode_8bit.c) computes a depth multiplier "
            f"of 1 only: with {din} input and {din * m} output channels (multiplier {m}) its kernels walk the output "
            f"channels one to one over the input's ('needs shuffling'): the device's outputs are wrong, or its "
            f"execute fails (the engine gives the intended answer; the importers emit such a layer as a channel "
            f"replication and a multiplier-1 layer)")


def _mean_note(graph: Graph, node: Node) -> str | None:
    """The note for a QuantizedMean_8 whose multiplier reaches the 0.99999 cap, or None (a range or the axes
    not known from Consts, or the cap moves no code by half)."""
    axes, src = _const(graph, node, 3), graph.find_node(node.inputs[0].src_id)
    rng = static_range(graph, node.inputs[1], node.inputs[2]) if len(node.inputs) > 2 else None
    if axes is None or rng is None or src is None or not src.output_defs:
        return None
    shape = src.output_defs[node.inputs[0].output_idx].shape
    n = int(np.prod([shape[int(a) % 4] for a in set(np.asarray(axes).reshape(-1).tolist())]))
    _, in_lo, in_hi = adjust_minmax_for_zero(*rng)
    out = (float(in_lo), float(in_hi))
    if len(node.inputs) > 4:
        lo, hi = _const(graph, node, 4), _const(graph, node, 5) if len(node.inputs) > 5 else np.float32(in_hi)
        if lo is None or hi is None:
            return None
        out = adjust_range(float(np.reshape(lo, -1)[0]), float(np.reshape(hi, -1)[0]))
    ratio = mean_ratio(n, in_lo, in_hi, np.float32(out[0]), np.float32(out[1]))
    short = mean_cap_shortfall(ratio)
    if short < 0.5:
        return None
    return (f"{node.label}: device defect: hexagon_nn's QuantizedMean_8 caps its multiplier in_step / (out_step * n) "
            f"at 0.99999 (here {float(ratio):.6g}, n = {n}): outputs are pulled towards the zero code, by "
            f"{short:.3g} codes at the range's ends (the engine reproduces the device)")


def _matmul_note(graph: Graph, node: Node) -> str | None:
    """The note for a QuantizedMatMul_8x8to32 whose Const B's shape reaches ``matmul_asm``'s block stride
    defect (A's rows from its producer's shape; where that is unknown, K <= 16 and N > 32 alone), or None."""
    b, src = _const(graph, node, 1), graph.find_node(node.inputs[0].src_id)
    if b is None or np.ndim(b) != 4 or int(np.shape(b)[2]) < 1:
        return None
    k, n = int(np.shape(b)[2]), int(np.shape(b)[3])
    shape = src.output_defs[node.inputs[0].output_idx].shape if src is not None and src.output_defs else None
    m = int(np.prod(shape)) // k if shape else 1
    if not asm_block_defect(m, k, n):
        return None
    return (f"{node.label}: device defect: hexagon_nn's QuantizedMatMul_8x8to32 with K = {k} <= 16 and N = {n} > 32 "
            f"reads its packed B with the wrong block stride (op_matmul.c matmul_asm): outputs from 32 on are 0 or "
            f"other columns' sums (the engine reproduces the device)")


def _resize_note(graph: Graph, node: Node) -> str | None:
    """The note for a flat align-corners QuantizedResizeBilinear_8 to an output side of 1, or None; refuses the
    node (OpError) where the device's resizebilinear_hvx path crashes (module doc)."""
    size, align = _const(graph, node, 1), _const(graph, node, 4)
    src = graph.find_node(node.inputs[0].src_id)
    if size is None or align is None or src is None or not src.output_defs:
        return None
    raw = np.ascontiguousarray(np.asarray(align, np.float32) if np.asarray(align).dtype.kind == "f" else align)
    if not (raw.view(np.uint8)[:4].any() if raw.nbytes >= 4 else raw.any()):
        return None
    shape = tuple(src.output_defs[node.inputs[0].output_idx].shape)
    h_out, w_out = (int(v) for v in np.asarray(size).reshape(-1)[:2])
    if len(shape) != 4 or (h_out, w_out) == shape[1:3]:
        return None
    if device_path(shape, h_out, w_out, True) == "hvx" and (why := hvx_refusal(shape, h_out)) is not None:
        raise OpError(node.label, node.op, f"align_corners {list(shape)} -> [{h_out}, {w_out}]: hexagon_nn "
                                           f"cannot run it: {why}")
    if min(h_out, w_out) != 1:
        return None
    return (f"{node.label}: device defect: hexagon_nn's QuantizedResizeBilinear_8 with align_corners to an output "
            f"size of [{h_out}, {w_out}] divides by zero (resizebilinear_general): every output code is 255 "
            f"(the engine reproduces the device)")


def _u16_planes_note(graph: Graph, node: Node) -> str | None:
    """The note for a Supernode_u16x16p32to16_d32 whose input byte planes the device misaligns, or None."""
    src = graph.find_node(node.inputs[0].src_id)
    if src is None or src.is_const or not src.output_defs:
        return None
    shape = tuple(int(v) for v in src.output_defs[node.inputs[0].output_idx].shape)
    if len(shape) != 4 or not u16_planes_misaligned(*shape):
        return None
    return (f"{node.label}: device defect: hexagon_nn's Supernode_u16x16p32to16_d32 sizes the input's byte planes at "
            f"check without its right pad (op_supernode_16b.c supernode_u16b_check l. 3830-3874, kept by "
            f"supernode_split_input l. 1008-1019): on {list(shape)} the odd plane is not vector-aligned and the "
            f"device's outputs are wrong (the engine gives the intended answer)")


#: op -> the rules that may note it, first match wins (module doc)
NOTE_RULES: dict[str, tuple[Callable[[Graph, Node], str | None], ...]] = {
    **{op: (_dmul_note, _dwise_note) for op in DWISE_D32},
    "QuantizedMean_8": (_mean_note,),
    "QuantizedResizeBilinear_8": (_resize_note,),
    U16_SUPERNODE: (_u16_planes_note,),
    "QuantizedMatMul_8x8to32": (_matmul_note,),
    "QuantizedMaxPool_8_d32": (left_pool_note,),
}


def device_defect_notes(graph: Graph) -> list[str]:
    """Append a note and issue a :class:`DeviceDefectWarning` for each node of ``graph`` that reaches a
    device defect (module doc); returns the new notes."""
    notes = [n for node in graph.nodes
             if (n := next((r for rule in NOTE_RULES.get(node.op, ()) if (r := rule(graph, node))), None))]
    old = [n for n in graph.meta.get("notes", []) if n not in notes]  # type: ignore[attr-defined]
    if notes:
        graph.meta["notes"] = [*old, *notes]
    for n in notes:
        warnings.warn(n, DeviceDefectWarning, stacklevel=2)
    return notes
