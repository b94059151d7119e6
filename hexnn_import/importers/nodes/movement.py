"""Data-movement emitters shared by the importers: concat, split, slices, pads, transpose, tile, gather.

Each function takes a :class:`~hexnn_import.importers.nodes.builder.GraphBuilder`
and quint8 :class:`Value`s in the 4-D ``[b, h, w, d]`` layout, appends the
hexagon_nn op (SEMANTICS §6: data moves, the range passes through) and
returns the result's Value. Axes are 4-D axes (0..3); callers convert their
format's axes (TFLite: ``axis + 4 - rank``, ONNX after NCHW -> NHWC).
Parameters are Python ints; they become int32 Consts here.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.graph import NNPad, OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, node3, requantize_to, reshape_value
from hexnn_import.importers.nodes.values import Value
from hexnn_import.ops.quant import round_away, step_zero

Shape4 = tuple[int, int, int, int]
Pads4 = list[tuple[int, int]]  # (before, after) for b, h, w, d

MOVE_EMITS = ("QuantizedConcat_8", "QuantizedSplit_8", "QuantizedSlice_8", "QuantizedStridedSlice_8",
              "QuantizedPad_8", "QuantizedPad_V2_8", "MirrorPad_8", "Transpose_8", "QuantizedTile_8", "Gather_8",
              "SpaceToDepth_8", "DepthToSpace_8", "SpaceToBatchND_8", "BatchToSpaceND_8", "QuantizedReshape",
              "Requantize_8to8")


def _prod(vals: tuple[int, ...] | list[int]) -> int:
    return int(np.prod(vals, dtype=np.int64)) if len(vals) else 1


def merged_range(values: list[Value]) -> Range | None:
    """QuantizedConcat_8's output range ``[min(0, min of mins), max of maxes]`` when every input range is fixed."""
    if any(v.range is None for v in values):
        return None
    return min(0.0, min(v.range[0] for v in values)), max(v.range[1] for v in values)  # type: ignore[index]


def concat(b: GraphBuilder, values: list[Value], axis: int, out_shape: Shape4, out_range: Range | None,
           name: str) -> Value:
    """Concatenate along 4-D ``axis`` with QuantizedConcat_8 (SEMANTICS §6).

    With a fixed ``out_range`` every input is first requantized onto it
    (Requantize_8to8 where its range differs), so the concat's merged range
    is ``out_range`` and it copies codes. With ``out_range`` None the op
    merges the input ranges itself. QuantizedConcat_8 only joins depth, so
    another axis is joined as depth of ``[1, 1, outer, inner]`` views
    (outer = product of the dims before ``axis``, the same for all inputs;
    inner = the rest), which is the same row-major data.
    """
    if out_range is not None:
        values = [requantize_to(b, v, out_range, f"{name}/input{i}") for i, v in enumerate(values)]
    if len(values) == 1:
        return reshape_value(b, values[0], out_shape, f"{name}/reshape")
    if axis == 3:
        parts, shape = values, out_shape
    else:
        outer = _prod(out_shape[:axis])
        parts = [reshape_value(b, v, (1, 1, outer, _prod(v.shape[axis:])), f"{name}/flat{i}")
                 for i, v in enumerate(values)]
        shape = (1, 1, outer, sum(p.shape[3] for p in parts))
    refs = [b.int_const(3, f"{name}/dim")] + [p.data for p in parts]
    refs += [p.mn for p in parts] + [p.mx for p in parts]  # type: ignore[misc]
    y = node3(b, "QuantizedConcat_8", refs, shape, name, merged_range(parts))
    return reshape_value(b, y, out_shape, f"{name}/reshape")


