"""Input shapes of a TFLite model: the dynamic batch, and a batch chosen by the user.

A converter marks a dynamic dimension with -1 in the tensor's
``shape_signature`` and writes a placeholder (1) in ``shape``; every tensor
downstream carries the same pair. The rules (issue [Real models]):

- a dynamic batch (dim 0) that the user does not set becomes 1, with one
  note in the summary saying how to change it;
- ``--input-shape NAME=N,...`` / ``input_shapes=`` may set the batch of any
  input, dynamic or static; the other dimensions must be the ones the file
  was converted with (a dynamic height or width needs the shapes of every
  layer, which only re-exporting gives);
- every input whose dimensions other than the batch are dynamic (-1 in
  ``shape_signature``) is named in one error (issue 34): the converter
  computed every layer's shape with placeholder sizes (1), so nothing in
  the file implies the size, and only re-exporting gives the layers' shapes;
- a new batch is written into every activation tensor that carries it: those
  whose signature has -1 in dim 0, or, in a file without signatures, the
  non-constant tensors reachable from the inputs whose dim 0 is the old
  batch. An operator that then no longer keeps its element count (a
  RESHAPE to a constant ``[1, -1]``, a squeeze of the batch) fixes the batch,
  and the model is refused with its name.
"""
from __future__ import annotations

import math
from typing import Mapping

from hexnn_import.errors import InputDataError, ModelFormatError
from hexnn_import.importers.tflite.reader import TFModel, TFTensor

#: operators that keep the element count of their (first) input
COUNT_KEEPING = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "QUANTIZE", "DEQUANTIZE", "LOGISTIC", "TANH", "RELU",
                 "RELU6", "SOFTMAX", "HARD_SWISH", "TRANSPOSE", "CAST", "L2_NORMALIZATION"}


def _dims(shape: tuple[int, ...]) -> str:
    return ",".join(str(v) for v in shape)


def fix_input_shapes(model: TFModel, shapes: Mapping[str, tuple[int, ...]], label: str) -> list[str]:
    """Fix every input's shape by the rules of the module doc; returns the notes for the summary."""
    names = {model.tensors[i].name for i in model.inputs}
    unknown = sorted(set(shapes) - names)
    if unknown:
        raise InputDataError(f"{label}: --input-shape names {unknown}; the model's inputs are {sorted(names)}")
    notes: list[str] = []
    batches: dict[int, int] = {}
    fixed: list[str] = []  # inputs whose dynamic dims beyond the batch no flag can set (one error names all)
    for i in model.inputs:
        t = model.tensors[i]
        sig = t.shape_signature if t.shape_signature is not None and len(t.shape_signature) == len(t.shape) \
            else t.shape
        dynamic = [d for d, v in enumerate(sig) if v < 0]
        want = shapes.get(t.name)
        if want is None:
            if not dynamic:
                continue
            if dynamic != [0]:
                fixed.append(f"input {t.name} has dynamic dimensions {list(sig)} (the file's shapes were computed "
                              f"with {list(t.shape)})")
                continue
            notes.append(f"input '{t.name}': dynamic batch set to 1 (change with --input-shape "
                         f"{t.name}={_dims((4,) + tuple(t.shape[1:]))})")
            if t.shape and t.shape[0] != 1:
                batches[i] = 1
            continue
        if len(want) != len(t.shape):
            raise InputDataError(f"{label}: --input-shape {t.name}={_dims(want)} gives {len(want)} dimensions, the "
                                 f"input has {len(t.shape)} ({list(sig)})")
        if tuple(want[1:]) != tuple(t.shape[1:]):
            raise InputDataError(f"{label}: --input-shape {t.name}={_dims(want)}: only the batch (first) dimension "
                                 f"can change; the file's shapes were computed for {list(t.shape)}; re-export the "
                                 f"model at that size")
        if want[0] != t.shape[0]:
            batches[i] = int(want[0])
    if fixed:
        raise ModelFormatError(f"{label}: " + "; ".join(fixed) + "; only a dynamic batch is chosen automatically "
                               "and --input-shape can change only the batch of a TFLite model: a height, width or "
                               "length needs the shapes of every layer, which the converter writes for placeholder "
                               "sizes; re-export the model with a fixed size (a TensorSpec of the size to use)")
    if batches:
        set_batch(model, batches, label)
    for t in model.tensors:
        if t.data is None and any(v < 0 for v in t.shape):
            raise ModelFormatError(f"{label}: tensor {t.name} has an unknown dimension {list(t.shape)}")
    return notes


def _batch_tensors(model: TFModel, start: int) -> set[int]:
    """Tensors that carry input ``start``'s batch (module doc): dim 0 of -1 in their signature, and
    the non-constant tensors written from them whose dim 0 is the old batch."""
    old = model.tensors[start].shape[0]
    marked = {start} | {t.index for t in model.tensors if t.data is None and t.shape_signature is not None
                        and len(t.shape_signature) == len(t.shape) and len(t.shape) and t.shape_signature[0] < 0}
    for op in model.operators:
        if any(i in marked for i in op.inputs if i >= 0):
            for o in op.outputs:
                t = model.tensors[o] if o >= 0 else None
                if t is not None and t.data is None and t.shape and t.shape[0] == old:
                    marked.add(o)
    return marked


def set_batch(model: TFModel, batches: Mapping[int, int], label: str) -> None:
    """Write the new batch of each input (tensor index -> batch) into the tensors that carry it."""
    before = {t.index: math.prod(t.shape) for t in model.tensors}
    for start, n in batches.items():
        for k in _batch_tensors(model, start):
            t: TFTensor = model.tensors[k]
            t.shape = (n,) + tuple(t.shape[1:])
    for op in model.operators:
        if op.opname not in COUNT_KEEPING or not op.inputs or op.inputs[0] < 0 or not op.outputs:
            continue
        a, b = model.tensors[op.inputs[0]], model.tensors[op.outputs[0]]
        if math.prod(a.shape) * before[b.index] != math.prod(b.shape) * before[a.index]:
            raise ModelFormatError(
                f"{label}: operator {op.opname} ({b.name}) fixes the batch: it maps {list(a.shape)} to "
                f"{list(b.shape)}; this model runs with its own batch only")


__all__ = ["fix_input_shapes", "set_batch"]
