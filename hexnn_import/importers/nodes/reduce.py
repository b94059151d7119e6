"""Generic emitters for reductions over axes of a 4-D quint8 value (any source format).

``axes`` are 4-D axes (0..3, the caller converts the source's). Results
keep the reduced axes with size 1, as the hexagon_nn reductions do; the
caller reshapes to the source's output shape. Axes of size 1 reduce
nothing and are dropped (no axis left: the input itself).
"""
from __future__ import annotations

from hexnn_import.graph import NNPad, OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, dequantize, node3, to_8bit
from hexnn_import.importers.nodes.values import Value

Shape4 = tuple[int, int, int, int]


def effective_axes(shape: Shape4, axes: tuple[int, ...]) -> tuple[int, ...]:
    """The distinct axes of ``axes`` whose size is not 1, sorted."""
    return tuple(sorted({a for a in axes if shape[a] != 1}))


def kept_shape(shape: Shape4, axes: tuple[int, ...]) -> Shape4:
    """``shape`` with the reduced axes set to 1."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))  # type: ignore[return-value]


def emit_mean(b: GraphBuilder, x: Value, axes: tuple[int, ...], out: Range | None, name: str) -> Value:
    """QuantizedMean_8 over ``axes``, onto ``out`` when fixed (the input range passes through otherwise)."""
    axes = effective_axes(x.shape, axes)
    if not axes:
        return x
    refs = x.triple() + [b.int_const(list(axes), f"{name}/axes")]
    if out is not None:
        refs += list(b.range_consts(out, f"{name}/out"))
    return node3(b, "QuantizedMean_8", refs, kept_shape(x.shape, axes), f"{name}/mean",
                 out if out is not None else x.range)


def emit_sum(b: GraphBuilder, x: Value, axes: tuple[int, ...], out: Range | None, name: str) -> Value:
    """QuantizedSum_8to32 (exact integer sums) then Requantize_32to8 onto ``out`` (or shrink, run-time)."""
    axes = effective_axes(x.shape, axes)
    if not axes:
        return x
    refs = x.triple() + [b.int_const(list(axes), f"{name}/axes")]
    acc = node3(b, "QuantizedSum_8to32", refs, kept_shape(x.shape, axes), f"{name}/sum", None, etype="qint32")
    return to_8bit(b, acc, out, name)


def emit_reduce_extreme(b: GraphBuilder, x: Value, axes: tuple[int, ...], take_max: bool, name: str) -> Value:
    """Max or min over ``axes``; the input range passes through (exact).

    A max over height and/or width is QuantizedMaxPool_8 with one VALID
    window spanning them. Anything else: Dequantize, Max_f / Min_f, and
    Quantize back onto the input's own min/max (each code comes back
    unchanged: ``(q - zero) * step`` re-quantized on the same range).
    """
    axes = effective_axes(x.shape, axes)
    if not axes:
        return x
    shape = kept_shape(x.shape, axes)
    g = b.graph
    if take_max and set(axes) <= {1, 2}:
        win = (1, x.shape[1] if 1 in axes else 1, x.shape[2] if 2 in axes else 1, 1)
        refs = x.triple() + [g.shape_ref(win, f"{name}/window"), g.shape_ref(win, f"{name}/stride")]
        return node3(b, "QuantizedMaxPool_8", refs, shape, f"{name}/maxpool", x.range, NNPad.VALID)
    op = "Max_f" if take_max else "Min_f"
    real = dequantize(b, x, name)
    node = g.append(op, [real, b.int_const(list(axes), f"{name}/dims")], [OutputDef(shape, "float")],
                    name=f"{name}/{op}")
    assert x.mn is not None and x.mx is not None
    return node3(b, "Quantize", [Ref(node.node_id, 0), x.mn, x.mx], shape, f"{name}/quantize", x.range)


def emit_arg_extreme(b: GraphBuilder, x: Value, axis: int, take_max: bool, name: str) -> Value:
    """Index (int32, first on ties) of the largest / smallest code along 4-D ``axis``: ArgMax_8toInt32 / ArgMin_8."""
    op = "ArgMax_8toInt32" if take_max else "ArgMin_8"
    assert x.mn is not None and x.mx is not None
    shape = kept_shape(x.shape, (axis,))
    node = b.graph.append(op, [x.data, b.int_const(axis, f"{name}/axis"), x.mn, x.mx], [OutputDef(shape, "int32")],
                          name=f"{name}/{op}")
    return Value(Ref(node.node_id, 0), shape, "int32")
