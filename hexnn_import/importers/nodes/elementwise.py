"""Generic emitters for elementwise binary ops, comparisons and select (any source format).

Each function takes a :class:`~hexnn_import.importers.nodes.builder.GraphBuilder`
and quint8 :class:`Value` operands and returns the result's Value. ``out``
is the result's fixed range, or None when it is only known at run time
(builder.py's range policy): with a fixed range the op writes straight onto
it (one rounding, SEMANTICS §6); without one the ops that compute ranges
from the data are used (8p8to32 / 8x8to32 products then
QuantizeDownAndShrinkRange_32to8, SEMANTICS §3-§4).

Booleans (the comparisons' results) are ``uint8`` values of 0/1 without a
range, as QuantizedEqual_8 & co. give them and Select_8 reads them.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.graph import OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, check_same_count, node3, requantize_to, to_8bit
from hexnn_import.importers.nodes.values import Value
from hexnn_import.ops.quant import adjust_range

Shape4 = tuple[int, int, int, int]

COMPARE_OPS = {"EQUAL": "QuantizedEqual_8", "NOT_EQUAL": "QuantizedNotEqual_8", "LESS": "QuantizedLess_8",
               "LESS_EQUAL": "QuantizedLessEqual_8", "GREATER": "QuantizedGreater_8",
               "GREATER_EQUAL": "QuantizedGreaterEqual_8"}


def broadcast4(*shapes: tuple[int, ...]) -> Shape4:
    """numpy's broadcast of 4-D shapes (the rule of ops/broadcast.py)."""
    return tuple(int(v) for v in np.broadcast_shapes(*shapes))  # type: ignore[return-value]


def pair_refs(a: Value, c: Value) -> list[Ref]:
    """``[a, b, a_min, a_max, b_min, b_max]``: the input order of the binary quint8 ops."""
    assert a.mn is not None and a.mx is not None and c.mn is not None and c.mx is not None
    return [a.data, c.data, a.mn, a.mx, c.mn, c.mx]


def _out_refs(b: GraphBuilder, out: Range | None, name: str) -> list[Ref]:
    return [] if out is None else list(b.range_consts(out, f"{name}/out"))


def emit_add(b: GraphBuilder, a: Value, c: Value, out: Range | None, name: str) -> Value:
    """``a + c``: QuantizedAdd_8p8to8 onto ``out`` (exact rounding); else 8p8to32 + shrink. The operand of
    the result's shape goes first: the d32 form prepare makes of the add broadcasts B only (op text)."""
    shape = broadcast4(a.shape, c.shape)
    if tuple(a.shape) != shape and tuple(c.shape) == shape:
        a, c = c, a
    if out is not None:
        return node3(b, "QuantizedAdd_8p8to8", pair_refs(a, c) + _out_refs(b, out, name), shape, f"{name}/add", out)
    acc = node3(b, "QuantizedAdd_8p8to32", pair_refs(a, c), shape, f"{name}/add", None, etype="qint32")
    return to_8bit(b, acc, None, name)


def emit_neg(b: GraphBuilder, v: Value, name: str) -> Value:
    """``-v`` (QuantizedNeg_8, op_neg.c: ``q = 255 - x`` on the mirrored range ``(-max, -min)``, exact)."""
    rng = None if v.range is None else (-v.range[1], -v.range[0])
    return node3(b, "QuantizedNeg_8", v.triple(), v.shape, f"{name}/neg", rng)


def emit_sub(b: GraphBuilder, a: Value, c: Value, out: Range | None, name: str) -> Value:
    """``a - c``: ``a + neg(c)`` onto ``out`` (both steps exact; there is no flat QuantizedSub_8p8to8).

    Without a fixed range: QuantizedSub_8p8to32 + QuantizeDownAndShrinkRange_32to8.
    """
    if out is not None:
        return emit_add(b, a, emit_neg(b, c, name), out, name)
    shape = broadcast4(a.shape, c.shape)
    acc = node3(b, "QuantizedSub_8p8to32", pair_refs(a, c), shape, f"{name}/sub", None, etype="qint32")
    return to_8bit(b, acc, None, name)


def emit_mul(b: GraphBuilder, a: Value, c: Value, out: Range | None, name: str) -> Value:
    """``a * c``: exact QuantizedMul_8x8to32, then Requantize_32to8 onto ``out`` (or shrink, §4)."""
    shape = broadcast4(a.shape, c.shape)
    acc = node3(b, "QuantizedMul_8x8to32", pair_refs(a, c), shape, f"{name}/mul", None, etype="qint32")
    return to_8bit(b, acc, out, name)


