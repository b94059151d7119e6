"""TFLite data-movement builtins: PAD, PADV2, MIRROR_PAD, SLICE, STRIDED_SLICE, GATHER, GATHER_ND and the
space / depth / batch moves (SPACE_TO_DEPTH, DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND).

Every parameter tensor must be constant; indices are resolved here into
literal positions (TFLite's negative-index and mask rules), because the
hexagon_nn ops follow their texts literally (QuantizedStridedSlice_8 has no
negative-index wrap). Ranges pass through (SEMANTICS §6) and ``finish``
requantizes onto a different output range.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import shape4
from hexnn_import.importers.nodes.core import requantize_to, reshape_value
from hexnn_import.importers.nodes.movement import (
    MOVE_EMITS,
    gather,
    mirror_pad,
    pad,
    slice_value,
    space_to_batch,
    space_to_depth,
    strided_slice,
)
from hexnn_import.importers.tflite.common import const_ints, finish
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.handlers.shape import axis4, check_move
from hexnn_import.importers.tflite.strided_slice import resolve_strided_slice
from hexnn_import.importers.tflite.reader import TFOperator


# ---- pads --------------------------------------------------------------------------------------
def _pads(imp: TFLiteImporter, op: TFOperator) -> list[tuple[int, int]]:
    p = const_ints(imp, op, 1).reshape(-1, 2)  # type: ignore[union-attr]
    rows = [(int(a), int(b)) for a, b in p]
    return [(0, 0)] * (4 - len(rows)) + rows


def _check_pad(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A data input of rank <= 4, constant non-negative paddings (one pair per dimension); PADV2: a constant
    scalar value; MIRROR_PAD: no wider than the mirrored dimension."""
    why = check_move(imp, op, (0,), 1, (1,))
    if why:
        return why
    p = const_ints(imp, op, 1)
    if p.size != 2 * len(imp.tensor(op.inputs[0]).shape) or np.any(p < 0):  # type: ignore[union-attr]
        return f"paddings {p.tolist()} are not one non-negative (before, after) pair per dimension"  # type: ignore[union-attr]
    if op.opname == "PADV2" and len(op.inputs) > 2 and op.inputs[2] >= 0:
        c = imp.tensor(op.inputs[2])
        if c.data is None or c.data.size != 1:
            return "constant_values is not a constant scalar"
    if op.opname == "MIRROR_PAD":
        if op.options is None:
            return "missing options"
        shape = shape4(imp.tensor(op.inputs[0]).shape)
        limit = 0 if op.options.Mode() == 0 else 1  # REFLECT pads at most size-1, SYMMETRIC at most size
        if any(max(pr) > n - 1 + limit for n, pr in zip(shape, _pads(imp, op))):
            return "mirror padding wider than the dimension it mirrors"
    return None


def _pad_value(imp: TFLiteImporter, op: TFOperator) -> float:
    """PADV2's constant value in real units (0.0 for PAD or when absent)."""
    if op.opname != "PADV2" or len(op.inputs) < 3 or op.inputs[2] < 0:
        return 0.0
    c = imp.tensor(op.inputs[2])
    raw = float(np.asarray(c.data).reshape(-1)[0])
    if c.quant is not None and c.dtype != "float32":
        return (raw - float(c.quant.zero_point[0])) * float(c.quant.scale[0])
    return raw


@tflite_op("PAD", MOVE_EMITS, _check_pad)
def pad_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """PAD / PADV2: the input is first brought onto a quantized output's range, then padded with the
    value's code there (QuantizedPad_V2_8), or QuantizedPad_8 with the float value on a run-time range."""
    yt = imp.tensor(op.outputs[0])
    x = imp.qvalue(op.inputs[0])
    if not imp.is_float(op.outputs[0]):
        x = requantize_to(imp, x, imp.act_range(op.outputs[0]), f"{yt.name}/input")
    finish(imp, op, pad(imp, x, _pads(imp, op), _pad_value(imp, op), yt.name))


tflite_op("PADV2", MOVE_EMITS, _check_pad)(pad_op)


