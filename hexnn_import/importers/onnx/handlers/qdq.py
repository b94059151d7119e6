"""QDQ: QuantizeLinear / DequantizeLinear around float ops (onnxruntime's QDQ format).

A QDQ model is a float model whose tensors are pinned to int8/uint8 grids
by QuantizeLinear -> DequantizeLinear pairs. The importer recognizes it
through ranges, not patterns (onnx.qparams): the float tensor a
QuantizeLinear reads takes that QuantizeLinear's range, so the op producing
it (a Supernode, an Add...) writes straight onto it and the QuantizeLinear
is then no node at all; a DequantizeLinear is the same codes read as reals,
so it is no node either. Constant weights and biases behind a
DequantizeLinear were folded with their codes kept (onnx.fold), so
convolutions take them exactly. What is left of the Q/DQ pair is a
Requantize_8to8 where the ranges really differ.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.core import requantize_to
from hexnn_import.importers.nodes.activation import relabel
from hexnn_import.importers.nodes.core import same_range
from hexnn_import.importers.onnx.common import check_data
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import Perm
from hexnn_import.importers.onnx.qparams import QParam, qparam_of
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.nodes.values import Value


def declared(imp: OnnxImporter, node: ONode, scale_pos: int, zp_pos: int, dtype: str | None = None) -> QParam:
    """The QParam a node declares (checked to exist by :func:`check_qparams`)."""
    qp = qparam_of(imp.m, node, scale_pos, zp_pos, dtype)
    assert qp is not None
    return qp


def check_qparams(imp: OnnxImporter, node: ONode, pairs: tuple[tuple[int, int], ...]) -> str | None:
    """Each (scale, zero point) input pair is a constant per-tensor quantization of int8/uint8 (the scale
    present; an absent zero point is 0)."""
    for s, z in pairs:
        name = node.input(s)
        if not name:
            return f"missing scale input {s}"
        if not imp.tensors.is_const(name):
            return f"scale {name} is not constant"
        if np.asarray(imp.tensors.const(name)).size != 1:
            return f"per-axis scale {name} on an activation"
        if qparam_of(imp.m, node, s, z) is None:
            zp = node.input(z)
            what = imp.tensors.dtype(zp) if zp else "?"
            return (f"quantization ({name}, {zp or 'no zero point'}) is not a positive scale with an int8/uint8 "
                    f"zero point ({what})")
    return None


def qinput(imp: OnnxImporter, node: ONode, pos: int, scale_pos: int, zp_pos: int, perm: Perm | None = None) -> Value:
    """Input ``pos`` as the node reads it: its codes on the range the node declares for it.

    Normally the producer already wrote it on that range; a node that
    declares another scale for the same codes reads them on its own range
    (a relabel: other min/max Consts, no node), as ONNX's semantics say.
    """
    name = node.inputs[pos]
    qp = declared(imp, node, scale_pos, zp_pos)
    if imp.tensors.is_const(name):
        return imp.tensors.const_value(name, perm or (0, 1, 2, 3), qp.range)
    v = imp.tensors.value(name, perm)
    if v.range is not None and not same_range(v.range, qp.range):
        return relabel(imp, v, qp.range, f"{name}/as_{node.label}")
    return v


def _check_q(imp: OnnxImporter, node: ONode) -> str | None:
    """A float32 input; a valid scale and zero point (per tensor or per axis)."""
    why = check_data(imp, node) or check_qparams(imp, node, ((1, 2),))
    if why:
        return why
    return None if imp.tensors.dtype(node.inputs[0]) == "float32" else f"QuantizeLinear of {imp.tensors.dtype(node.inputs[0])}"


@onnx_op("QuantizeLinear", ("Requantize_8to8", "Quantize", "AutoQuantize"), _check_q)
def quantize_linear(imp: OnnxImporter, node: ONode) -> None:
    """QuantizeLinear: the float tensor's value onto the declared range (usually already there: no node)."""
    t = imp.tensors.tensor(node.inputs[0])
    qp = declared(imp, node, 1, 2)
    imp.tensors.finish(node.outputs[0], requantize_to(imp, t.value, qp.range, node.outputs[0]), t.perm)


def _check_dq(imp: OnnxImporter, node: ONode) -> str | None:
    """An int8 / uint8 input and a valid scale and zero point (a DequantizeLinear of constant codes folds into
    weights)."""
    why = check_data(imp, node) or check_qparams(imp, node, ((1, 2),))
    if why:
        return why
    dt = imp.tensors.dtype(node.inputs[0])
    return None if dt in ("int8", "uint8") else f"DequantizeLinear of non-constant {dt} data"


@onnx_op("DequantizeLinear", (), _check_dq)
def dequantize_linear(imp: OnnxImporter, node: ONode) -> None:
    """DequantizeLinear: the same codes read as reals on the declared range (no node)."""
    perm = imp.tensors.perm_of(node.inputs[0])
    imp.tensors.finish(node.outputs[0], qinput(imp, node, 0, 1, 2, perm), perm)
