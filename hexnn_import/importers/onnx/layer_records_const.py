"""The ONNX importer's record of a QDQ ``x op c`` (Add / Sub / Mul / Div of one constant value): a per-tensor
function of ``x`` (:mod:`hexnn_import.source_layers`), which the XS3 lowering runs as a lookup8 table of
onnxruntime's float32 arithmetic (``xs3/ort_int8.py``); :mod:`.layer_records` calls it for every node with
its recorder (``rec``: the importer, its QDQ look-ups and NHWC aliases).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.source_layers import LayerInfo

#: QDQ binary ops recorded as a per-tensor function when one operand is a constant of one value
CONST_BINARY = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV"}


def constant_operand(rec: Any, node: ONode) -> tuple[int, float] | None:
    """(position, value) of the one constant operand of a QDQ Add / Sub / Mul / Div holding one value, or None."""
    if node.op_type not in CONST_BINARY or len(node.inputs) != 2 or not node.outputs:
        return None
    consts = [i for i, name in enumerate(node.inputs) if name and rec.imp.tensors.is_const(name)]
    if len(consts) != 1:
        return None
    vals = np.unique(np.asarray(rec.imp.tensors.const(node.inputs[consts[0]]), np.float32))
    return (consts[0], float(vals[0])) if vals.size == 1 else None


def record_constant_binary(rec: Any, node: ONode, pos: int, value: float) -> LayerInfo:
    """A QDQ ``x op c`` (or ``c op x``) of one constant value: a per-tensor function of x, onnxruntime's float32
    arithmetic (``attrs``: the op, the value, whether the constant comes first)."""
    a = node.inputs[1 - pos]
    qp, code = rec.qdq_input(a)
    qy, code_y = rec.qdq_output(node.outputs[0])
    x, y = rec.tensor(a, qp), rec.tensor(node.outputs[0], qy)
    layer = LayerInfo(node.index, CONST_BINARY[node.op_type], [x], [y], source_op=node.op_type,
                      attrs={"ref": {"inputs": [code], "output": code_y}, "arithmetic": "onnxruntime",
                             "constant": value, "constant_first": pos == 0})
    if x.name in rec.aliases:
        layer.attrs["refs"] = {x.name: rec.aliases[x.name]}
    for t in (x, y):
        if t.scale is None:
            layer.notes.append(f"{t.name} is not a quantized tensor (no DequantizeLinear / QuantizeLinear pair)")
    return layer
