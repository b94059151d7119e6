"""TFLite shape builtins: SQUEEZE, EXPAND_DIMS, CONCATENATION, PACK, SPLIT, SPLIT_V, TILE, BROADCAST_TO,
TRANSPOSE.

Tensors of rank r <= 4 live in the graph as 4-D ``[b, h, w, d]``, left-padded
with 1s, so a TFLite axis ``a`` is the 4-D axis ``a + 4 - r`` (negative
axes first normalized by ``+ r``). The data-movement ops pass the range
through (SEMANTICS §6); :func:`~hexnn_import.importers.tflite.common.finish`
then adds a Requantize_8to8 where TFLite's output parameters differ.
CONCATENATION and PACK requantize every input onto a quantized output's
range first (TFLite allows inputs with other parameters); a float model's
concat merges the input ranges (QuantizedConcat_8's own rule).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import shape4
from hexnn_import.importers.nodes.core import reshape_value
from hexnn_import.importers.nodes.elementwise import tile_to
from hexnn_import.importers.nodes.movement import (
    MOVE_EMITS,
    concat,
    fold_permutation,
    slice_value,
    split_equal,
    tile,
    transpose,
)
from hexnn_import.importers.tflite.common import (
    check_fused,
    check_io,
    const_ints,
    finish,
)
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.reader import TFOperator

ACT_EMITS = ("QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8")


# ---- helpers shared by the tflite/handlers/* movement modules ------------------------------------
def axis4(axis: int, rank: int) -> int:
    """A TFLite axis of a rank-``rank`` tensor as a 4-D axis (negative axes normalized)."""
    return (axis + rank if axis < 0 else axis) + 4 - rank


def check_shapes(imp: TFLiteImporter, op: TFOperator, inputs: tuple[int, ...] = (0,)) -> str | None:
    """Data inputs and all outputs have rank <= 4 and no empty dimension."""
    idx = [op.inputs[p] for p in inputs if p < len(op.inputs) and op.inputs[p] >= 0] + list(op.outputs)
    for i in idx:
        t = imp.tensor(i)
        if len(t.shape) > 4:
            return f"tensor {t.name} has rank {len(t.shape)} > 4"
        if any(n < 1 for n in t.shape):
            return f"tensor {t.name} has an empty or dynamic dimension {list(t.shape)}"
    return None


def check_move(imp: TFLiteImporter, op: TFOperator, inputs: tuple[int, ...] = (0,), n_outputs: int = 1,
               consts: tuple[int, ...] = ()) -> str | None:
    """Float32 or per-tensor quantized data of rank <= 4 (a data-movement op); the parameter inputs ``consts``
    are constant integer tensors."""
    why = check_io(imp, op, inputs, tuple(range(n_outputs))) or check_shapes(imp, op, inputs)
    if why:
        return why
    for pos in consts:
        if const_ints(imp, op, pos) is None:
            return f"input {pos} is not a constant integer tensor"
    return None


def _needs_options(op: TFOperator) -> str | None:
    return None if op.options is not None else "missing options"


# ---- SQUEEZE / EXPAND_DIMS ----------------------------------------------------------------------
@tflite_op("SQUEEZE", ("QuantizedReshape", "Requantize_8to8"), lambda imp, op: check_move(imp, op))
def squeeze(imp: TFLiteImporter, op: TFOperator) -> None:
    """SQUEEZE -> QuantizedReshape to the output's 4-D shape (no node when it does not change)."""
    yt = imp.tensor(op.outputs[0])
    finish(imp, op, reshape_value(imp, imp.qvalue(op.inputs[0]), shape4(yt.shape), yt.name))


@tflite_op("EXPAND_DIMS", ("QuantizedReshape", "Requantize_8to8"), lambda imp, op: check_move(imp, op))
def expand_dims(imp: TFLiteImporter, op: TFOperator) -> None:
    """EXPAND_DIMS -> QuantizedReshape to the output's 4-D shape (the axis input only decides that shape)."""
    yt = imp.tensor(op.outputs[0])
    finish(imp, op, reshape_value(imp, imp.qvalue(op.inputs[0]), shape4(yt.shape), yt.name))


