"""TFLite recurrent layers: a Keras LSTM / GRU / SimpleRNN converted as a WHILE loop, unrolled.

The loop is recognised by :mod:`.tflite_keras_rnn` (trip count from the cond subgraph, the cell's
weights and wiring from the body) and imported with the shared unrolled cell of
:mod:`.emit_recurrent` over the static trip count, so its products become fully-connected layers
over all steps (input part) and per step (recurrent part). The WHILE outputs the graph reads are
bound: the output sequence ``[T, B, H]``, the last hidden state, the last cell state and the input
sequence passed through. A loop whose counters the graph reads after it, or that is not one of
these cells, is refused with the reason. Float models: the decomposition's tensors are calibrated
like any source tensor (their names are in ``graph.tensor_map``) or take run-time ranges.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import shape4
from hexnn_import.importers.emit import reshape_value
from hexnn_import.importers.emit_movement import concat
from hexnn_import.importers.emit_recurrent import RECURRENT_EMITS, Unroller, rows_of
from hexnn_import.importers.tflite_import import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite_keras_rnn import LoopMatch, match_while
from hexnn_import.importers.tflite_reader import TFOperator
from hexnn_import.importers.values import Value


def _read(imp: TFLiteImporter, index: int) -> bool:
    """Whether any operator or the graph's outputs read tensor ``index``."""
    return index in imp.model.outputs or any(index in op.inputs for op in imp.model.operators)


def _check_while(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A Keras recurrent loop (tflite_keras_rnn) over a float32 sequence whose counters nothing reads after."""
    m = match_while(imp.model, op)
    if isinstance(m, str):
        return m
    x = imp.tensor(op.inputs[m.x])
    if x.dtype != "float32" or x.data is not None:
        return f"a recurrent loop over a {x.dtype} sequence (float models only)"
    if any(_read(imp, op.outputs[k]) for k in m.counters):
        return "a recurrent loop whose counters are read after it"
    for k in (m.h, m.c):
        t = None if k is None else imp.tensor(op.inputs[k])
        if t is not None and (t.dtype != "float32" or tuple(t.shape) != (x.shape[1], m.cell.hidden)):
            return f"an initial state {t.name} of type {t.dtype} and shape {list(t.shape)}"
    return None


def _state(imp: TFLiteImporter, index: int, name: str) -> Value | None:
    """An initial state as ``[1, 1, B, H]`` (None: a constant zero, whose products are skipped)."""
    t = imp.tensor(index)
    if t.data is not None and not np.any(t.data):
        return None
    v = imp.qvalue(index)
    return reshape_value(imp, v, (1, 1, int(t.shape[0]), int(t.shape[1])), f"{name}/initial")


@tflite_op("WHILE", RECURRENT_EMITS, _check_while)
def while_loop(imp: TFLiteImporter, op: TFOperator) -> None:
    """Unroll a Keras recurrent loop (module doc) and bind the outputs the graph reads."""
    m = match_while(imp.model, op)
    assert isinstance(m, LoopMatch)
    name = imp.tensor(op.outputs[m.seq]).name
    x_t = imp.tensor(op.inputs[m.x])
    steps, batch = int(x_t.shape[0]), int(x_t.shape[1])
    x = imp.value(op.inputs[m.x])
    h0 = _state(imp, op.inputs[m.h], f"{name}/h")
    c0 = _state(imp, op.inputs[m.c], f"{name}/c") if m.c is not None else None
    run = Unroller(imp, name, imp.float_range).run(m.cell, rows_of(imp, x, name), steps, batch, h0, c0, False, 0)
    seq_out = op.outputs[m.seq]
    if _read(imp, seq_out):
        t = imp.tensor(seq_out)
        parts = run.h if m.full else [run.h_last]
        rows = len(parts) * batch
        y = concat(imp, parts, 2, (1, 1, rows, m.cell.hidden), imp.act_range(seq_out), f"{name}/sequence")
        imp.set_output(seq_out, reshape_value(imp, y, shape4(t.shape), f"{name}/sequence/shape"))
    for k, v in ((m.h, run.h_last), (m.c, run.c_last)):
        if k is not None and v is not None and _read(imp, op.outputs[k]):
            imp.set_output(op.outputs[k], reshape_value(imp, v, shape4(imp.tensor(op.outputs[k]).shape),
                                                        f"{imp.tensor(op.outputs[k]).name}/shape"))
    if _read(imp, op.outputs[m.x]):
        imp.set_output(op.outputs[m.x], x)