def split_equal(b: GraphBuilder, v: Value, axis: int, n: int, name: str) -> list[Value]:
    """QuantizedSplit_8: ``n`` equal parts along 4-D ``axis`` (outputs: parts, then min, max)."""
    part = list(v.shape)
    part[axis] //= n
    shape = tuple(part)
    defs = [OutputDef(shape, "quint8") for _ in range(n)] + [OutputDef.scalar(), OutputDef.scalar()]  # type: ignore[arg-type]
    node = b.graph.append("QuantizedSplit_8", [b.int_const(axis, f"{name}/dim"), *v.triple()], defs, name=name)
    nid = node.node_id
    return [Value(Ref(nid, i), shape, "quint8", Ref(nid, n), Ref(nid, n + 1), v.range)  # type: ignore[arg-type]
            for i in range(n)]


def slice_value(b: GraphBuilder, v: Value, begin: list[int], size: list[int], name: str) -> Value:
    """QuantizedSlice_8: the block ``[begin, begin + size)`` (4 values each, sizes >= 1); no node if whole."""
    if list(begin) == [0, 0, 0, 0] and list(size) == list(v.shape):
        return v
    refs = [v.data, b.int_const(list(begin), f"{name}/begin"), b.int_const(list(size), f"{name}/size"), v.mn, v.mx]
    return node3(b, "QuantizedSlice_8", refs, tuple(size), name, v.range)  # type: ignore[arg-type]


def strided_slice(b: GraphBuilder, v: Value, begin: list[int], step: list[int], size: list[int],
                  name: str) -> Value:
    """QuantizedStridedSlice_8 sampling ``begin + i * step``, ``i < size`` on each of the 4 dims.

    Indices must already be literal (resolved, non-negative) positions.
    ``end`` is ``begin + size * step``; a reverse slice reaching index 0 would
    need ``end = -1``, which nnlib's op_stridedslice.c reads as "count from
    the end" (TF style), so that dimension gets its end_mask bit instead
    (bits 0..3 = b, h, w, d: stop before index 0). No node when the slice
    takes every element in order.
    """
    if all(bg == 0 and st == 1 and sz == n for bg, st, sz, n in zip(begin, step, size, v.shape)):
        return v
    end = [bg + sz * st for bg, sz, st in zip(begin, size, step)]
    end_mask = sum(1 << i for i, e in enumerate(end) if e < 0)
    end = [max(e, 0) for e in end]
    zero = b.int_const(0, f"{name}/mask")
    refs = [v.data, b.int_const(list(begin), f"{name}/begin"), b.int_const(end, f"{name}/end"),
            b.int_const(list(step), f"{name}/step"), zero, b.int_const(end_mask, f"{name}/end_mask"), zero,
            v.mn, v.mx]
    return node3(b, "QuantizedStridedSlice_8", refs, tuple(size), name, v.range)  # type: ignore[arg-type]


def _pads_const(b: GraphBuilder, pads: Pads4, name: str) -> Ref:
    """The ``[1,1,4,2]`` int32 padding tensor of the pad ops (rows b, h, w, d)."""
    return b.graph.const_ref(np.asarray(pads, dtype=np.int32).reshape(1, 1, 4, 2), name)


def _padded(shape: Shape4, pads: Pads4) -> Shape4:
    return tuple(n + lo + hi for n, (lo, hi) in zip(shape, pads))  # type: ignore[return-value]


def pad_code(rng: Range, value: float) -> int:
    """The quint8 code of ``value`` in ``rng`` (round half away, saturated to 0..255; ±inf -> 0 / 255)."""
    if math.isinf(value):
        return 0 if value < 0 else 255
    step, zero = step_zero(*rng)
    return int(min(255, max(0, zero + round_away(value / step))))


