"""Recognise a Keras recurrent layer converted as a TFLite WHILE loop (cond and body subgraphs).

Keras 3's LSTM, GRU and SimpleRNN reach TFLite as ``WHILE(t, t', seq, h[, c], x)`` over a
time-major ``x [T, B, I]``: the cond subgraph compares the two counters with the constant ``T``
(LESS, LOGICAL_AND), the body GATHERs ``x[t]``, applies the cell (two FULLY_CONNECTED products and
the gate arithmetic) and writes ``h`` into ``seq[t]`` (SLICE / CONCATENATION: TensorListSetItem).
:func:`match_while` reads the trip count from the cond, checks the body's wiring against the cell
equations of ``keras.layers.LSTMCell`` / ``GRUCell`` (``reset_after=True``) / ``SimpleRNNCell``
(default activations; gate order i, f, c, o and z, r, h) and returns the weights as an
:class:`~.nodes.recurrent.Cell`, or says why the loop is not one of them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.importers.nodes.recurrent import Cell, Gate
from hexnn_import.importers.tflite.reader import TFModel, TFOperator

#: most time steps a loop is unrolled into
MAX_TRIP = 512


@dataclass
class LoopMatch:
    """A WHILE recognised as a Keras recurrent layer: the cell, the trip count and the loop-variable
    positions of the sequence input, the output sequence (``full``: every step, else the last), the hidden
    and (LSTM) cell state, and the counters."""

    cell: Cell
    steps: int
    x: int
    seq: int
    h: int
    c: int | None
    counters: tuple[int, ...]
    full: bool = True  # the output sequence holds every step (False: only the last)


class _Body:
    """Producer / consumer look-ups over one subgraph."""

    def __init__(self, g: TFModel):
        self.g = g
        self.made_by = {t: op for op in g.operators for t in op.outputs}
        self.readers: dict[int, list[TFOperator]] = {}
        for op in g.operators:
            for t in op.inputs:
                self.readers.setdefault(t, []).append(op)

    def op(self, t: int, name: str) -> TFOperator | None:
        """The operator ``name`` that writes ``t`` (None when another or none does)."""
        op = self.made_by.get(t)
        return op if op is not None and op.opname == name else None

    def const(self, t: int) -> np.ndarray | None:
        return None if t < 0 else self.g.tensors[t].data

    def pair(self, t: int, name: str) -> set[int] | None:
        """The two operands of the binary ``name`` writing ``t``."""
        op = self.op(t, name)
        return set(op.inputs[:2]) if op is not None and len(op.inputs) >= 2 else None

    def unary(self, t: int, name: str) -> int | None:
        op = self.op(t, name)
        return op.inputs[0] if op is not None else None


def trip_count(cond: TFModel, init: list[np.ndarray | None]) -> int | str:
    """Iterations of a cond that is a LOGICAL_AND of ``LESS(counter, constant)`` (counters start at ``init``)."""
    b = _Body(cond)
    bounds = []
    for op in cond.operators:
        if op.opname == "LESS":
            k = cond.inputs.index(op.inputs[0]) if op.inputs[0] in cond.inputs else -1
            limit = b.const(op.inputs[1])
            if k < 0 or limit is None or init[k] is None:
                return "a loop condition on values that are not constant"
            bounds.append(int(np.asarray(limit).reshape(-1)[0]) - int(np.asarray(init[k]).reshape(-1)[0]))
        elif op.opname != "LOGICAL_AND":
            return f"a loop condition with {op.opname}"
    if not bounds:
        return "a loop condition that is not a counter bound"
    return max(0, min(bounds))


def _products(b: _Body, gather_out: int) -> tuple[TFOperator, TFOperator, int] | str:
    """The body's two FULLY_CONNECTED: of ``x[t]`` and of the hidden-state argument (its position)."""
    fcs = [op for op in b.g.operators if op.opname == "FULLY_CONNECTED"]
    fx = [op for op in fcs if op.inputs[0] == gather_out]
    fh = [op for op in fcs if op.inputs[0] in b.g.inputs]
    if len(fcs) != 2 or len(fx) != 1 or len(fh) != 1:
        return "a loop body without one input and one recurrent FULLY_CONNECTED"
    for op in fcs:
        w = b.const(op.inputs[1])
        if w is None or b.g.tensors[op.inputs[1]].dtype != "float32":
            return "a recurrent cell whose weights are not constant float32 (quantized loops are not unrolled)"
        if op.options is not None and (op.options.FusedActivationFunction() != 0 or op.options.KeepNumDims()):
            return "a recurrent product with a fused activation"
    return fx[0], fh[0], b.g.inputs.index(fh[0].inputs[0])