# ---- CONCATENATION / PACK ------------------------------------------------------------------------
def _check_concat(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized inputs and output of rank <= 4, an options table, a supported fused
    activation."""
    return (_needs_options(op) or check_move(imp, op, tuple(range(len(op.inputs)))) or check_fused(imp, op)
            or (None if op.inputs else "no inputs"))


def _concat_range(imp: TFLiteImporter, op: TFOperator) -> tuple[float, float] | None:
    """The range inputs are requantized onto: a quantized output's; None (merge) for a float output."""
    return None if imp.is_float(op.outputs[0]) else imp.act_range(op.outputs[0])


@tflite_op("CONCATENATION", MOVE_EMITS + ACT_EMITS, _check_concat)
def concatenation(imp: TFLiteImporter, op: TFOperator) -> None:
    """CONCATENATION on any axis -> QuantizedConcat_8 (nodes.movement.concat); fused activation."""
    yt = imp.tensor(op.outputs[0])
    values = [imp.qvalue(i) for i in op.inputs]
    ax = axis4(int(op.options.Axis()), len(yt.shape))
    finish(imp, op, concat(imp, values, ax, shape4(yt.shape), _concat_range(imp, op), yt.name))


def _check_pack(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized inputs and output of rank <= 4, an options table."""
    return _needs_options(op) or check_move(imp, op, tuple(range(len(op.inputs)))) or (
        None if op.inputs else "no inputs")


@tflite_op("PACK", MOVE_EMITS, _check_pack)
def pack(imp: TFLiteImporter, op: TFOperator) -> None:
    """PACK: each input viewed with a 1 inserted at ``axis``, then concatenated along it."""
    yt = imp.tensor(op.outputs[0])
    rank = len(yt.shape)
    ax = int(op.options.Axis())
    ax = ax + rank if ax < 0 else ax
    values = []
    for k, i in enumerate(op.inputs):
        s = list(imp.tensor(i).shape)
        values.append(reshape_value(imp, imp.qvalue(i), shape4(s[:ax] + [1] + s[ax:]), f"{yt.name}/expand{k}"))
    finish(imp, op, concat(imp, values, ax + 4 - rank, shape4(yt.shape), _concat_range(imp, op), yt.name))


# ---- SPLIT / SPLIT_V ----------------------------------------------------------------------------
def _check_split(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A data input of rank <= 4, constant axis and size_splits; SPLIT: the axis divides into equal parts."""
    data = 1 if op.opname == "SPLIT" else 0
    consts = (0,) if op.opname == "SPLIT" else (1, 2)
    why = check_move(imp, op, (data,), len(op.outputs), consts)
    if why:
        return why
    if op.opname == "SPLIT":
        n_in = imp.tensor(op.inputs[1]).shape
        ax = int(const_ints(imp, op, 0).reshape(-1)[0])  # type: ignore[union-attr]
        if n_in[ax] % len(op.outputs):
            return f"dimension {ax} of size {n_in[ax]} does not split into {len(op.outputs)} equal parts"
    return None


@tflite_op("SPLIT", ("QuantizedSplit_8", "QuantizedReshape", "Requantize_8to8"), _check_split)
def split(imp: TFLiteImporter, op: TFOperator) -> None:
    """SPLIT (inputs: axis, data) -> QuantizedSplit_8 with one output per part."""
    xt = imp.tensor(op.inputs[1])
    ax = axis4(int(const_ints(imp, op, 0).reshape(-1)[0]), len(xt.shape))  # type: ignore[union-attr]
    parts = split_equal(imp, imp.qvalue(op.inputs[1]), ax, len(op.outputs), imp.tensor(op.outputs[0]).name)
    for pos, (i, v) in enumerate(zip(op.outputs, parts)):
        finish(imp, op, reshape_value(imp, v, shape4(imp.tensor(i).shape), f"{imp.tensor(i).name}/reshape"), pos)


@tflite_op("SPLIT_V", ("QuantizedSlice_8", "QuantizedReshape", "Requantize_8to8"), _check_split)
def split_v(imp: TFLiteImporter, op: TFOperator) -> None:
    """SPLIT_V (inputs: data, size_splits, axis) -> one QuantizedSlice_8 per output (sizes from the outputs)."""
    xt = imp.tensor(op.inputs[0])
    rank = len(xt.shape)
    ax = axis4(int(const_ints(imp, op, 2).reshape(-1)[0]), rank)  # type: ignore[union-attr]
    x = imp.qvalue(op.inputs[0])
    start = 0
    for pos, i in enumerate(op.outputs):
        yt = imp.tensor(i)
        size = list(x.shape)
        size[ax] = shape4(yt.shape)[ax]
        begin = [0, 0, 0, 0]
        begin[ax] = start
        start += size[ax]
        finish(imp, op, reshape_value(imp, slice_value(imp, x, begin, size, yt.name), shape4(yt.shape),
                                      f"{yt.name}/reshape"), pos)


# ---- TILE / TRANSPOSE --------------------------------------------------------------------------
def _check_tile(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A data input of rank <= 4, constant multiples all >= 1."""
    why = check_move(imp, op, (0,), 1, (1,))
    if why:
        return why
    m = const_ints(imp, op, 1)
    return None if np.all(m >= 1) else f"multiples {m.tolist()} must all be >= 1"  # type: ignore[union-attr]


@tflite_op("TILE", ("QuantizedTile_8", "Requantize_8to8"), _check_tile)
def tile_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """TILE -> QuantizedTile_8 (multiples left-filled with 1s to 4 values)."""
    m = [int(v) for v in const_ints(imp, op, 1).reshape(-1)]  # type: ignore[union-attr]
    y = tile(imp, imp.qvalue(op.inputs[0]), [1] * (4 - len(m)) + m, imp.tensor(op.outputs[0]).name)
    finish(imp, op, y)


def _check_broadcast_to(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A data input of rank <= 4, a constant shape of at most 4 values that the input broadcasts to (numpy's
    rule, TFLite's)."""
    why = check_move(imp, op, (0,), 1, (1,))
    if why:
        return why
    want = tuple(int(v) for v in const_ints(imp, op, 1).reshape(-1))  # type: ignore[union-attr]
    if len(want) > 4:
        return f"shape {list(want)} of rank {len(want)} > 4"
    try:
        ok = np.broadcast_shapes(tuple(imp.tensor(op.inputs[0]).shape), want) == want
    except ValueError:
        ok = False
    return None if ok else f"input shape {list(imp.tensor(op.inputs[0]).shape)} does not broadcast to {list(want)}"


@tflite_op("BROADCAST_TO", ("QuantizedTile_8", "Requantize_8to8"), _check_broadcast_to)
def broadcast_to(imp: TFLiteImporter, op: TFOperator) -> None:
    """BROADCAST_TO -> QuantizedTile_8 onto the 4-D shape (no node when the shape does not change)."""
    want = tuple(int(v) for v in const_ints(imp, op, 1).reshape(-1))  # type: ignore[union-attr]
    name = imp.tensor(op.outputs[0]).name
    finish(imp, op, tile_to(imp, imp.qvalue(op.inputs[0]), shape4(want), name))


def _perm(imp: TFLiteImporter, op: TFOperator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = imp.tensor(op.inputs[0]).shape
    p = [int(v) for v in const_ints(imp, op, 1).reshape(-1)]  # type: ignore[union-attr]
    return fold_permutation(shape, tuple(a + len(shape) if a < 0 else a for a in p))


def _check_transpose(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A data input of rank <= 4, a constant permutation."""
    why = check_move(imp, op, (0,), 1, (1,))
    if why:
        return why
    rank = len(imp.tensor(op.inputs[0]).shape)
    p = sorted(int(a) + rank if a < 0 else int(a) for a in const_ints(imp, op, 1).reshape(-1))  # type: ignore[union-attr]
    return None if p == list(range(rank)) else f"perm {p} is not a permutation of 0..{rank - 1}"


@tflite_op("TRANSPOSE", ("Transpose_8", "QuantizedReshape", "Requantize_8to8"), _check_transpose)
def transpose_op(imp: TFLiteImporter, op: TFOperator) -> None:
    """TRANSPOSE (rank <= 4) -> Transpose_8 on the folded axes (nodes.movement.fold_permutation).

    Size-1 axes are dropped and input axes that stay neighbours merged
    first, so e.g. a transpose that only moves 1s becomes a reshape.
    """
    yt = imp.tensor(op.outputs[0])
    fshape, fperm = _perm(imp, op)
    lead = 4 - len(fshape)
    x = reshape_value(imp, imp.qvalue(op.inputs[0]), shape4(fshape), f"{yt.name}/fold")
    y = transpose(imp, x, list(range(lead)) + [lead + p for p in fperm], yt.name)
    finish(imp, op, reshape_value(imp, y, shape4(yt.shape), f"{yt.name}/reshape"))
