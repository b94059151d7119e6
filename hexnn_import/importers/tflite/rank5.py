"""A TRANSPOSE through rank 5 between reshapes, imported as its rank-4 equivalent (TFLite).

hexagon_nn tensors have 4 dimensions. keras's patch extraction (``Reshape((4, 2, 4, 2))``, ``Permute((1,
3, 2, 4))``, ``Reshape((16, 4))``: 2x2 patches of an 8x8 image as 16 tokens) converts to RESHAPE ->
TRANSPOSE -> RESHAPE through rank-5 tensors. Row-major data does not change under a reshape, so the chain
is one transpose of the input read with the rank-5 shape; ``nodes.movement.fold_permutation`` drops its
size-1 axes and merges axes that stay neighbours, and when at most 4 axes remain (here ``[4, 2, 4, 2]``,
perm ``(0, 2, 1, 3)``) the chain is QuantizedReshape, one Transpose_8 and QuantizedReshape: codes move,
nothing is rounded (a last Requantize_8to8 only when the output's parameters differ from the input's).
"""
from __future__ import annotations

from collections.abc import Callable

from hexnn_import.graph import shape4
from hexnn_import.importers.nodes.core import reshape_value, requantize_to
from hexnn_import.importers.nodes.movement import fold_permutation, transpose
from hexnn_import.importers.tflite.common import activation_kind, const_ints
from hexnn_import.importers.tflite.importer import TFLiteImporter
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.tflite.registry import Fused

RESHAPES = ("RESHAPE", "EXPAND_DIMS", "SQUEEZE")


def _walk(imp: TFLiteImporter, op: TFOperator, readers: dict[int, list[TFOperator]],
          producer: dict[int, TFOperator]) -> tuple[list[TFOperator], int, int] | None:
    """(chain ops, first tensor, last tensor) of the reshapes around rank-5 TRANSPOSE ``op``, or None."""
    outputs = set(imp.model.outputs)
    ops, start = [op], op.inputs[0]
    while len(imp.tensor(start).shape) > 4:
        p = producer.get(start)
        if p is None or p.opname not in RESHAPES or len(readers.get(start, [])) != 1 or start in outputs:
            return None
        ops.insert(0, p)
        start = p.inputs[0]
    end = op.outputs[0]
    while len(imp.tensor(end).shape) > 4:
        r = readers.get(end, [])
        if len(r) != 1 or r[0].opname not in RESHAPES or end in outputs:
            return None
        ops.append(r[0])
        end = r[0].outputs[0]
    return (ops, start, end) if len(ops) > 1 else None


def _emitter(op: TFOperator, start: int, end: int, shape: tuple[int, ...], perm: tuple[int, ...]
             ) -> Callable[[TFLiteImporter], None]:
    def emit(imp: TFLiteImporter) -> None:
        name = imp.tensor(end).name
        lead = 4 - len(shape)
        x = reshape_value(imp, imp.qvalue(start), shape4(shape), f"{name}/fold")
        y = transpose(imp, x, list(range(lead)) + [lead + p for p in perm], f"{name}/transpose")
        y = reshape_value(imp, y, shape4(imp.tensor(end).shape), name)
        imp.set_output(end, requantize_to(imp, y, imp.act_range(end), name))

    return emit


def find_rank5_transposes(imp: TFLiteImporter) -> list[Fused]:
    """Every RESHAPE -> rank-5 TRANSPOSE -> RESHAPE chain with a rank-4 equivalent (module doc)."""
    producer = {o: op for op in imp.model.operators for o in op.outputs}
    readers: dict[int, list[TFOperator]] = {}
    for op in imp.model.operators:
        for i in op.inputs:
            if i >= 0:
                readers.setdefault(i, []).append(op)
    found = []
    for op in imp.model.operators:
        try:
            hit = _fused(imp, op, readers, producer)
        except (IndexError, KeyError, AttributeError, TypeError, ValueError):
            hit = None  # a malformed operator: left to its handler's check, which names it
        if hit is not None:
            found.append(hit)
    return found


def _fused(imp: TFLiteImporter, op: TFOperator, readers: dict[int, list[TFOperator]],
           producer: dict[int, TFOperator]) -> Fused | None:
    """The chain around ``op`` when it is a rank-5 TRANSPOSE with a rank-4 equivalent, else None."""
    if op.opname != "TRANSPOSE" or len(op.inputs) < 2 or op.inputs[0] < 0 or not op.outputs \
            or len(imp.tensor(op.inputs[0]).shape) <= 4:
        return None
    p = const_ints(imp, op, 1)
    chain = _walk(imp, op, readers, producer) if p is not None else None
    if chain is None:
        return None
    ops, start, end = chain
    shape5 = imp.tensor(op.inputs[0]).shape
    fshape, fperm = fold_permutation(shape5, tuple(int(a) % len(shape5) for a in p.reshape(-1)))
    if len(fshape) > 4 or imp.tensor(start).data is not None or len(imp.tensor(start).shape) > 4:
        return None
    if any(activation_kind(imp.tensor(t)) is None for t in (start, end)):
        return None  # int16 and other types: the handlers' own checks name them
    return Fused(max(o.index for o in ops), frozenset(o.index for o in ops), _emitter(op, start, end, fshape, fperm))


__all__ = ["find_rank5_transposes"]
