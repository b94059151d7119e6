"""keras's decomposed LayerNormalization in a TFLite file, recognised and imported as one LayerNorm.

keras 3 (``LayerNormalization.call``: ``ops.moments``, ``rsqrt(variance + epsilon) * gamma``,
``inputs * inv + (-mean * inv + beta)``) converts to (TFLite converter, float and int8)::

    m  = MEAN(x, [-1], keep_dims)           nm = NEG(m)   (int8: DEQUANTIZE -> NEG -> QUANTIZE)
    sd = SQUARED_DIFFERENCE(x, m)           v  = MEAN(sd, [-1], keep_dims)
    r  = RSQRT(ADD(v, eps))                 g  = MUL(r, gamma)     (no MUL when gamma is folded away)
    y  = ADD(MUL(x, g), MUL(nm, g) [+ beta])   (either operand order; the beta ADD may be folded away)

:func:`find_layer_norms` matches that chain (every inner tensor read only inside it, constants where
the chain has them) and the importer emits ``nodes.norm.emit_layer_norm`` on its last operator instead
of the ten ops: one normalization with exact integer statistics instead of ten 8-bit roundings, and a
float model imported without calibration needs no fixed range for SQUARED_DIFFERENCE / RSQRT.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hexnn_import.importers.nodes.norm import emit_layer_norm
from hexnn_import.importers.tflite.fold import dequantize_const
from hexnn_import.importers.tflite.importer import TFLiteImporter
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.tflite.registry import Fused


class _Graph:
    """Producers and readers of the model's tensors."""

    def __init__(self, imp: TFLiteImporter) -> None:
        self.imp = imp
        self.producer: dict[int, TFOperator] = {}
        self.readers: dict[int, list[TFOperator]] = {}
        for op in imp.model.operators:
            for o in op.outputs:
                self.producer[o] = op
            for i in op.inputs:
                if i >= 0:
                    self.readers.setdefault(i, []).append(op)
        self.outputs = set(imp.model.outputs)

    def sole(self, t: int, opname: str) -> TFOperator | None:
        """The one reader of inner tensor ``t`` when it is ``opname`` (and ``t`` no graph output)."""
        r = self.readers.get(t, [])
        return r[0] if len(r) == 1 and r[0].opname == opname and t not in self.outputs else None

    def const(self, t: int) -> np.ndarray | None:
        """The real values of a constant tensor (float data, or codes dequantized)."""
        tt = self.imp.tensor(t)
        if tt.data is None:
            return None
        real = dequantize_const(tt)
        return np.asarray(real if real is not None else tt.data, dtype=np.float64)


def _other(op: TFOperator, t: int) -> int | None:
    """The input of a binary ``op`` that is not ``t`` (None when ``t`` is not one of them)."""
    a, b = op.inputs[0], op.inputs[1]
    return b if a == t else a if b == t else None


def _const_other(g: _Graph, op: TFOperator, t: int) -> np.ndarray | None:
    """The constant other operand of binary ``op`` (None when it has none)."""
    o = _other(op, t)
    return None if o is None or o < 0 else g.const(o)


def _last_axis_mean(g: _Graph, op: TFOperator) -> bool:
    if op.opname != "MEAN" or not op.inputs:  # ops without inputs (VAR_HANDLE, CALL_ONCE) too
        return False
    axes = g.const(op.inputs[1]) if len(op.inputs) > 1 else None
    rank = len(g.imp.tensor(op.inputs[0]).shape)
    return (op.opname == "MEAN" and axes is not None and axes.size == 1 and int(axes.reshape(-1)[0]) % rank
            == rank - 1 and len(g.imp.tensor(op.outputs[0]).shape) == rank)


def _neg_of(g: _Graph, m: int) -> tuple[int, list[TFOperator]] | None:
    """``-m`` as the converter writes it: NEG, or DEQUANTIZE -> NEG -> QUANTIZE; (tensor, its ops)."""
    for r in g.readers.get(m, []):
        if r.opname == "NEG":
            return r.outputs[0], [r]
        if r.opname == "DEQUANTIZE":
            neg = g.sole(r.outputs[0], "NEG")
            q = g.sole(neg.outputs[0], "QUANTIZE") if neg is not None else None
            if q is not None:
                return q.outputs[0], [r, neg, q]
    return None


