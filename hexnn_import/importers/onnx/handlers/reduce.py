"""ONNX ReduceMean, ReduceSum, ReduceMax over any axes, keepdims either way.

The ONNX axes map to graph axes through the input's layout; the reduction
keeps them with size 1 (nodes.reduce). Without keepdims the output drops
them, which only removes size-1 axes: the data stays where it is under a
new layout (onnx.layout.squeeze_like), no node.
"""
from __future__ import annotations

from hexnn_import.importers.nodes.reduce import emit_mean, emit_reduce_extreme, emit_sum
from hexnn_import.importers.onnx.common import check_data, const_input, ints, need_const
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import squeeze_like
from hexnn_import.importers.onnx.reader import ONode

REDUCE_EMITS = ("QuantizedMean_8", "QuantizedSum_8to32", "Requantize_32to8", "QuantizeDownAndShrinkRange_32to8",
                "QuantizedMaxPool_8", "Dequantize", "Max_f", "Quantize", "Transpose_8", "QuantizedReshape")


def reduce_axes(imp: OnnxImporter, node: ONode) -> list[int] | None:
    """The ONNX axes reduced (normalized); [] means none (noop_with_empty_axes), None all."""
    r = len(imp.tensors.shape(node.inputs[0]))
    as_input = node.since >= 18 or (node.op_type == "ReduceSum" and node.since >= 13)
    axes = const_input(imp, node, 1) if as_input else node.attr("axes")
    if axes is None or len(ints(axes)) == 0:
        return [] if node.attr("noop_with_empty_axes", 0) else None
    return sorted({a + r if a < 0 else a for a in ints(axes)})


def _check(imp: OnnxImporter, node: ONode) -> str | None:
    """Data as for every op; constant axes."""
    return check_data(imp, node) or need_const(imp, node, (1,))


@onnx_op(("ReduceMean", "ReduceSum", "ReduceMax"), REDUCE_EMITS, _check)
def reduce(imp: OnnxImporter, node: ONode) -> None:
    """ReduceMean -> QuantizedMean_8 onto the output range; ReduceSum -> QuantizedSum_8to32 + requantize;
    ReduceMax -> QuantizedMaxPool_8 over H/W or Max_f (exact)."""
    name, out = node.inputs[0], node.outputs[0]
    t = imp.tensors.tensor(name)
    shape = imp.tensors.shape(name)
    r = len(shape)
    axes = reduce_axes(imp, node)
    axes = list(range(r)) if axes is None else axes
    g_axes = tuple(t.perm.index(a + 4 - r) for a in axes)
    rng = imp.tensors.act_range(out)
    if node.op_type == "ReduceMean":
        y = emit_mean(imp, t.value, g_axes, rng, out)
    elif node.op_type == "ReduceSum":
        y = emit_sum(imp, t.value, g_axes, rng, out)
    else:
        y = emit_reduce_extreme(imp, t.value, g_axes, True, out)
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    perm = squeeze_like(kept, t.perm, imp.tensors.shape(out))
    imp.tensors.finish(out, y, perm if perm is not None else t.perm)  # type: ignore[arg-type]
