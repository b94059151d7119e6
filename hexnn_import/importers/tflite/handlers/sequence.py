"""TFLite recurrent layers, unrolled: a Keras LSTM / GRU / SimpleRNN converted as a WHILE loop, and
UNIDIRECTIONAL_SEQUENCE_LSTM (float and int8; tf_keras's LSTM converts to it); and UNPACK, which a Keras
layer with ``unroll=True`` uses to cut its sequence into steps, and REVERSE_V2, with which a Bidirectional
layer runs its backward direction.

The loop is recognised by :mod:`.tflite.keras_rnn` (trip count from the cond subgraph, the cell's
weights and wiring from the body) and imported with the shared unrolled cell of
:mod:`.nodes.recurrent` over the static trip count, so its products become fully-connected layers
over all steps (input part) and per step (recurrent part). The WHILE outputs the graph reads are
bound: the output sequence ``[T, B, H]``, the last hidden state, the last cell state and the input
sequence passed through. A loop whose counters the graph reads after it, or that is not one of
these cells, is refused with the reason. Float models: the decomposition's tensors are calibrated
like any source tensor (their names are in ``graph.tensor_map``) or take run-time ranges.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import shape4
from hexnn_import.importers.nodes.core import reshape_value
from hexnn_import.importers.nodes.int16 import range16
from hexnn_import.importers.nodes.movement import concat, gather, slice_value
from hexnn_import.importers.nodes.recurrent import CELL16_EMITS, RECURRENT_EMITS, Cell, Gate, Unroller, rows_of
from hexnn_import.importers.tflite.fold import dequantize_const
from hexnn_import.importers.tflite.common import check_io, finish, out_shape
from hexnn_import.importers.tflite.importer import TFLiteImporter, tflite_op
from hexnn_import.importers.tflite.keras_rnn import LoopMatch, match_while
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.nodes.values import Value


def _read(imp: TFLiteImporter, index: int) -> bool:
    """Whether any operator or the graph's outputs read tensor ``index``."""
    return index in imp.model.outputs or any(index in op.inputs for op in imp.model.operators)