def _match(g: _Graph, m_op: TFOperator) -> tuple[list[TFOperator], int, int, np.ndarray, np.ndarray] | None:
    """(chain ops, x, y, gamma, beta) of the LayerNorm whose first MEAN is ``m_op``, or None."""
    x, m = m_op.inputs[0], m_op.outputs[0]
    sds = [r for r in g.readers.get(m, []) if r.opname == "SQUARED_DIFFERENCE" and _other(r, m) == x]
    neg = _neg_of(g, m)
    if len(sds) != 1 or neg is None or len(g.readers.get(m, [])) != 2:
        return None
    v_op = g.sole(sds[0].outputs[0], "MEAN")
    add = g.sole(v_op.outputs[0], "ADD") if v_op is not None and _last_axis_mean(g, v_op) else None
    eps = _const_other(g, add, v_op.outputs[0]) if add is not None else None
    rs = g.sole(add.outputs[0], "RSQRT") if eps is not None and eps.size == 1 else None
    if rs is None:
        return None
    ops = [m_op, *neg[1], sds[0], v_op, add, rs]
    r, gamma = rs.outputs[0], np.ones(1)
    mg = g.sole(r, "MUL")
    if mg is not None and _const_other(g, mg, r) is not None:
        gamma, r = _const_other(g, mg, r), mg.outputs[0]  # type: ignore[assignment]
        ops.append(mg)
    muls = g.readers.get(r, [])
    if len(muls) != 2 or any(u.opname != "MUL" for u in muls) or r in g.outputs:
        return None
    by_x = [u for u in muls if _other(u, r) == x]
    by_n = [u for u in muls if _other(u, r) == neg[0]]
    if len(by_x) != 1 or len(by_n) != 1 or len(g.readers.get(neg[0], [])) != 1:
        return None
    res, beta = by_n[0].outputs[0], np.zeros(1)
    ops += [by_x[0], by_n[0]]
    add_b = g.sole(res, "ADD")
    if add_b is not None and _const_other(g, add_b, res) is not None:
        beta, res = _const_other(g, add_b, res), add_b.outputs[0]  # type: ignore[assignment]
        ops.append(add_b)
    last = g.sole(res, "ADD")
    if last is None or _other(last, res) != by_x[0].outputs[0] or len(g.readers.get(by_x[0].outputs[0], [])) != 1:
        return None
    return ops + [last], x, last.outputs[0], gamma, beta


def _fits(imp: TFLiteImporter, x: int, y: int, gamma: np.ndarray, beta: np.ndarray) -> bool:
    """Rank <= 4, float or per-tensor quantized x and y of one kind, gamma / beta one value or one per feature."""
    xt, yt = imp.tensor(x), imp.tensor(y)
    d = xt.shape[-1] if xt.shape else 0
    kinds = {t.dtype for t in (xt, yt)}
    ok_kind = kinds == {"float32"} or (len(kinds) == 1 and all(imp.act_range(i) is not None for i in (x, y)))
    return (0 < len(xt.shape) <= 4 and tuple(xt.shape) == tuple(yt.shape) and ok_kind
            and gamma.size in (1, d) and beta.size in (1, d) and bool(np.all(np.isfinite(gamma)))
            and bool(np.all(np.isfinite(beta))))


def _emitter(x: int, y: int, gamma: np.ndarray, beta: np.ndarray) -> Callable[[TFLiteImporter], None]:
    def emit(imp: TFLiteImporter) -> None:
        d = imp.tensor(x).shape[-1]
        v = emit_layer_norm(imp, imp.qvalue(x), np.broadcast_to(gamma.reshape(-1), (d,)),
                            np.broadcast_to(beta.reshape(-1), (d,)), imp.act_range(y), imp.tensor(y).name)
        imp.set_output(y, v)

    return emit


def find_layer_norms(imp: TFLiteImporter) -> list[Fused]:
    """Every decomposed LayerNorm of the model (module doc) as a :class:`Fused` chain."""
    g = _Graph(imp)
    found: list[Fused] = []
    for op in imp.model.operators:
        if not _last_axis_mean(g, op):
            continue
        try:
            hit = _match(g, op)
            if hit is None or not _fits(imp, *hit[1:]):
                continue
        except (IndexError, KeyError, AttributeError, TypeError, ValueError):
            continue  # a malformed operator: left to its handler's check, which names it
        ops, x, y, gamma, beta = hit
        found.append(Fused(max(o.index for o in ops), frozenset(o.index for o in ops), _emitter(x, y, gamma, beta)))
    return found


__all__ = ["find_layer_norms"]