def _bias(b: _Body, op: TFOperator, rows: int) -> np.ndarray:
    data = b.const(op.inputs[2]) if len(op.inputs) > 2 else None
    return np.zeros(rows) if data is None else np.asarray(data, np.float64).reshape(-1)


def _leaves(b: _Body, t: int, out: list[int]) -> None:
    """The terms of a sum of ADDs (through RESHAPEs that only drop the batch axis)."""
    op = b.made_by.get(t)
    if op is not None and op.opname == "ADD" and op.options is not None and op.options.FusedActivationFunction() == 0:
        _leaves(b, op.inputs[0], out)
        _leaves(b, op.inputs[1], out)
    elif op is not None and op.opname == "RESHAPE":
        _leaves(b, op.inputs[0], out)
    else:
        out.append(t)


def match_while(main: TFModel, op: TFOperator) -> LoopMatch | str:
    """The Keras recurrent layer this WHILE runs (module doc), or why it is not one."""
    opts = op.options
    if opts is None:
        return "a WHILE without options"
    cond, body = main.subgraphs.get(opts.CondSubgraphIndex()), main.subgraphs.get(opts.BodySubgraphIndex())
    if cond is None or body is None:
        return "a WHILE naming a subgraph the file does not have"
    init = [main.tensors[t].data for t in op.inputs]
    steps = trip_count(cond, init)
    if isinstance(steps, str):
        return steps
    b = _Body(body)
    gathers = [g for g in body.operators if g.opname == "GATHER"]
    if len(gathers) != 1 or gathers[0].inputs[0] not in body.inputs or gathers[0].inputs[1] not in body.inputs:
        return "a loop body that does not read one time step of a sequence (GATHER)"
    x_pos, t_pos = body.inputs.index(gathers[0].inputs[0]), body.inputs.index(gathers[0].inputs[1])
    if init[t_pos] is None or int(np.asarray(init[t_pos]).reshape(-1)[0]) != 0:
        return "a time index that does not start at 0"
    x_shape = main.tensors[op.inputs[x_pos]].shape
    if len(x_shape) != 3 or x_shape[0] != steps or not 0 < steps <= MAX_TRIP:
        return f"{steps} iterations over a sequence of shape {list(x_shape)} (one per time step, at most {MAX_TRIP})"
    found = _products(b, gathers[0].outputs[0])
    if isinstance(found, str):
        return found
    fx, fh, h_pos = found
    hidden = int(main.tensors[op.inputs[h_pos]].shape[-1])
    wx, wh = np.asarray(b.const(fx.inputs[1])), np.asarray(b.const(fh.inputs[1]))
    gates = wx.shape[0] // max(hidden, 1)
    if wx.ndim != 2 or wh.ndim != 2 or wx.shape != (gates * hidden, x_shape[2]) or wh.shape != (gates * hidden, hidden):
        return f"recurrent weights of shapes {list(wx.shape)} and {list(wh.shape)} for {hidden} units"
    matcher = {4: _lstm, 3: _gru, 1: _rnn}.get(gates)
    if matcher is None:
        return f"a recurrent cell of {gates} gates"
    cell = matcher(b, fx, fh, h_pos, hidden)
    if isinstance(cell, str):
        return cell
    cell_obj, c_pos = cell
    seq = _sequence_output(b, h_pos)
    if seq is None:
        return "a loop body that does not write the hidden state into its output sequence"
    seq_pos, full = seq
    counters = tuple(k for k in range(len(body.inputs)) if k not in (x_pos, seq_pos, h_pos, c_pos))
    if body.outputs[x_pos] != body.inputs[x_pos]:
        return "a loop body that changes its input sequence"
    return LoopMatch(cell_obj, steps, x_pos, seq_pos, h_pos, c_pos, counters, full)