def pad(b: GraphBuilder, v: Value, pads: Pads4, value: float, name: str) -> Value:
    """Constant padding with real ``value`` (SEMANTICS §6: the pad code is the value's code).

    A fixed range gets QuantizedPad_V2_8 with the code computed here
    (:func:`pad_code`, saturated, as a quantized source model saturates its
    constant); a run-time range gets QuantizedPad_8 with the float value,
    quantized by the op on the data's range of the moment (a value more than
    two codes outside that range is then a run-time error of the op).
    """
    if all(p == (0, 0) for p in pads):
        return v
    shape = _padded(v.shape, pads)
    if v.range is not None:
        code = b.graph.const_ref(np.full((1, 1, 1, 1), pad_code(v.range, value), np.uint8), f"{name}/pad_code")
        refs = v.triple() + [_pads_const(b, pads, f"{name}/pads"), code]
        return node3(b, "QuantizedPad_V2_8", refs, shape, name, v.range)
    refs = v.triple() + [_pads_const(b, pads, f"{name}/pads"), b.float_const(value, f"{name}/pad_value")]
    return node3(b, "QuantizedPad_8", refs, shape, name, None)


def mirror_pad(b: GraphBuilder, v: Value, pads: Pads4, symmetric: bool, name: str) -> Value:
    """MirrorPad_8 (NN_PAD_MIRROR_REFLECT / NN_PAD_MIRROR_SYMMETRIC on the node).

    nnlib's MirrorPad_8 (op_mirrorpad.c) needs every pad smaller than its dimension, also in symmetric
    mode, where TFLite allows a pad equal to it: such a dimension is padded by concatenating the reversed
    slices instead (strided slices with step -1, codes copied; one range, so the concat copies too).
    """
    if all(p == (0, 0) for p in pads):
        return v
    if symmetric and any(max(pr) >= n for n, pr in zip(v.shape, pads)):
        for axis, (n, (lo, hi)) in enumerate(zip(v.shape, pads)):
            if max(lo, hi) < n or (lo, hi) == (0, 0):
                continue
            parts = []
            for k, (first, size) in enumerate(((lo - 1, lo), (-1, 0), (n - 1, hi))):
                if k == 1:
                    parts.append(v)
                elif size:
                    begin, step, sizes = [0] * 4, [1] * 4, list(v.shape)
                    begin[axis], step[axis], sizes[axis] = first, -1, size
                    parts.append(strided_slice(b, v, begin, step, sizes, f"{name}/mirror{axis}_{k}"))
            shape = list(v.shape)
            shape[axis] += lo + hi
            v = concat(b, parts, axis, tuple(shape), v.range, f"{name}/mirror{axis}")  # type: ignore[arg-type]
            pads = tuple((0, 0) if i == axis else pr for i, pr in enumerate(pads))  # type: ignore[assignment]
        return mirror_pad(b, v, pads, symmetric, name)
    mode = NNPad.MIRROR_SYMMETRIC if symmetric else NNPad.MIRROR_REFLECT
    refs = [v.data, _pads_const(b, pads, f"{name}/pads"), v.mn, v.mx]
    return node3(b, "MirrorPad_8", refs, _padded(v.shape, pads), name, v.range, mode)  # type: ignore[list-item]


def transpose(b: GraphBuilder, v: Value, perm: list[int], name: str) -> Value:
    """Transpose_8 with a 4-axis permutation (output axis i = input axis ``perm[i]``); no node if identity."""
    if list(perm) == [0, 1, 2, 3]:
        return v
    shape = tuple(v.shape[p] for p in perm)
    refs = [v.data, b.int_const(list(perm), f"{name}/perm"), v.mn, v.mx]
    return node3(b, "Transpose_8", refs, shape, name, v.range)  # type: ignore[list-item, arg-type]


