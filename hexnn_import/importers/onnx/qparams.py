"""Where each quantized ONNX tensor gets its scale / zero point, and which float tensors QDQ quantizes.

ONNX puts a tensor's quantization on the *nodes*, not the tensor: a
QuantizeLinear declares its output's, a DequantizeLinear its input's, a
QLinearConv both its input's and its output's. :func:`scan_qparams` reads
every such declaration once (the first one wins; a consumer that declares
another scale for the same codes reads them on its own range, see
``onnx.handlers.qdq.qinput``), so a quantized graph input or the output of a plain
MaxPool on int8 data also knows its range.

A float tensor read by a QuantizeLinear (QDQ format) gets a *hint*: the
range it is quantized to. The float op producing it writes straight onto
that range, which makes the QuantizeLinear a no-op (builder.py's range
policy: a fixed range from the source model).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexnn_import.importers.onnx.reader import OnnxModel, ONode
from hexnn_import.ops.quant import scale_zp_to_range

Range = tuple[float, float]

#: op -> [(tensor slot, scale input, zero-point input)]; a slot is ("in", i) or ("out", i)
QSLOTS: dict[str, list[tuple[tuple[str, int], int, int]]] = {
    "QuantizeLinear": [(("out", 0), 1, 2)],
    "DequantizeLinear": [(("in", 0), 1, 2)],
    "QLinearConv": [(("in", 0), 1, 2), (("out", 0), 6, 7)],
    "QLinearMatMul": [(("in", 0), 1, 2), (("in", 3), 4, 5), (("out", 0), 6, 7)],
    "QLinearAdd": [(("in", 0), 1, 2), (("in", 3), 4, 5), (("out", 0), 6, 7)],
    "QLinearMul": [(("in", 0), 1, 2), (("in", 3), 4, 5), (("out", 0), 6, 7)],
    "QLinearGlobalAveragePool": [(("in", 0), 1, 2), (("out", 0), 3, 4)],
    "QLinearAveragePool": [(("in", 0), 1, 2), (("out", 0), 3, 4)],
    "QLinearSigmoid": [(("in", 0), 1, 2), (("out", 0), 3, 4)],
    "QLinearLeakyRelu": [(("in", 0), 1, 2), (("out", 0), 3, 4)],
    "QLinearSoftmax": [(("in", 0), 1, 2), (("out", 0), 3, 4)],
    "QGemm": [(("in", 0), 1, 2), (("in", 3), 4, 5), (("out", 0), 7, 8)],
}


@dataclass(frozen=True)
class QParam:
    """Per-tensor quantization of an int8/uint8 ONNX tensor."""

    scale: float
    zero_point: int
    dtype: str  # "int8" or "uint8"

    @property
    def range(self) -> Range:
        """(min, max) of SEMANTICS §1."""
        return scale_zp_to_range(self.scale, self.zero_point, self.dtype == "int8")


def qparam_of(model: OnnxModel, node: ONode, scale_pos: int, zp_pos: int, dtype: str | None = None) -> QParam | None:
    """The per-tensor QParam a node declares with constant inputs ``scale_pos`` / ``zp_pos`` (None otherwise).

    An absent zero point is 0 of type ``dtype`` (QuantizeLinear's default uint8).
    """
    s_name, z_name = node.input(scale_pos), node.input(zp_pos)
    if not s_name or s_name not in model.consts:
        return None
    scale = np.asarray(model.consts[s_name]).reshape(-1)
    if scale.size != 1 or not np.isfinite(scale[0]) or scale[0] <= 0:
        return None
    if z_name:
        if z_name not in model.consts:
            return None
        zp = np.asarray(model.consts[z_name]).reshape(-1)
        if zp.size != 1 or zp.dtype not in (np.int8, np.uint8):
            return None
        return QParam(float(scale[0]), int(zp[0]), str(zp.dtype))
    return QParam(float(scale[0]), 0, dtype or "uint8")


def _slots(node: ONode) -> list[tuple[tuple[str, int], int, int]]:
    if node.op_type == "QLinearConcat":
        out = [(("out", 0), 0, 1)]
        out += [(("in", i), i + 1, i + 2) for i in range(2, len(node.inputs), 3)]
        return out
    return QSLOTS.get(node.op_type, [])


def scan_qparams(model: OnnxModel) -> tuple[dict[str, QParam], dict[str, Range]]:
    """(quantized tensor -> QParam, float tensor read by a QuantizeLinear -> its range) (module doc)."""
    qparams: dict[str, QParam] = {}
    hints: dict[str, Range] = {}
    for node in model.nodes:
        for (kind, pos), s, z in _slots(node):
            names = node.inputs if kind == "in" else node.outputs
            if pos >= len(names) or not names[pos]:
                continue
            dt = model.dtype(names[pos])
            qp = qparam_of(model, node, s, z, str(dt) if dt is not None else None)
            if qp is not None:
                qparams.setdefault(names[pos], qp)
        if node.op_type in ("ConvInteger", "MatMulInteger"):  # codes read with scale 1 (exact int32 sums)
            for pos, zpos in ((0, 2), (1, 3)):
                name = node.input(pos)
                dt = model.dtype(name) if name else None
                zp = model.consts.get(node.input(zpos)) if node.input(zpos) else np.zeros(1, np.uint8)
                if name and name not in model.consts and dt in (np.int8, np.uint8) and zp is not None \
                        and np.asarray(zp).size == 1:
                    qparams.setdefault(name, QParam(1.0, int(np.asarray(zp).reshape(-1)[0]), str(dt)))
        if node.op_type == "QuantizeLinear" and node.inputs and node.inputs[0] not in model.consts:
            qp = qparam_of(model, node, 1, 2)
            if qp is not None:
                hints.setdefault(node.inputs[0], qp.range)
    return qparams, hints