@tflite_op("MIRROR_PAD", ("MirrorPad_8", "Requantize_8to8"), _check_pad)
def mirror_pad_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """MIRROR_PAD -> MirrorPad_8 (mode REFLECT -> NN_PAD_MIRROR_REFLECT, SYMMETRIC -> NN_PAD_MIRROR_SYMMETRIC)."""
    y = mirror_pad(imp, imp.qvalue(op.inputs[0]), _pads(imp, op), op.options.Mode() == 1,
                   imp.tensor(op.outputs[0]).name)
    finish(imp, op, y)


# ---- slices ------------------------------------------------------------------------------------
def _slice_params(imp: TFLiteImporter, op: TFOperator) -> tuple[list[int], list[int]] | str:
    """SLICE's begin / size resolved (size -1 = to the end) on the 4-D shape, or why not."""
    shape = imp.tensor(op.inputs[0]).shape
    begin = [int(v) for v in const_ints(imp, op, 1).reshape(-1)]  # type: ignore[union-attr]
    size = [int(v) for v in const_ints(imp, op, 2).reshape(-1)]  # type: ignore[union-attr]
    if len(begin) != len(shape) or len(size) != len(shape):
        return f"begin / size of {len(begin)} / {len(size)} values for rank {len(shape)}"
    size = [n - b if s == -1 else s for n, b, s in zip(shape, begin, size)]
    if any(not 0 <= b < n or s < 1 or b + s > n for n, b, s in zip(shape, begin, size)):
        return f"slice begin {begin} size {size} is empty or outside shape {list(shape)}"
    lead = 4 - len(shape)
    return [0] * lead + begin, list(shape4(shape)[:lead]) + size