def _sequence_output(b: _Body, h_pos: int) -> tuple[int, bool] | None:
    """The loop variable the body writes ``h`` into and whether it is the whole sequence: a CONCATENATION
    around RESHAPE(h) (return_sequences) or RESHAPE(h) itself (the last output only)."""
    h_new = b.g.outputs[h_pos]
    for k, out in enumerate(b.g.outputs):
        cat = b.op(out, "CONCATENATION")
        if cat is not None and any(b.unary(t, "RESHAPE") == h_new for t in cat.inputs):
            return k, True
    for k, out in enumerate(b.g.outputs):
        if k != h_pos and b.unary(out, "RESHAPE") == h_new:
            return k, False
    return None


def _gate_split(b: _Body, n: int) -> list[int] | str:
    """The ``n`` outputs of the body's one SPLIT into gates."""
    splits = [s for s in b.g.operators if s.opname == "SPLIT" and len(s.outputs) == n]
    if len(splits) != 1:
        return f"a loop body without one SPLIT into {n} gates"
    return splits[0].outputs


def _lstm(b: _Body, fx: TFOperator, fh: TFOperator, h_pos: int, hidden: int) -> tuple[Cell, int] | str:
    """keras LSTMCell: ``[i f c o] = x W + h R + bias``; ``c' = f c + i tanh(c~)``, ``h' = o tanh(c')``."""
    parts = _gate_split(b, 4)
    if isinstance(parts, str):
        return parts
    split = b.made_by[parts[0]]
    terms: list[int] = []
    _leaves(b, split.inputs[1], terms)
    bias = _bias(b, fx, 4 * hidden) + _bias(b, fh, 4 * hidden)
    extra = [t for t in terms if t not in (fx.outputs[0], fh.outputs[0])]
    if len(terms) - len(extra) != 2 or any(b.const(t) is None for t in extra):
        return "an LSTM cell whose gates are not x W + h R + bias"
    for t in extra:
        bias = bias + np.asarray(b.const(t), np.float64).reshape(-1)
    g = b.g
    h_new = g.outputs[h_pos]
    o_tc = b.pair(h_new, "MUL")
    i, f, c, o = parts
    act = {p: next((r for r in b.readers.get(p, []) if r.opname in ("LOGISTIC", "TANH")), None) for p in parts}
    if [a.opname if a else None for a in (act[i], act[f], act[c], act[o])] != ["LOGISTIC", "LOGISTIC", "TANH",
                                                                                "LOGISTIC"]:
        return "an LSTM cell whose activations are not sigmoid / tanh in the order i, f, c, o"
    si, sf, tg, so = (act[p].outputs[0] for p in (i, f, c, o))  # type: ignore[union-attr]
    if o_tc is None or so not in o_tc:
        return "an LSTM cell whose hidden state is not o * tanh(c)"
    tc = next(iter(o_tc - {so}))
    c_new = b.unary(tc, "TANH")
    terms_c = b.pair(c_new, "ADD") if c_new is not None else None
    if terms_c is None or len(terms_c) != 2:
        return "an LSTM cell whose state is not f * c + i * g"
    products = [b.pair(t, "MUL") for t in terms_c]
    if None in products or {si, tg} not in products:
        return "an LSTM cell whose state is not f * c + i * g"
    fc = next(p for p in products if p != {si, tg})
    if sf not in fc or len(fc - {sf}) != 1:  # type: ignore[operator]
        return "an LSTM cell whose state is not f * c + i * g"
    c_arg = next(iter(fc - {sf}))  # type: ignore[operator]
    if c_arg not in g.inputs or g.outputs[g.inputs.index(c_arg)] != c_new:
        return "an LSTM cell whose state does not carry to the next step"
    c_pos = g.inputs.index(c_arg)
    return Cell("lstm", _gates(b, fx, fh, ("i", "f", "c", "o"), hidden, bias, None), hidden), c_pos