def div_supported(a_shape: Shape4, c_shape: Shape4) -> str | None:
    """Why QuantizedDiv_8 cannot divide these shapes (None when it can).

    Its divisor is a scalar or a ``[1,1,1,d]`` vector along the dividend's
    depth, and the dividend has the result's shape.
    """
    if c_shape[:3] != (1, 1, 1) or c_shape[3] not in (1, a_shape[3]):
        return (f"divisor of shape {list(c_shape)}: QuantizedDiv_8 divides by a scalar or a per-channel "
                f"[1,1,1,{a_shape[3]}] vector only")
    return None


def emit_div(b: GraphBuilder, a: Value, c: Value, out: Range | None, name: str) -> Value:
    """``a / c`` with QuantizedDiv_8 (divisor scalar or per channel; static output range when known)."""
    why = div_supported(a.shape, c.shape)
    if why:
        raise ValueError(f"{name}: {why}")
    refs = pair_refs(a, c) + _out_refs(b, out, name)
    return node3(b, "QuantizedDiv_8", refs, a.shape, f"{name}/div", out)


def emit_minmax(b: GraphBuilder, a: Value, c: Value, out: Range | None, name: str, take_max: bool) -> Value:
    """Elementwise max / min (QuantizedMaximum / QuantizedMinimum) onto ``out``.

    Without ``out`` the op's default (op_minimum_maximum.c) is ``[min(a_min, b_min), max(a_max, b_max)]``
    in float32, not zero-fixed, known here when both input ranges are.
    """
    shape = broadcast4(a.shape, c.shape)
    op = "QuantizedMaximum" if take_max else "QuantizedMinimum"
    rng = out
    if rng is None and a.range is not None and c.range is not None:
        rng = (float(np.float32(min(a.range[0], c.range[0]))), float(np.float32(max(a.range[1], c.range[1]))))
    return node3(b, op, pair_refs(a, c) + _out_refs(b, out, name), shape, f"{name}/{op}", rng)


def emit_compare(b: GraphBuilder, relation: str, a: Value, c: Value, name: str) -> Value:
    """A comparison of real values (``EQUAL``, ``LESS``, ... keys of COMPARE_OPS) -> uint8 0/1, no range."""
    op = COMPARE_OPS[relation]
    shape = broadcast4(a.shape, c.shape)
    node = b.graph.append(op, pair_refs(a, c), [OutputDef(shape, "uint8")], name=f"{name}/{relation.lower()}")
    return Value(Ref(node.node_id, 0), shape, "uint8")


def tile_to(b: GraphBuilder, v: Value, shape: Shape4, name: str) -> Value:
    """``v`` broadcast to ``shape`` by QuantizedTile_8 (no node when it already has it).

    A uint8 boolean has no range; it is tiled under the placeholder range
    ``[0, 1]`` (pure data movement, the codes are copied).
    """
    if tuple(v.shape) == tuple(shape):
        return v
    mult = [n // m for n, m in zip(shape, v.shape)]
    mref = b.int_const(mult, f"{name}/multiples")
    if v.quantized:
        assert v.mn is not None and v.mx is not None
        return node3(b, "QuantizedTile_8", [v.data, mref, v.mn, v.mx], shape, f"{name}/tile", v.range)
    lo, hi = b.range_consts((0.0, 1.0), f"{name}/bool_range")
    t = node3(b, "QuantizedTile_8", [v.data, mref, lo, hi], shape, f"{name}/tile", None)
    return Value(t.data, shape, "uint8")


def emit_select(b: GraphBuilder, cond: Value, x: Value, y: Value, shape: Shape4, out: Range | None,
                name: str) -> Value:
    """``x where cond else y`` with Select_8; operands broadcast to ``shape`` by QuantizedTile_8.

    With a fixed ``out`` both X and Y are first moved onto it (Requantize_8to8,
    one rounding each), so Select_8 (whose output range is the union of its
    inputs') copies codes unchanged.
    """
    cond, x, y = (tile_to(b, v, shape, f"{name}/{k}") for v, k in ((cond, "cond"), (x, "x"), (y, "y")))
    if out is not None:
        x, y = requantize_to(b, x, out, f"{name}/x"), requantize_to(b, y, out, f"{name}/y")
    rng = None
    if x.range is not None and y.range is not None:
        rng = adjust_range(min(x.range[0], y.range[0]), max(x.range[1], y.range[1]))
    return node3(b, "Select_8", [cond.data] + x.triple() + y.triple(), shape, f"{name}/select", rng)


def reshape_plain(b: GraphBuilder, v: Value, shape: Shape4, name: str) -> Value:
    """A rangeless value (uint8 boolean, int32) in a new 4-D shape with the generic Reshape op."""
    if tuple(v.shape) == tuple(shape):
        return v
    check_same_count(v.shape, shape, name)
    sref = b.int_const(list(shape), f"{name}/shape")
    node = b.graph.append("Reshape", [v.data, sref], [OutputDef(shape, v.etype)], name=f"{name}/reshape")
    return Value(Ref(node.node_id, 0), shape, v.etype)
