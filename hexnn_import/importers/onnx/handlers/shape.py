"""ONNX shape ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, and the removed Identity, Dropout, Cast.

Transpose only changes the tracked layout (no node). A reshape that only
adds or drops size-1 axes keeps the data where it is under a new layout (no
node). Any other reshape needs the data in ONNX row-major order: it gets
the ONNX order (a Transpose_8 only when the layout really moves data, a
plain reshape when it moves size-1 axes) and then a QuantizedReshape.
Identity, Dropout (inference) and a float-to-float Cast name the same value.
"""
from __future__ import annotations

from onnx import TensorProto

from hexnn_import.importers.nodes.core import reshape_value
from hexnn_import.importers.onnx.common import check_data, used_tensors
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import IDENTITY, after_transpose, onnx4, squeeze_like
from hexnn_import.importers.onnx.reader import ONode

SHAPE_EMITS = ("QuantizedReshape", "Transpose_8", "Requantize_8to8")


def reshape_to(imp: OnnxImporter, src: str, dst: str) -> None:
    """Bind ``dst`` (static shape) to ``src``'s data reshaped (module doc)."""
    t = imp.tensors.tensor(src)
    perm = squeeze_like(imp.tensors.shape(src), t.perm, imp.tensors.shape(dst))
    if perm is not None:
        imp.tensors.finish(dst, t.value, perm)
        return
    v = imp.tensors.value(src, IDENTITY)
    imp.tensors.finish(dst, reshape_value(imp, v, onnx4(imp.tensors.shape(dst)), dst), IDENTITY)


def _check_reshape(imp: OnnxImporter, node: ONode) -> str | None:
    """Float32 / int8 / uint8 data of rank <= 4 with static input and output shapes."""
    return check_data(imp, node)


@onnx_op(("Reshape", "Flatten", "Squeeze", "Unsqueeze"), SHAPE_EMITS, _check_reshape)
def reshape(imp: OnnxImporter, node: ONode) -> None:
    """Reshape / Flatten / Squeeze / Unsqueeze to the inferred output shape."""
    reshape_to(imp, node.inputs[0], node.outputs[0])


def _check_transpose(imp: OnnxImporter, node: ONode) -> str | None:
    """Float32 / int8 / uint8 data of rank <= 4 with a static shape."""
    return check_data(imp, node)


@onnx_op("Transpose", SHAPE_EMITS, _check_transpose)
def transpose(imp: OnnxImporter, node: ONode) -> None:
    """Transpose: a new layout for the same data (onnx.layout.after_transpose)."""
    t = imp.tensors.tensor(node.inputs[0])
    r = len(imp.tensors.shape(node.inputs[0]))
    perm = node.attr("perm")
    perm = tuple(range(r))[::-1] if perm is None else tuple(int(p) for p in perm)
    imp.tensors.finish(node.outputs[0], t.value, after_transpose(t.perm, perm))


def _check_alias(imp: OnnxImporter, node: ONode) -> str | None:
    """Identity; Dropout in inference (mask unused, training_mode constant false); Cast from float32 to
    float32."""
    why = check_data(imp, node)
    if why:
        return why
    if node.op_type == "Dropout":
        if len(node.outputs) > 1 and node.outputs[1] and node.outputs[1] in used_tensors(imp):
            return "the mask output is used"
        if node.since >= 12 and node.input(2) and not (imp.tensors.is_const(node.input(2)) and not imp.tensors.const(node.input(2))):
            return "training_mode is not constant false"
    if node.op_type == "Cast" and int(node.attr("to", 0)) != TensorProto.FLOAT:
        return f"Cast of a tensor to type {TensorProto.DataType.Name(int(node.attr('to', 0)))}"
    if node.op_type == "Cast" and imp.tensors.dtype(node.inputs[0]) != "float32":
        return f"Cast from {imp.tensors.dtype(node.inputs[0])}"
    return None


@onnx_op(("Identity", "Dropout", "Cast"), (), _check_alias)
def alias(imp: OnnxImporter, node: ONode) -> None:
    """Identity, inference Dropout, float->float Cast: the output is the input (removed)."""
    t = imp.tensors.tensor(node.inputs[0])
    imp.tensors.finish(node.outputs[0], t.value, t.perm)