def _check_while(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """A Keras recurrent loop (tflite.keras_rnn) over a float32 sequence whose counters nothing reads after."""
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


# ---- UNIDIRECTIONAL_SEQUENCE_LSTM ---------------------------------------------------------------
#: input positions (LiteRT lstm_shared.h): input-to-gate weights, recurrent weights, gate biases (i, f, c, o)
W_X, W_H, BIAS = (1, 2, 3, 4), (5, 6, 7, 8), (12, 13, 14, 15)
#: peepholes, projection, layer-norm coefficients: refused when present
UNSUPPORTED = {9: "peephole", 10: "peephole", 11: "peephole", 16: "projection", 17: "projection",
               20: "layer normalization", 21: "layer normalization", 22: "layer normalization",
               23: "layer normalization"}
ACT_TANH = 4


def _has(op: TFOperator, pos: int) -> bool:
    return pos < len(op.inputs) and op.inputs[pos] >= 0


def _real(imp: TFLiteImporter, index: int) -> np.ndarray:
    """A constant's real values (float data, or int8 / int32 codes scaled)."""
    t = imp.tensor(index)
    data = t.data if t.dtype == "float32" else dequantize_const(t)
    assert data is not None
    return np.asarray(data, np.float64)


def _zero_state(imp: TFLiteImporter, index: int) -> bool:
    """A state input that starts at zero: a variable tensor (no data, no writer, not a graph input) or zeros."""
    t = imp.tensor(index)
    if t.data is not None:
        return not np.any(t.data)
    return index not in imp.model.inputs and not any(index in op.outputs for op in imp.model.operators)


def _check_sequence_lstm(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """No peepholes, projection, layer norm or CIFG; tanh; batch 1 or time-major; constant weights; zero
    initial states; a cell clip that cannot act (|c_t| <= t from a zero state) or none."""
    if len(op.inputs) < 20 or op.options is None:
        return "missing inputs or options"
    for pos, what in UNSUPPORTED.items():
        if _has(op, pos):
            return f"{what} inputs"
    if not all(_has(op, p) and imp.tensor(op.inputs[p]).data is not None for p in W_X + W_H + BIAS):
        return "coupled input and forget gates (CIFG) or non-constant weights"
    x, y = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    if x.dtype not in ("float32", "int8") or x.dtype != y.dtype or len(x.shape) != 3:
        return f"a {x.dtype} input of rank {len(x.shape)} (float32 or int8 sequences)"
    o = op.options
    steps, batch = (x.shape[0], x.shape[1]) if o.TimeMajor() else (x.shape[1], x.shape[0])
    if not o.TimeMajor() and batch != 1:
        return "batch-major input with batch > 1"
    hidden = imp.tensor(op.inputs[W_H[0]]).shape[0] if imp.tensor(op.inputs[W_H[0]]).shape else 0
    want = {p: (hidden, x.shape[2]) for p in W_X} | {p: (hidden, hidden) for p in W_H} | {p: (hidden,) for p in BIAS}
    bad = [p for p, shape in want.items() if tuple(imp.tensor(op.inputs[p]).shape) != shape]
    if bad or tuple(y.shape) != tuple(x.shape[:2]) + (hidden,):
        return f"weights, biases or output of shapes other than a {hidden}-unit cell's"
    if o.FusedActivationFunction() != ACT_TANH:
        return f"cell activation {o.FusedActivationFunction()} (tanh only)"
    if not (_zero_state(imp, op.inputs[18]) and _zero_state(imp, op.inputs[19])):
        return "initial states that are not zero"
    if 0 < o.CellClip() < steps:
        return f"cell clip {o.CellClip():g} below the sequence length {steps} (it could act)"
    if o.ProjClip() > 0:
        return "projection clip"
    return None


@tflite_op("UNIDIRECTIONAL_SEQUENCE_LSTM", RECURRENT_EMITS + CELL16_EMITS, _check_sequence_lstm)
def sequence_lstm(imp: TFLiteImporter, op: TFOperator) -> None:
    """LiteRT's LSTM (lstm_eval.cc, no peepholes / projection / layer norm) as the unrolled cell.

    Float: calibrated or run-time ranges. int8 (the full-integer kernel keeps a 16-bit cell state and
    16-bit gate intermediates): the hidden state is requantized onto the output's scale every step and the
    cell state is kept in 16 bits on the int16 state tensor's range, as the kernel does; the gates take
    run-time 8-bit ranges and the tanh reads the cell state in 8 bits, which is where the two differ. The
    state tensors are LiteRT variables that start at zero; the graph starts each run from zero.
    """
    x_t, y_t = imp.tensor(op.inputs[0]), imp.tensor(op.outputs[0])
    hidden = int(imp.tensor(op.inputs[W_H[0]]).shape[0])
    gates = {g: Gate(_real(imp, op.inputs[wx]), _real(imp, op.inputs[wh]), _real(imp, op.inputs[b]),
                     np.zeros(hidden)) for g, wx, wh, b in zip("ifco", W_X, W_H, BIAS)}
    cell = Cell("lstm", gates, hidden)
    time_major = bool(op.options.TimeMajor())
    steps, batch = (x_t.shape[0], x_t.shape[1]) if time_major else (x_t.shape[1], x_t.shape[0])
    out_range = None if y_t.dtype == "float32" else imp.qrange(y_t)
    if out_range is None:
        ranges = imp.float_range
    else:
        def ranges(key: str) -> tuple[float, float] | None:
            return out_range if key.endswith("/h") else None
    cell16 = None
    c_t = imp.tensor(op.inputs[19])
    if out_range is not None and c_t.dtype == "int16" and c_t.quant is not None:
        cell16 = range16(float(c_t.quant.scale[0]))
    x_rows = rows_of(imp, imp.value(op.inputs[0]), y_t.name)
    run = Unroller(imp, y_t.name, ranges, cell16).run(cell, x_rows, steps, batch, None, None, False, 0)
    rows = steps * batch
    y = concat(imp, run.h, 2, (1, 1, rows, hidden), imp.act_range(op.outputs[0]), f"{y_t.name}/sequence")
    imp.set_output(op.outputs[0], reshape_value(imp, y, shape4(y_t.shape), f"{y_t.name}/shape"))


# ---- UNPACK (a sequence unstacked into its steps: Keras recurrent layers with unroll=True) -----------
def _check_unpack(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized data of rank <= 4, ``num`` outputs along a valid axis."""
    why = check_io(imp, op, outputs=tuple(range(len(op.outputs))))
    if why or op.options is None:
        return why or "missing options"
    shape = imp.tensor(op.inputs[0]).shape
    axis = op.options.Axis() + (len(shape) if op.options.Axis() < 0 else 0)
    if not 0 <= axis < len(shape) or len(shape) > 4 or shape[axis] != len(op.outputs):
        return f"axis {op.options.Axis()} of shape {list(shape)} into {len(op.outputs)} outputs"
    return None


@tflite_op("UNPACK", ("QuantizedSlice_8", "QuantizedReshape", "Requantize_8to8"), _check_unpack)
def unpack(imp: TFLiteImporter, op: TFOperator) -> None:
    """UNPACK: output ``k`` is the QuantizedSlice_8 of index ``k`` along the axis (the codes unchanged), in the
    output's shape (the axis dropped), on the output's range (TFLite keeps the input's quantization)."""
    x_t = imp.tensor(op.inputs[0])
    shape = tuple(x_t.shape)
    axis = op.options.Axis() + (len(shape) if op.options.Axis() < 0 else 0)
    x = imp.value(op.inputs[0])
    ax4 = 4 - len(shape) + axis
    for k, out in enumerate(op.outputs):
        begin = [0, 0, 0, 0]
        begin[ax4] = k
        size = list(x.shape)
        size[ax4] = 1
        part = slice_value(imp, x, begin, size, f"{imp.tensor(out).name}/unpack")
        finish(imp, op, reshape_value(imp, part, out_shape(imp, op, k), f"{imp.tensor(out).name}/shape"), k)


# ---- REVERSE_V2 (a bidirectional layer's backward direction reads and writes its sequence reversed) ---------
def _check_reverse(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """Float32 or per-tensor quantized data of rank <= 4; one constant axis."""
    why = check_io(imp, op)
    if why:
        return why
    axes = imp.tensor(op.inputs[1]).data if len(op.inputs) > 1 else None
    rank = len(imp.tensor(op.inputs[0]).shape)
    if axes is None or np.asarray(axes).size != 1 or rank > 4:
        return "axes other than one constant axis"
    if not -rank <= int(np.asarray(axes).reshape(-1)[0]) < rank:
        return f"axis {int(np.asarray(axes).reshape(-1)[0])} of a rank-{rank} tensor"
    return None


@tflite_op("REVERSE_V2", ("Gather_8", "QuantizedReshape", "Requantize_8to8"), _check_reverse)
def reverse(imp: TFLiteImporter, op: TFOperator) -> None:
    """REVERSE_V2 along one axis: Gather_8 of the indices ``n-1 .. 0`` (the codes unchanged)."""
    x_t = imp.tensor(op.inputs[0])
    rank = len(x_t.shape)
    axis = int(np.asarray(imp.tensor(op.inputs[1]).data).reshape(-1)[0]) % rank
    ax4 = 4 - rank + axis
    x = imp.value(op.inputs[0])
    n = x.shape[ax4]
    index = imp.int_const(np.arange(n - 1, -1, -1), f"{x_t.name}/reverse/index")
    y = gather(imp, x, index, (1, 1, 1, n), 1, ax4, x.shape, f"{imp.tensor(op.outputs[0]).name}/reverse")
    finish(imp, op, y)
