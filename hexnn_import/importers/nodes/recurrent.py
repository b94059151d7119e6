"""Recurrent layers (LSTM, GRU, simple RNN) unrolled over a static sequence onto documented ops.

Shared by ONNX ``LSTM`` / ``GRU`` / ``RNN`` (onnx/handlers/recurrent.py) and TFLite
``UNIDIRECTIONAL_SEQUENCE_LSTM`` (tflite/handlers/sequence.py). The cell equations are the ONNX operator
specification's (Operators.md, LSTM / GRU / RNN, default activations) and LiteRT's
``lstm_eval.cc`` (no peepholes, no projection, no layer norm):

* the input part of every gate, ``x_t W_g^T + b_g``, for all time steps at once: one fully-connected
  layer per gate over the ``T * B`` rows (emit.emit_conv, a Supernode where the ranges are fixed),
  then one QuantizedSlice_8 of ``B`` rows per step;
* the recurrent part per step, ``h_{t-1} R_g^T``, a fully-connected layer on ``[1, 1, B, H]``, added by
  QuantizedAdd_8p8to8 (skipped while the state is the zero the sequence starts from); an add on run-time
  ranges reads its first operand's max raised to 1e-30 (Maximum_f), so two all-zero operands on ``[0, 0]``
  still add (``Unroller.nonzero_width``);
* QuantizedSigmoid_8 / QuantizedTanh_8 on the gates (fixed output ranges), QuantizedMul_8x8to32
  products requantized to 8 bits, QuantizedAdd_8p8to8 sums;
* GRU's ``(1 - z)`` is ``sigmoid(-z_pre)`` (QuantizedNeg_8 is exact), so ``h = sigmoid(-z) * n + z * h``;
* a quantized LSTM whose source keeps a 16-bit cell state (LiteRT's int8 kernel) keeps it in 16 bits on the
  same range (``cell16``: QuantizedMul_u16 / QuantizedAdd_u16, saturating there as the int16 state does),
  read in 8 bits on ``[-4, 4]`` for its tanh.

Ranges: every tensor of the decomposition has a name (``<layer>/d<dir>/t<step>/<part>``); its range
is ``ranges(name)``: the importer's calibrated range for a float model (the names are recorded in
``graph.tensor_map``, so calibration observes them like any source tensor), a range the source
model declares (a quantized TFLite LSTM's intermediate scales), or None: the range is found at run
time (QuantizeDownAndShrinkRange_32to8).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from hexnn_import.graph import NNPad, OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder, calibrated_range
from hexnn_import.importers.nodes.core import Range, emit_conv, reshape_value
from hexnn_import.importers.nodes.activation import emit_sigmoid, emit_tanh, quint8_const
from hexnn_import.importers.nodes.elementwise import emit_add, emit_mul, emit_neg
from hexnn_import.importers.nodes.int16 import binary16, to16, to8
from hexnn_import.importers.nodes.movement import slice_value
from hexnn_import.importers.nodes.values import Value
from hexnn_import.importers.nodes.weights import float_layer_weights
from hexnn_import.ops.quant import quantize_u8

#: the hexagon_nn ops a recurrent layer emits (beside emit_conv's chain)
RECURRENT_EMITS = ("QuantizedConv2d_8x8to32", "QuantizedChannelScale_32xf", "QuantizedBiasAdd_32p32to32",
                   "Requantize_32to8", "QuantizeDownAndShrinkRange_32to8", "Supernode_8x8p32to8",
                   "QuantizedSlice_8", "QuantizedAdd_8p8to8", "QuantizedAdd_8p8to32", "QuantizedMul_8x8to32",
                   "QuantizedSigmoid_8", "QuantizedTanh_8", "QuantizedNeg_8", "QuantizedReshape",
                   "QuantizedConcat_8", "Requantize_8to8", "Maximum_f")
#: what a 16-bit cell state adds (``Unroller.cell16``)
CELL16_EMITS = ("Convert_8_u16", "Convert_u16_8", "QuantizedMul_u16", "QuantizedAdd_u16")

RangeOf = Callable[[str], "Range | None"]
#: the least width of a run-time range an add reads (``Unroller.add``): far below any step that matters
MIN_WIDTH = 1e-30
#: the 8-bit input range of the tanh of a 16-bit cell state: tanh(4) is within half a code of its limit
TANH_INPUT = (-4.0, 4.0)


@dataclass
class Gate:
    """One gate: input weights ``wx [H, I]``, recurrent weights ``wh [H, H]``, the input-side bias ``bx``
    and the recurrent-side bias ``bh`` (kept apart only where GRU's ``linear_before_reset`` needs it)."""

    wx: np.ndarray
    wh: np.ndarray
    bx: np.ndarray
    bh: np.ndarray


@dataclass
class Cell:
    """A recurrent cell: ``kind`` lstm (gates i, f, c, o), gru (z, r, h) or rnn (h, with ``act``)."""

    kind: str
    gates: dict[str, Gate]
    hidden: int
    linear_before_reset: bool = False
    act: str = "tanh"


@dataclass
class Direction:
    """What one direction produced: ``h[t]`` per time index, the last hidden and cell state."""

    h: list[Value]
    h_last: Value
    c_last: Value | None


class Unroller:
    """Appends one recurrent layer's nodes through a builder (module doc)."""

    def __init__(self, b: GraphBuilder, name: str, ranges: RangeOf, cell16: Range | None = None):
        self.b, self.name, self.ranges = b, name, ranges
        #: an LSTM cell state kept in 16 bits on this range (a quantized TFLite LSTM's int16 cell state)
        self.cell16 = cell16
        self._floor: Ref | None = None  # the MIN_WIDTH constant, made once per layer

    # ---- helpers -------------------------------------------------------------------------
    def tracked(self, key: str, v: Value) -> Value:
        """Record ``v`` under its decomposition name (calibration and per-layer reads see it)."""
        self.b.map_tensor(key, v)
        return v

    def fc(self, x: Value, w: np.ndarray, bias: np.ndarray, key: str) -> Value:
        """``x [1,1,rows,K] @ w.T + bias`` (``w [N, K]`` float, quantized per output channel)."""
        lw = float_layer_weights(np.asarray(w, np.float64), 0, key)
        n, k = lw.codes.shape
        wq = np.ascontiguousarray(lw.codes.T.reshape(1, 1, k, n))
        rows = x.shape[2]
        y = emit_conv(self.b, key, x, wq, lw.w_range, lw.k, np.asarray(bias, np.float64), self.ranges(key),
                      (1, 1), NNPad.VALID, (1, 1, rows, n))
        return self.tracked(key, y)

    def add(self, a: Value, c: Value, key: str) -> Value:
        """``a + c``; with run-time ranges ``a``'s max is raised to :data:`MIN_WIDTH` (:meth:`nonzero_width`)."""
        out = self.ranges(key)
        if out is None and a.range is None and c.range is None:
            a = self.nonzero_width(a, key)
        return self.tracked(key, emit_add(self.b, a, c, out, key))

    def nonzero_width(self, v: Value, key: str) -> Value:
        """``v`` on ``[min, max(max, MIN_WIDTH)]`` (Maximum_f on its max): the same codes, the same values.

        Both operands of a run-time add are all zero at times (a saturated GRU ``1 - z`` at a reverse
        direction's first step, then ``(1 - z) n`` and ``z h`` both zero; a zero input without bias while
        the state is zero): QuantizeDownAndShrinkRange_32to8 gives both the range ``[0, 0]``, which
        op_addsubmul_8to32.c ``addsub_832_execute`` rejects ("bad input scale"). On ``[0, 1e-30]`` the zero
        operand takes gain 0 as it did on ``[0, 0]``; a max of at least ``MIN_WIDTH`` passes unchanged, so
        every other run gives the same bits (prepare's QuantizedAdd_8p8to8 too).
        """
        assert v.mx is not None
        if self._floor is None:
            self._floor = self.b.float_const(MIN_WIDTH, f"{self.name}/min_width")
        node = self.b.graph.append("Maximum_f", [v.mx, self._floor], [OutputDef.scalar()], name=f"{key}/width")
        return replace(v, mx=Ref(node.node_id, 0))

    def mul(self, a: Value, c: Value, key: str) -> Value:
        return self.tracked(key, emit_mul(self.b, a, c, self.ranges(key), key))

    def sigmoid(self, x: Value, key: str) -> Value:
        return self.tracked(key, emit_sigmoid(self.b, x, None, key))

    def tanh(self, x: Value, key: str) -> Value:
        return self.tracked(key, emit_tanh(self.b, x, key))

    def act(self, kind: str, x: Value, key: str) -> Value:
        return self.sigmoid(x, key) if kind == "sigmoid" else self.tanh(x, key)

    # ---- the sequence ----------------------------------------------------------------------
    def input_parts(self, cell: Cell, rows: Value, d: int) -> dict[str, Value]:
        """``x W_g^T + b_g`` for every gate over all ``T * B`` rows (module doc)."""
        out = {}
        for g, gate in cell.gates.items():
            bias = gate.bx if (cell.kind == "gru" and g == "h" and cell.linear_before_reset) else gate.bx + gate.bh
            out[g] = self.fc(rows, gate.wx, bias, f"{self.name}/d{d}/x_{g}")
        return out

    def pre(self, cell: Cell, parts: dict[str, Value], g: str, h: Value | None, t: int, batch: int, key: str) -> Value:
        """A gate's pre-activation at step ``t``: its input rows plus ``h R_g^T`` (none while h is zero)."""
        xs = slice_value(self.b, parts[g], [0, 0, t * batch, 0], [1, 1, batch, cell.hidden], f"{key}/x_{g}")
        if h is None:
            return xs
        rec = self.fc(h, cell.gates[g].wh, np.zeros(cell.hidden), f"{key}/h_{g}")
        return self.add(xs, rec, f"{key}/{g}_pre")

    def run(self, cell: Cell, x_rows: Value, steps: int, batch: int, h0: Value | None, c0: Value | None,
            reverse: bool, d: int) -> Direction:
        """Unroll one direction over ``x_rows [1, 1, steps * batch, I]`` (rows time-major)."""
        parts = self.input_parts(cell, x_rows, d)
        h, c = h0, c0
        hs: list[Value | None] = [None] * steps
        order = range(steps - 1, -1, -1) if reverse else range(steps)
        for t in order:
            key = f"{self.name}/d{d}/t{t}"
            if cell.kind == "lstm":
                h, c = self.lstm_step(cell, parts, h, c, t, batch, key)
            elif cell.kind == "gru":
                h = self.gru_step(cell, parts, h, t, batch, key)
            else:
                h = self.act(cell.act, self.pre(cell, parts, "h", h, t, batch, key), f"{key}/h")
            hs[t] = h
        assert h is not None
        return Direction([v for v in hs if v is not None], h, c)

    def lstm_step(self, cell: Cell, parts: dict[str, Value], h: Value | None, c: Value | None, t: int, batch: int,
                  key: str) -> tuple[Value, Value]:
        """``c = f c + i g``, ``h = o tanh(c)`` with i, f, o sigmoid and g tanh of their pre-activations."""
        i = self.sigmoid(self.pre(cell, parts, "i", h, t, batch, key), f"{key}/i")
        f = self.sigmoid(self.pre(cell, parts, "f", h, t, batch, key), f"{key}/f") if c is not None else None
        g = self.tanh(self.pre(cell, parts, "c", h, t, batch, key), f"{key}/g")
        o = self.sigmoid(self.pre(cell, parts, "o", h, t, batch, key), f"{key}/o")
        if self.cell16 is not None:
            c_new, c8 = self.cell_state16(i, f, g, c, key)
        else:
            ig = self.mul(i, g, f"{key}/ig")
            c_new = ig if c is None or f is None else self.add(self.mul(f, c, f"{key}/fc"), ig, f"{key}/c")
            c8 = self.tracked(f"{key}/c", c_new)
        h_new = self.mul(o, self.tanh(c8, f"{key}/tanh_c"), f"{key}/h")
        return h_new, c_new

    def cell_state16(self, i: Value, f: Value | None, g: Value, c: Value | None, key: str) -> tuple[Value, Value]:
        """``c = f c + i g`` in 16 bits on :attr:`cell16` (QuantizedMul_u16, QuantizedAdd_u16, saturating there
        as LiteRT's int16 cell state does), and ``c`` in 8 bits for the tanh (Convert_u16_8)."""
        assert self.cell16 is not None
        b, rng = self.b, self.cell16
        ig = binary16(b, "QuantizedMul_u16", to16(b, i, f"{key}/i"), to16(b, g, f"{key}/g"), rng, i.shape,
                      f"{key}/ig16")
        c_new = ig
        if c is not None and f is not None:
            fc = binary16(b, "QuantizedMul_u16", to16(b, f, f"{key}/f"), c, rng, i.shape, f"{key}/fc16")
            c_new = binary16(b, "QuantizedAdd_u16", fc, ig, rng, i.shape, f"{key}/c16")
        return c_new, self.tracked(f"{key}/c", to8(b, c_new, f"{key}/c", within=TANH_INPUT))

    def gru_step(self, cell: Cell, parts: dict[str, Value], h: Value | None, t: int, batch: int, key: str) -> Value:
        """ONNX GRU: ``h' = (1 - z) n + z h`` with ``n = tanh(x W_h + b + r (h R_h + Rb_h))`` (linear before
        reset) or ``tanh(x W_h + (r h) R_h + b)``; ``1 - z`` is ``sigmoid(-z_pre)``."""
        z_pre = self.pre(cell, parts, "z", h, t, batch, key)
        z = self.sigmoid(z_pre, f"{key}/z")
        one_minus_z = self.sigmoid(emit_neg(self.b, z_pre, f"{key}/neg_z"), f"{key}/1-z")
        xs = slice_value(self.b, parts["h"], [0, 0, t * batch, 0], [1, 1, batch, cell.hidden], f"{key}/x_h")
        gate = cell.gates["h"]
        if h is None and (not cell.linear_before_reset or not np.any(gate.bh)):  # r h is zero (bias in xs)
            pre_n = xs
        elif h is None:  # linear before reset from the zero state: r (0 R_h + Rb_h) = r Rb_h
            r = self.sigmoid(self.pre(cell, parts, "r", h, t, batch, key), f"{key}/r")
            rb = self.const(gate.bh, f"{key}/Rb_h")
            pre_n = self.add(xs, self.mul(r, rb, f"{key}/rh"), f"{key}/h_pre")
        else:
            r = self.sigmoid(self.pre(cell, parts, "r", h, t, batch, key), f"{key}/r")
            if cell.linear_before_reset:
                rec = self.mul(r, self.fc(h, gate.wh, gate.bh, f"{key}/h_h"), f"{key}/rh")
            else:
                rec = self.fc(self.mul(r, h, f"{key}/rh"), gate.wh, np.zeros(cell.hidden), f"{key}/h_h")
            pre_n = self.add(xs, rec, f"{key}/h_pre")
        n = self.tanh(pre_n, f"{key}/n")
        zn = self.mul(one_minus_z, n, f"{key}/zn")
        if h is None:
            return self.tracked(f"{key}/h", zn)
        return self.add(zn, self.mul(z, h, f"{key}/zh"), f"{key}/h")

    def const(self, real: np.ndarray, key: str) -> Value:
        """A ``[1, 1, 1, n]`` quint8 constant on its own min / max (zero exact)."""
        rng = calibrated_range(float(np.min(real)), float(np.max(real)))
        codes = quantize_u8(np.asarray(real, np.float64), *rng)
        return quint8_const(self.b, codes.reshape(1, 1, 1, -1), rng, key)


def rows_of(b: GraphBuilder, x: Value, name: str) -> Value:
    """``x`` as ``[1, 1, rows, depth]`` (the layout the fully-connected products take)."""
    rows = int(np.prod(x.shape[:3]))
    return reshape_value(b, x, (1, 1, rows, x.shape[3]), f"{name}/rows")
