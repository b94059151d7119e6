"""Shapes the TFLite converter left as placeholders in a model with a dynamic batch.

keras's ``Dense`` on a ``[batch, tokens, features]`` input converts, when the batch is dynamic, to
``Tensordot``: SHAPE -> GATHER -> REDUCE_PROD -> PACK computes ``[batch * tokens, features]``, a RESHAPE
flattens the input to it, FULLY_CONNECTED multiplies, and a RESHAPE restores the tokens. The tensors in
between carry ``-1`` in their ``shape_signature`` and the converter writes 1 where the size depends on the
batch (``[1, 1]`` for the flattened input, ``[1, units]`` for the product). Once the input shapes
are fixed and the shape arithmetic folded (``tflite.shapes``, ``tflite.fold``), the real shapes follow:
:func:`resolve_placeholder_shapes` recomputes, in operator order, the output shape of each RESHAPE whose
target is now constant and of each FULLY_CONNECTED, where the file's shape does not hold the input's
element count.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.importers.tflite.reader import TFModel, TFOperator


def _reshape_target(model: TFModel, op: TFOperator) -> tuple[int, ...] | None:
    """The RESHAPE's target with one -1 resolved, from its constant shape input or its options."""
    shape = None
    if len(op.inputs) > 1 and op.inputs[1] >= 0 and model.tensors[op.inputs[1]].data is not None:
        shape = [int(v) for v in np.asarray(model.tensors[op.inputs[1]].data).reshape(-1)]
    elif op.options is not None and hasattr(op.options, "NewShapeAsNumpy") and op.options.NewShapeLength():
        shape = [int(v) for v in op.options.NewShapeAsNumpy()]
    if shape is None or shape.count(-1) > 1 or any(v < -1 for v in shape):
        return None
    count = math.prod(model.tensors[op.inputs[0]].shape)
    known = math.prod(v for v in shape if v != -1)
    if -1 in shape:
        if known == 0 or count % known:
            return None
        shape[shape.index(-1)] = count // known
    return tuple(shape) if math.prod(shape) == count else None


def _fc_shape(model: TFModel, op: TFOperator) -> tuple[int, ...] | None:
    """FULLY_CONNECTED's output shape: ``[rows, units]``, or the input's leading dims with keep_num_dims."""
    if len(op.inputs) < 2 or op.inputs[1] < 0:
        return None
    x, w = model.tensors[op.inputs[0]], model.tensors[op.inputs[1]]
    if len(w.shape) != 2 or not w.shape[1] or math.prod(x.shape) % w.shape[1]:
        return None
    keep = op.options is not None and hasattr(op.options, "KeepNumDims") and bool(op.options.KeepNumDims())
    if keep:
        return tuple(x.shape[:-1]) + (w.shape[0],)
    return (math.prod(x.shape) // w.shape[1], w.shape[0])


def _valid(model: TFModel, op: TFOperator) -> bool:
    """Every tensor index of ``op`` names a tensor (-1, an absent optional input, allowed among the inputs):
    a damaged file is left to the importer's own checks, which name it."""
    n = len(model.tensors)
    return all(-1 <= i < n for i in op.inputs) and all(0 <= i < n for i in op.outputs)


def resolve_placeholder_shapes(model: TFModel) -> int:
    """Fix the placeholder shapes of the module doc; returns how many tensors changed."""
    changed = 0
    for op in model.operators:
        if op.opname not in ("RESHAPE", "FULLY_CONNECTED") or not op.outputs or not op.inputs or op.inputs[0] < 0 \
                or not _valid(model, op):
            continue
        y = model.tensors[op.outputs[0]]
        sig = y.shape_signature
        if y.data is not None or sig is None or len(sig) != len(y.shape) or not any(v < 0 for v in sig):
            continue
        want = _reshape_target(model, op) if op.opname == "RESHAPE" else _fc_shape(model, op)
        if want is not None and len(want) == len(y.shape) and tuple(want) != tuple(y.shape) \
                and all(s < 0 or s == v for s, v in zip(sig, want)):
            y.shape = tuple(int(v) for v in want)
            changed += 1
    return changed


__all__ = ["resolve_placeholder_shapes"]