def _gru(b: _Body, fx: TFOperator, fh: TFOperator, h_pos: int, hidden: int) -> tuple[Cell, None] | str:
    """keras GRUCell (reset_after=True): ``z = s(x_z + h_z)``, ``r = s(x_r + h_r)``,
    ``n = tanh(x_h + r * h_h)``, ``h' = z h + (1 - z) n`` with ``h_*`` of ``h R + b_rec``."""
    parts = _gate_split(b, 3)
    if isinstance(parts, str):
        return parts
    g = b.g
    h_arg = g.inputs[h_pos]
    rec = sorted((op for op in g.operators if op.opname == "STRIDED_SLICE" and op.inputs[0] == fh.outputs[0]),
                 key=lambda s: int(np.asarray(b.const(s.inputs[1])).reshape(-1)[-1]))
    if len(rec) != 3 or [int(np.asarray(b.const(s.inputs[1])).reshape(-1)[-1]) for s in rec] != [0, hidden, 2 * hidden]:
        return "a GRU cell whose recurrent product is not split into z, r, h (reset_after=True)"
    hz, hr, hh = (s.outputs[0] for s in rec)
    xz, xr, xh = parts

    def sig_of(pair: set[int]) -> int | None:
        for op in g.operators:
            if op.opname == "LOGISTIC" and b.pair(op.inputs[0], "ADD") == pair:
                return op.outputs[0]
        return None

    z, r = sig_of({xz, hz}), sig_of({xr, hr})
    if z is None or r is None:
        return "a GRU cell whose gates are not sigmoid(x + h) in the order z, r, h"
    terms = b.pair(g.outputs[h_pos], "ADD")
    products = [b.pair(t, "MUL") for t in terms] if terms and len(terms) == 2 else []
    zh = [p for p in products if p == {z, h_arg}]
    other = [p for p in products if p is not None and p != {z, h_arg}]
    if len(zh) != 1 or len(other) != 1:
        return "a GRU cell whose state is not z * h + (1 - z) * n"
    one_minus, n = None, None
    for t in other[0]:
        sub = b.op(t, "SUB")
        if sub is not None and sub.inputs[1] == z and np.all(np.asarray(b.const(sub.inputs[0])) == 1.0):
            one_minus = t
        else:
            n = t
    pre_n = b.unary(n, "TANH") if n is not None else None
    if one_minus is None or pre_n is None or b.pair(pre_n, "ADD") is None:
        return "a GRU cell whose state is not z * h + (1 - z) * tanh(x_h + r * h_h)"
    inner = b.pair(pre_n, "ADD") - {xh}  # type: ignore[operator]
    if len(inner) != 1 or b.pair(next(iter(inner)), "MUL") != {r, hh}:
        return "a GRU cell whose candidate is not tanh(x_h + r * h_h) (reset_after=True)"
    return Cell("gru", _gates(b, fx, fh, ("z", "r", "h"), hidden, None, None), hidden, True), None


def _rnn(b: _Body, fx: TFOperator, fh: TFOperator, h_pos: int, hidden: int) -> tuple[Cell, None] | str:
    """keras SimpleRNNCell: ``h' = tanh(x W + b + h R)``."""
    pre = b.unary(b.g.outputs[h_pos], "TANH")
    if pre is None or b.pair(pre, "ADD") != {fx.outputs[0], fh.outputs[0]}:
        return "a SimpleRNN cell that is not tanh(x W + b + h R)"
    return Cell("rnn", _gates(b, fx, fh, ("h",), hidden, None, None), hidden), None


def _gates(b: _Body, fx: TFOperator, fh: TFOperator, names: tuple[str, ...], hidden: int,
           bias_x: np.ndarray | None, bias_h: np.ndarray | None) -> dict[str, Gate]:
    """Per-gate weights from the two products (rows in ``names`` order); LSTM's summed bias on the x side."""
    wx = np.asarray(b.const(fx.inputs[1]), np.float64)
    wh = np.asarray(b.const(fh.inputs[1]), np.float64)
    rows = len(names) * hidden
    bx = bias_x if bias_x is not None else _bias(b, fx, rows)
    bh = np.zeros(rows) if bias_x is not None else (bias_h if bias_h is not None else _bias(b, fh, rows))
    return {n: Gate(wx[k * hidden:(k + 1) * hidden], wh[k * hidden:(k + 1) * hidden],
                    bx[k * hidden:(k + 1) * hidden], bh[k * hidden:(k + 1) * hidden]) for k, n in enumerate(names)}
