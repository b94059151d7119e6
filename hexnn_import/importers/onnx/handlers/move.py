"""ONNX data movement: Concat, Split, Slice, Pad, Gather, DepthToSpace, SpaceToDepth.

Axis-wise ops work in whatever layout their input has: an ONNX axis maps to
the graph axis that holds it (onnx.layout.graph_axis), so a Concat of two
NHWC tensors along channels joins graph depth, without a transpose. The
ops themselves are nodes.movement's (data moves, ranges pass through).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import OutputDef, Ref
from hexnn_import.importers.nodes.core import dequantize
from hexnn_import.importers.nodes.movement import (MOVE_EMITS, concat, gather, mirror_pad, pad, slice_value,
                                                  space_to_depth, split_equal, strided_slice)
from hexnn_import.importers.onnx.common import check_data, const_input, ints, need_const
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import NHWC, graph_axis, graph_shape, squeeze_like
from hexnn_import.importers.onnx.handlers.binary import operands
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.nodes.values import Value


def _norm(axis: int, r: int) -> int:
    return axis + r if axis < 0 else axis


def float_output(imp: OnnxImporter, name: str) -> bool:
    """``name`` is a float32 graph output that no node reads."""
    return name in imp.tensors.m.outputs and not imp.tensors.consumers(name) and imp.tensors.dtype(name) == "float32"


@onnx_op("Concat", MOVE_EMITS + ("Dequantize", "Concat_f"),
         lambda imp, node: check_data(imp, node, tuple(range(len(node.inputs)))))
def concat_(imp: OnnxImporter, node: ONode) -> None:
    """Concat -> QuantizedConcat_8 along the graph axis holding ONNX ``axis``; inputs onto the output range.

    A Concat that writes a float graph output nothing else reads joins its inputs in float instead
    (Dequantize each, Concat_f): each keeps its own 8-bit grid. A YOLO head joins boxes in pixels (up to
    hundreds) with class scores in [0, 1]; one 8-bit range over both rounds every score to 0."""
    values, perm = operands(imp, node)
    out = node.outputs[0]
    r = len(imp.tensors.shape(out))
    ga = graph_axis(int(node.attr("axis")), r, perm)
    shape = imp.tensors.out_graph_shape(out, perm)
    if float_output(imp, out) and any(v.quantized for v in values):
        parts = [dequantize(imp, v, f"{out}/in{k}") if v.quantized else v.data for k, v in enumerate(values)]
        joined = imp.graph.append("Concat_f", [imp.int_const(ga, f"{out}/dim"), *parts], [OutputDef(shape, "float")],
                                  name=out)
        imp.tensors.finish(out, Value(Ref(joined.node_id, 0), shape, "float"), perm)
        return
    y = concat(imp, values, ga, shape, imp.tensors.act_range(out), out)
    imp.tensors.finish(out, y, perm)


@onnx_op("Split", MOVE_EMITS, lambda imp, node: check_data(imp, node) or need_const(imp, node, (1,)))
def split(imp: OnnxImporter, node: ONode) -> None:
    """Split: QuantizedSplit_8 for equal parts, else one QuantizedSlice_8 per output (sizes from the shapes)."""
    t = imp.tensors.tensor(node.inputs[0])
    r = len(imp.tensors.shape(node.inputs[0]))
    a = _norm(int(node.attr("axis", 0)), r)
    ga = graph_axis(a, r, t.perm)
    sizes = [imp.tensors.shape(o)[a] for o in node.outputs]
    if len(set(sizes)) == 1 and sizes[0] * len(sizes) == imp.tensors.shape(node.inputs[0])[a]:
        parts = split_equal(imp, t.value, ga, len(sizes), node.outputs[0])
    else:
        parts, start = [], 0
        for o, n in zip(node.outputs, sizes):
            begin = [0, 0, 0, 0]
            begin[ga] = start
            size = list(t.value.shape)
            size[ga] = n
            parts.append(slice_value(imp, t.value, begin, size, o))
            start += n
    for o, v in zip(node.outputs, parts):
        if o:
            imp.tensors.finish(o, v, t.perm)


def slice_params(imp: OnnxImporter, node: ONode) -> list[tuple[int, int, int]]:
    """(start, step, size) per ONNX axis, resolved with ONNX's clamping (opset < 10: attributes)."""
    shape = imp.tensors.shape(node.inputs[0])
    r = len(shape)
    if node.since < 10:
        starts, ends = ints(node.attr("starts")), ints(node.attr("ends"))
        axes = ints(node.attr("axes")) if node.attr("axes") is not None else list(range(len(starts)))
        steps = [1] * len(starts)
    else:
        starts, ends = ints(const_input(imp, node, 1)), ints(const_input(imp, node, 2))
        ax = const_input(imp, node, 3)
        axes = ints(ax) if ax is not None else list(range(len(starts)))
        st = const_input(imp, node, 4)
        steps = ints(st) if st is not None else [1] * len(starts)
    out = [(0, 1, n) for n in shape]
    for a, s, e, st in zip(axes, starts, ends, steps):
        a = _norm(a, r)
        dim = shape[a]
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
            size = max(0, -(-(e - s) // st))
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
            size = max(0, -(-(s - e) // -st))
        out[a] = (s, st, size)
    return out


def _check_slice(imp: OnnxImporter, node: ONode) -> str | None:
    """Constant starts / ends / axes / steps, a non-empty slice."""
    why = check_data(imp, node) or need_const(imp, node, (1, 2, 3, 4))
    if why:
        return why
    if any(p[2] == 0 for p in slice_params(imp, node)):
        return "empty slice"
    return None


@onnx_op("Slice", MOVE_EMITS, _check_slice)
def slice_(imp: OnnxImporter, node: ONode) -> None:
    """Slice -> QuantizedSlice_8 (unit steps) or QuantizedStridedSlice_8, on the graph axes."""
    t = imp.tensors.tensor(node.inputs[0])
    r = len(imp.tensors.shape(node.inputs[0]))
    begin, step, size = [0] * 4, [1] * 4, list(t.value.shape)
    for a, (s, st, n) in enumerate(slice_params(imp, node)):
        ga = t.perm.index(a + 4 - r)
        begin[ga], step[ga], size[ga] = s, st, n
    out = node.outputs[0]
    if all(s == 1 for s in step):
        y = slice_value(imp, t.value, begin, size, out)
    else:
        y = strided_slice(imp, t.value, begin, step, size, out)
    imp.tensors.finish(out, y, t.perm)


def pad_params(imp: OnnxImporter, node: ONode) -> tuple[list[int], float, str]:
    """(ONNX pads [begins..., ends...] over every axis, constant value, mode)."""
    r = len(imp.tensors.shape(node.inputs[0]))
    mode = node.attr("mode", "constant") or "constant"
    if node.since < 11:
        return ints(node.attr("pads")), float(node.attr("value", 0.0)), mode
    pads = ints(const_input(imp, node, 1))
    val = const_input(imp, node, 2)
    value = float(np.asarray(val).reshape(-1)[0]) if val is not None and np.asarray(val).size else 0.0
    axes = const_input(imp, node, 3)
    if axes is not None:
        full = [0] * (2 * r)
        ax = [_norm(a, r) for a in ints(axes)]
        for k, a in enumerate(ax):
            full[a], full[a + r] = pads[k], pads[k + len(ax)]
        pads = full
    return pads, value, mode


def _check_pad(imp: OnnxImporter, node: ONode) -> str | None:
    """Constant non-negative pads; mode constant, reflect or edge."""
    why = check_data(imp, node) or need_const(imp, node, (1, 2, 3))
    if why:
        return why
    pads, _, mode = pad_params(imp, node)
    if any(p < 0 for p in pads):
        return "negative pads"
    if mode not in ("constant", "reflect", "edge"):
        return f"mode {mode}"
    return None


@onnx_op("Pad", MOVE_EMITS, _check_pad)
def pad_(imp: OnnxImporter, node: ONode) -> None:
    """Pad: constant (the value's code), reflect (MirrorPad_8 REFLECT), edge (MirrorPad_8 SYMMETRIC by ones)."""
    t = imp.tensors.tensor(node.inputs[0])
    r = len(imp.tensors.shape(node.inputs[0]))
    pads, value, mode = pad_params(imp, node)
    p4 = [(0, 0)] * 4
    for a in range(r):
        p4[t.perm.index(a + 4 - r)] = (pads[a], pads[a + r])
    out = node.outputs[0]
    if mode == "constant":
        y = pad(imp, t.value, p4, value, out)
    elif mode == "reflect":
        y = mirror_pad(imp, t.value, p4, False, out)
    else:  # edge: each symmetric pad of one repeats the edge element once more
        y, k = t.value, 0
        while any(lo > 0 or hi > 0 for lo, hi in p4):
            step = [(min(lo, 1), min(hi, 1)) for lo, hi in p4]
            y = mirror_pad(imp, y, step, True, f"{out}/edge{k}")
            p4 = [(lo - s[0], hi - s[1]) for (lo, hi), s in zip(p4, step)]
            k += 1
    imp.tensors.finish(out, y, t.perm)


def _check_gather(imp: OnnxImporter, node: ONode) -> str | None:
    """Constant indices of rank <= 1, inside the data (ONNX Gather: ``[-s, s-1]`` on an axis of size ``s``;
    onnxruntime and the TFLite importer refuse others, a clamp would be silent)."""
    why = check_data(imp, node) or need_const(imp, node, (1,))
    if why:
        return why
    idx = const_input(imp, node, 1)
    if idx.ndim > 1:
        return "indices of rank > 1"
    shape = imp.tensors.shape(node.inputs[0])
    size = shape[_norm(int(node.attr("axis", 0)), len(shape))] if shape else 0
    if idx.size and (int(idx.min()) < -size or int(idx.max()) >= size):
        return f"constant indices outside {-size}..{size - 1}"
    return None


@onnx_op("Gather", MOVE_EMITS, _check_gather)
def gather_(imp: OnnxImporter, node: ONode) -> None:
    """Gather with constant indices: a strided slice when they step evenly, else Gather_8 along the graph axis."""
    name, out = node.inputs[0], node.outputs[0]
    t = imp.tensors.tensor(name)
    shape = imp.tensors.shape(name)
    r = len(shape)
    a = _norm(int(node.attr("axis", 0)), r)
    idx = const_input(imp, node, 1).astype(np.int64)
    flat = np.where(idx < 0, idx + shape[a], idx).reshape(-1)
    ga = t.perm.index(a + 4 - r)
    mid = list(shape)
    mid[a] = flat.size
    gshape = graph_shape(tuple(mid), t.perm)
    steps = np.diff(flat)
    if flat.size == 1 or (np.all(steps == steps[0]) and steps[0] > 0):
        begin, step, size = [0] * 4, [1] * 4, list(gshape)
        begin[ga], step[ga] = int(flat[0]), int(steps[0]) if flat.size > 1 else 1
        y = strided_slice(imp, t.value, begin, step, size, out)
    else:
        index = imp.int_const(flat.astype(np.int32), f"{out}/indices")
        y = gather(imp, t.value, index, (1, 1, 1, flat.size), 1, ga, gshape, out)
    perm = t.perm if idx.ndim == 1 else squeeze_like(tuple(mid), t.perm, imp.tensors.shape(out))
    imp.tensors.finish(out, y, perm)  # type: ignore[arg-type]


def _check_d2s(imp: OnnxImporter, node: ONode) -> str | None:
    """A rank-4 input."""
    why = check_data(imp, node)
    if why:
        return why
    return None if len(imp.tensors.shape(node.inputs[0])) == 4 else "input of rank other than 4"


@onnx_op(("DepthToSpace", "SpaceToDepth"), MOVE_EMITS, _check_d2s)
def depth_space(imp: OnnxImporter, node: ONode) -> None:
    """DepthToSpace (DCR; CRD by a channel Gather_8 first) / SpaceToDepth on NHWC data."""
    out = node.outputs[0]
    b = int(node.attr("blocksize"))
    x = imp.tensors.value(node.inputs[0], NHWC)
    crd = (node.attr("mode", "DCR") or "DCR") == "CRD"
    if node.op_type == "SpaceToDepth":
        y = space_to_depth(imp, x, b, out)
        if crd:  # CRD channel c*b*b + i*b + j holds DCR channel (i*b + j)*C + c
            c = x.shape[3]
            order = np.arange(c * b * b).reshape(b, b, c).transpose(2, 0, 1).reshape(-1)
            index = imp.int_const(order.astype(np.int32), f"{out}/crd_order")
            y = gather(imp, y, index, (1, 1, 1, order.size), 1, 3, y.shape, f"{out}/crd")
        imp.tensors.finish(out, y, NHWC)
        return
    if crd:
        c = x.shape[3] // (b * b)
        order = np.arange(c * b * b).reshape(c, b, b).transpose(1, 2, 0).reshape(-1)  # DCR slot -> CRD channel
        index = imp.int_const(order.astype(np.int32), f"{out}/crd_order")
        x = gather(imp, x, index, (1, 1, 1, order.size), 1, 3, x.shape, f"{out}/crd")
    imp.tensors.finish(out, space_to_depth(imp, x, b, out, inverse=True), NHWC)