def fold_permutation(shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Fold a transpose to the fewest axes: drop size-1 axes, merge input axes that stay neighbours.

    Returns ``(folded input shape, folded perm)``; transposing the input
    viewed with the folded shape gives the same row-major data as the
    original transpose (so a rank-5 channel shuffle becomes rank 3).
    """
    keep = [a for a in range(len(shape)) if shape[a] != 1]
    order = [a for a in perm if shape[a] != 1]
    groups: list[list[int]] = []  # runs of consecutive input axes, in output order
    for a in order:
        if groups and keep.index(a) == keep.index(groups[-1][-1]) + 1:
            groups[-1].append(a)
        else:
            groups.append([a])
    by_input = sorted(range(len(groups)), key=lambda g: groups[g][0])
    folded_shape = tuple(_prod([shape[a] for a in groups[g]]) for g in by_input)
    folded_perm = tuple(by_input.index(g) for g in range(len(groups)))
    return folded_shape, folded_perm


def tile(b: GraphBuilder, v: Value, multiples: list[int], name: str) -> Value:
    """QuantizedTile_8 (4 multiples, each >= 1); no node when all are 1."""
    if list(multiples) == [1, 1, 1, 1]:
        return v
    shape = tuple(n * m for n, m in zip(v.shape, multiples))
    refs = [v.data, b.int_const(list(multiples), f"{name}/multiples"), v.mn, v.mx]
    return node3(b, "QuantizedTile_8", refs, shape, name, v.range)  # type: ignore[list-item, arg-type]


def _apparent_rank(shape: tuple[int, ...]) -> int:
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return len(shape) - lead


def gather(b: GraphBuilder, table: Value, index: Ref, index_shape: Shape4, index_rank: int, axis: int,
           out_shape: Shape4, name: str) -> Value:
    """Gather_8: entries of ``table`` along 4-D ``axis`` picked by int32 ``index`` (source rank ``index_rank``).

    The kernel's result is the table (from its first dim > 1, or from
    ``axis``) with ``axis`` replaced by the index's last ``index_rank`` dims,
    left-padded with 1s; it is reshaped to ``out_shape`` (the same row-major
    data). Indices out of range are clipped (NN_PAD_NA).
    """
    t = table.shape
    trank = max(1, _apparent_rank(t), 4 - axis)
    dims = list(t[4 - trank:axis]) + list(index_shape[4 - index_rank:]) + list(t[axis + 1:])
    shape = (1,) * (4 - len(dims)) + tuple(dims)
    refs = [index, *table.triple(), b.int_const(axis, f"{name}/index_dim"),
            b.int_const(index_rank, f"{name}/index_rank")]
    y = node3(b, "Gather_8", refs, shape, name, table.range)  # type: ignore[arg-type]
    return reshape_value(b, y, out_shape, f"{name}/reshape")


def space_to_depth(b: GraphBuilder, v: Value, block: int, name: str, inverse: bool = False) -> Value:
    """SpaceToDepth_8 (``inverse``: DepthToSpace_8) with a square block (TF's DCR channel order)."""
    bb, h, w, d = v.shape
    if inverse:
        op, shape = "DepthToSpace_8", (bb, h * block, w * block, d // (block * block))
    else:
        op, shape = "SpaceToDepth_8", (bb, h // block, w // block, d * block * block)
    refs = [v.data, b.int_const(block, f"{name}/block"), v.mn, v.mx]
    return node3(b, op, refs, shape, name, v.range)  # type: ignore[list-item]


def space_to_batch(b: GraphBuilder, v: Value, block: tuple[int, int], pads: tuple[int, int, int, int],
                   name: str, inverse: bool = False) -> Value:
    """SpaceToBatchND_8 (pads = top, bottom, left, right; padding is the zero code) or, ``inverse``,
    BatchToSpaceND_8 (the four values are crops)."""
    bb, h, w, d = v.shape
    bh, bw = block
    t, bo, le, r = pads
    if inverse:
        op = "BatchToSpaceND_8"
        shape = (bb // (bh * bw), h * bh - t - bo, w * bw - le - r, d)
    else:
        op = "SpaceToBatchND_8"
        shape = (bb * bh * bw, (h + t + bo) // bh, (w + le + r) // bw, d)
    # op_space2batch.c / op_batch2space.c read pads / crops as a [1,1,2,2] tensor: (top, bottom), (left, right)
    pads_ref = b.graph.const_ref(np.array([t, bo, le, r], np.int32).reshape(1, 1, 2, 2), f"{name}/pads")
    refs = [v.data, b.int_const([bh, bw], f"{name}/block"), pads_ref, v.mn, v.mx]
    return node3(b, op, refs, shape, name, v.range)  # type: ignore[list-item]