def _check_slice(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A data input of rank <= 4, constant begin and size within the input."""
    why = check_move(imp, op, (0,), 1, (1, 2))
    if why:
        return why
    p = _slice_params(imp, op)
    return p if isinstance(p, str) else None


@tflite_op("SLICE", ("QuantizedSlice_8", "Requantize_8to8"), _check_slice)
def slice_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """SLICE -> QuantizedSlice_8 with begin / size on all four dims."""
    begin, size = _slice_params(imp, op)  # type: ignore[misc]
    finish(imp, op, slice_value(imp, imp.qvalue(op.inputs[0]), begin, size, imp.tensor(op.outputs[0]).name))


def _strided(imp: TFLiteImporter, op: TFOperator):  # type: ignore[no-untyped-def]
    o = op.options
    ints = [[int(v) for v in const_ints(imp, op, p).reshape(-1)] for p in (1, 2, 3)]  # type: ignore[union-attr]
    return resolve_strided_slice(imp.tensor(op.inputs[0]).shape, *ints, o.BeginMask(), o.EndMask(),
                                 o.EllipsisMask(), o.NewAxisMask(), o.ShrinkAxisMask())


def _check_strided_slice(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A data input of rank <= 4, constant begin / end / strides, offset=false, an output of the resolved
    shape."""
    why = check_move(imp, op, (0,), 1, (1, 2, 3))
    if why:
        return why
    if op.options is None:
        return "missing options"
    if hasattr(op.options, "Offset") and op.options.Offset():
        return "offset=true is not supported"
    res = _strided(imp, op)
    if isinstance(res, str):
        return res
    out = imp.tensor(op.outputs[0]).shape
    if int(np.prod(res.out_shape)) != int(np.prod(out)):
        return f"resolved output shape {res.out_shape} does not match the output tensor's {list(out)}"
    return None


@tflite_op("STRIDED_SLICE", ("QuantizedStridedSlice_8", "QuantizedReshape", "Requantize_8to8"), _check_strided_slice)
def strided_slice_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """STRIDED_SLICE -> QuantizedStridedSlice_8 on literal indices (tflite_slicing), then a reshape that
    drops shrunk axes and inserts new ones."""
    yt = imp.tensor(op.outputs[0])
    res = _strided(imp, op)
    lead = 4 - len(res.begin)
    x = imp.qvalue(op.inputs[0])
    y = strided_slice(imp, x, [0] * lead + res.begin, [1] * lead + res.step, list(x.shape[:lead]) + res.size,
                      yt.name)
    finish(imp, op, reshape_value(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))


# ---- gather --------------------------------------------------------------------------------------
def _check_gather(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A data input of rank <= 4, batch_dims 0; constant indices within the axis, or int32 run-time indices of
    rank <= 4."""
    why = check_move(imp, op, (0,), 1)
    if why:
        return why
    if op.options is not None and op.options.BatchDims() != 0:
        return "batch_dims != 0"
    it = imp.tensor(op.inputs[1])
    pt = imp.tensor(op.inputs[0])
    ax = int(op.options.Axis()) if op.options is not None else 0
    ax = ax + len(pt.shape) if ax < 0 else ax
    if it.data is None and it.dtype != "int32":
        return f"indices of type {it.dtype} computed at run time"
    if it.data is not None:
        idx = const_ints(imp, op, 1)
        if idx is None or np.any(idx < 0) or np.any(idx >= pt.shape[ax]):
            return f"constant indices outside 0..{pt.shape[ax] - 1}"
    if len(it.shape) > 4:
        return f"indices of rank {len(it.shape)}"
    return None


@tflite_op("GATHER", ("Gather_8", "QuantizedReshape", "Requantize_8to8"), _check_gather)
def gather_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """GATHER (constant or int32 run-time indices) -> Gather_8 on the 4-D axis; out-of-range run-time
    indices are clipped (TFLite reports them as an error)."""
    pt, it, yt = imp.tensor(op.inputs[0]), imp.tensor(op.inputs[1]), imp.tensor(op.outputs[0])
    ax = axis4(int(op.options.Axis()) if op.options is not None else 0, len(pt.shape))
    if it.data is not None:
        idx = const_ints(imp, op, 1).astype(np.int32)  # type: ignore[union-attr]
        ref = imp.graph.const_ref(idx.reshape(shape4(it.shape)), f"{yt.name}/indices")
    else:
        ref = imp.value(op.inputs[1]).data
    y = gather(imp, imp.qvalue(op.inputs[0]), ref, shape4(it.shape), len(it.shape), ax, shape4(yt.shape), yt.name)
    finish(imp, op, y)


def _check_gather_nd(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Data of rank <= 4; constant indices whose last dim K <= the data's rank, each tuple within the data."""
    why = check_move(imp, op, (0,), 1)
    if why:
        return why
    shape, idx = imp.tensor(op.inputs[0]).shape, const_ints(imp, op, 1)
    if idx is None:
        return "indices computed at run time (constant indices only)"
    if idx.ndim < 1 or not 1 <= idx.shape[-1] <= len(shape):
        return f"indices of shape {list(idx.shape)} for data of rank {len(shape)}"
    inside = (idx >= 0) & (idx < np.asarray(shape[:idx.shape[-1]]))
    return None if inside.all() else "constant indices outside the data"


@tflite_op("GATHER_ND", ("Gather_8", "QuantizedReshape", "Requantize_8to8"), _check_gather_nd)
def gather_nd(imp: TFLiteImporter, op: TFOperator) -> None:
    """GATHER_ND (constant indices): the data's first K dims reshaped into one (QuantizedReshape), the index
    tuples made flat (row-major), then Gather_8 along that dim."""
    shape, yt = imp.tensor(op.inputs[0]).shape, imp.tensor(op.outputs[0])
    idx = const_ints(imp, op, 1)
    k, rest = idx.shape[-1], tuple(shape[idx.shape[-1]:])  # type: ignore[union-attr]
    flat = np.ravel_multi_index(tuple(np.moveaxis(idx, -1, 0)), tuple(shape[:k])).astype(np.int32)  # type: ignore[union-attr]
    table = reshape_value(imp, imp.qvalue(op.inputs[0]), shape4((int(np.prod(shape[:k])),) + rest), f"{yt.name}/rows")
    ref = imp.graph.const_ref(flat.reshape(shape4(flat.shape)), f"{yt.name}/indices")
    y = gather(imp, table, ref, shape4(flat.shape), flat.ndim, 3 - len(rest), shape4(yt.shape), yt.name)
    finish(imp, op, y)


# ---- space / depth / batch ------------------------------------------------------------------------
def _check_depth(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A 4-D float32 or per-tensor quantized input, a block size >= 1."""
    why = check_move(imp, op)
    if why:
        return why
    if op.options is None or op.options.BlockSize() < 1:
        return "missing or invalid block size"
    return None if len(imp.tensor(op.inputs[0]).shape) == 4 else "input is not 4-D"


@tflite_op("SPACE_TO_DEPTH", ("SpaceToDepth_8", "Requantize_8to8"), _check_depth)
def space_to_depth_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """SPACE_TO_DEPTH -> SpaceToDepth_8."""
    finish(imp, op, space_to_depth(imp, imp.qvalue(op.inputs[0]), op.options.BlockSize(),
                                   imp.tensor(op.outputs[0]).name))


@tflite_op("DEPTH_TO_SPACE", ("DepthToSpace_8", "Requantize_8to8"), _check_depth)
def depth_to_space_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """DEPTH_TO_SPACE -> DepthToSpace_8 (TF's DCR channel order)."""
    finish(imp, op, space_to_depth(imp, imp.qvalue(op.inputs[0]), op.options.BlockSize(),
                                   imp.tensor(op.outputs[0]).name, inverse=True))


def _check_batch(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Rank 3 or 4 (1 or 2 spatial dimensions), constant block sizes >= 1 and paddings / crops >= 0."""
    why = check_move(imp, op, (0,), 1, (1, 2))
    if why:
        return why
    rank = len(imp.tensor(op.inputs[0]).shape)
    block = const_ints(imp, op, 1).reshape(-1)  # type: ignore[union-attr]
    pads = const_ints(imp, op, 2).reshape(-1)  # type: ignore[union-attr]
    if rank not in (3, 4) or block.size != rank - 2 or pads.size != 2 * block.size:
        return f"rank {rank} with block {block.tolist()}: only 1 or 2 spatial dims (rank 3 or 4) are supported"
    if np.any(block < 1) or np.any(pads < 0):
        return "block sizes must be >= 1 and paddings / crops >= 0"
    return None


def _space_batch(imp: TFLiteImporter, op: TFOperator, inverse: bool) -> None:
    xt, yt = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    block = [int(v) for v in const_ints(imp, op, 1).reshape(-1)]  # type: ignore[union-attr]
    p = [int(v) for v in const_ints(imp, op, 2).reshape(-1)]  # type: ignore[union-attr]
    x = imp.qvalue(op.inputs[0])
    if len(block) == 1:  # [b, h, c] works as [b, h, 1, c] with a block of width 1
        x = reshape_value(imp, x, (xt.shape[0], xt.shape[1], 1, xt.shape[2]), f"{yt.name}/as4d")
        block, p = block + [1], p + [0, 0]
    y = space_to_batch(imp, x, (block[0], block[1]), (p[0], p[1], p[2], p[3]), yt.name, inverse)
    finish(imp, op, reshape_value(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))


@tflite_op("SPACE_TO_BATCH_ND", ("SpaceToBatchND_8", "QuantizedReshape", "Requantize_8to8"), _check_batch)
def space_to_batch_nd(imp: TFLiteImporter, op: TFOperator) -> None:
    """SPACE_TO_BATCH_ND -> SpaceToBatchND_8 (padding with the zero code, as TFLite pads with the zero point)."""
    _space_batch(imp, op, inverse=False)


@tflite_op("BATCH_TO_SPACE_ND", ("BatchToSpaceND_8", "QuantizedReshape", "Requantize_8to8"), _check_batch)
def batch_to_space_nd(imp: TFLiteImporter, op: TFOperator) -> None:
    """BATCH_TO_SPACE_ND -> BatchToSpaceND_8 with the crops."""
    _space_batch(imp, op, inverse=True)
