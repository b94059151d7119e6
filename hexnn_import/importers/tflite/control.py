"""TFLite IF with a condition that is constant once shapes are fixed and constants folded: the branch inlined.

A converter keeps ``tf.cond`` as ``IF(cond, inputs...)`` with a then and an else subgraph (schema.fbs
``IfOptions``). When folding (:mod:`.tflite.fold`) makes ``cond`` a constant (a condition on a shape, a
flag, a sample rate), the chosen branch's operators and tensors are copied into the main subgraph in
place of the IF, its inputs bound to the IF's operands and its outputs written into the IF's outputs;
LiteRT's ``if.cc`` runs the same branch on the same operands. An IF whose condition stays run-time is
left alone (the importer refuses it, naming the op). Any WHILE in the branch keeps naming its subgraphs.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from hexnn_import.importers.tflite.fold import fold_constants
from hexnn_import.importers.tflite.reader import TFModel, TFOperator

#: most IF operators inlined in one model (a branch may hold further IFs)
MAX_INLINED = 256


def _splice(main: TFModel, op: TFOperator, branch: TFModel) -> list[TFOperator]:
    """The branch's operators rewritten onto main's tensors (new tensors appended for its inner ones)."""
    where: dict[int, int] = dict(zip(branch.inputs, op.inputs[1:]))
    rename: dict[int, int] = {}  # IF output -> the main tensor that now holds it (a passed-through input)
    for k, t in enumerate(branch.outputs):
        if t in where or branch.tensors[t].data is not None:
            rename[op.outputs[k]] = where.get(t, -2 - t)
        else:
            where[t] = op.outputs[k]
    for t in branch.tensors:
        if t.index not in where:
            where[t.index] = len(main.tensors)
            main.tensors.append(replace(t, index=len(main.tensors), name=f"{t.name}/if{op.index}"))
    for out, src in rename.items():
        if src < -1:  # a constant branch output: the IF output becomes that constant
            main.tensors[out] = replace(main.tensors[out], data=branch.tensors[-2 - src].data)
        else:
            _substitute(main, out, src)
    return [TFOperator(0, b.opname, [where[i] if i >= 0 else -1 for i in b.inputs],
                       [where[i] if i >= 0 else -1 for i in b.outputs], b.options, b.custom_code, b.custom_options)
            for b in branch.operators]


def _substitute(main: TFModel, old: int, new: int) -> None:
    """Every read of tensor ``old`` (operators, graph outputs) reads ``new`` instead."""
    for o in main.operators:
        o.inputs = [new if i == old else i for i in o.inputs]
    main.outputs = [new if i == old else i for i in main.outputs]


def inline_constant_ifs(model: TFModel) -> list[str]:
    """Inline every IF whose condition is constant (module doc), folding again after each; a note for each."""
    notes: list[str] = []
    while len(notes) < MAX_INLINED:
        op = next((o for o in model.operators if o.opname == "IF" and o.options is not None and o.inputs
                   and model.tensors[o.inputs[0]].data is not None), None)
        if op is None:
            break
        take = bool(np.asarray(model.tensors[op.inputs[0]].data).reshape(-1)[0])
        branch = model.subgraphs.get(op.options.ThenSubgraphIndex() if take else op.options.ElseSubgraphIndex())
        if branch is None or len(branch.inputs) != len(op.inputs) - 1 or len(branch.outputs) != len(op.outputs):
            break  # a malformed IF: left for the importer to refuse
        at = model.operators.index(op)
        model.operators[at:at + 1] = _splice(model, op, branch)
        for k, o in enumerate(model.operators):
            o.index = k
        notes.append(f"IF {model.tensors[op.outputs[0]].name}: its condition is constant ({take}), the "
                     f"{'then' if take else 'else'} branch is inlined")
        fold_constants(model)
    return notes
