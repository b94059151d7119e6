"""QLinearConv / QLinearMatMul / QGemm (com.microsoft) rewritten as their specification's DequantizeLinear -> Conv / MatMul -> QuantizeLinear.

The ONNX operator text defines QLinearConv as the real-valued convolution of
the dequantized input and weights plus the bias (``int32``, scale
``x_scale * w_scale``, zero point 0), requantized to the output's scale and
zero point. onnxruntime's x86 kernel for uint8 activations and int8 weights
(MLAS's U8S8 path) on a CPU without AVX-VNNI multiplies with ``vpmaddubsw``,
whose 16-bit pair sums saturate (onnxruntime's quantization documentation
advises ``reduce_range`` for this reason): its results can be tens of codes
from the specification. Running the rewritten model (graph optimizations
off, so the float Conv is not fused back) gives onnxruntime's value of the
specified arithmetic, a reference for the QOperator files that the CPU does
not bend. Used by :mod:`hexnn_import.testing.layerwise_onnx`.
"""
from __future__ import annotations

from typing import Any

#: QOperator op -> the float op of its specification
_REWRITE = {"QLinearConv": "Conv", "QLinearMatMul": "MatMul", "QGemm": "Gemm"}


def _dq(name: str, scale: str, zp: str, out: str, axis: int | None = None) -> Any:
    from onnx import helper

    kw = {"axis": axis} if axis is not None else {}
    return helper.make_node("DequantizeLinear", [name, scale, zp] if zp else [name, scale], [out], **kw)


def _bias_nodes(node: Any, prefix: str) -> tuple[list[Any], str]:
    """The int32 bias of a QLinearConv dequantized with scale x_scale * w_scale (per channel)."""
    from onnx import helper

    at = 6 if node.op_type == "QGemm" else 8  # QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp
    if len(node.input) <= at or not node.input[at]:
        return [], ""
    xs, ws, b = node.input[1], node.input[4], node.input[at]
    mul = helper.make_node("Mul", [xs, ws], [prefix + "_bias_scale"])
    dq = helper.make_node("DequantizeLinear", [b, prefix + "_bias_scale"], [prefix + "_bias_f"], axis=0)
    return [mul, dq], prefix + "_bias_f"


def qlinear_as_qdq(model: Any) -> Any:
    """A copy of ``model`` with every QLinearConv / QLinearMatMul replaced by its specified float form."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    nodes = []
    for k, node in enumerate(m.graph.node):
        if node.op_type not in _REWRITE:
            nodes.append(node)
            continue
        p = f"__exact{k}"
        ins_q = list(node.input) + [""] * 3
        if node.op_type == "QGemm":
            if not ins_q[7]:  # float output: nothing 8-bit to compare
                nodes.append(node)
                continue
            ins_q = ins_q[:6] + ins_q[7:9]
        x, xs, xz, w, ws, wz, ys, yz = ins_q[:8]
        new = [_dq(x, xs, xz, p + "_x"), _dq(w, ws, wz, p + "_w", 0 if node.op_type == "QLinearConv" else None)]
        trans_b = any(a.name == "transB" and a.i for a in node.attribute)
        if node.op_type != "QLinearConv":
            new[1] = _dq(w, ws, wz, p + "_w", 0 if trans_b else 1)
        bias, bname = _bias_nodes(node, p) if node.op_type != "QLinearMatMul" else ([], "")
        ins = [p + "_x", p + "_w"] + ([bname] if bname else [])
        op = onnx.helper.make_node(_REWRITE[node.op_type], ins, [p + "_y"])
        op.attribute.extend(node.attribute)
        q = onnx.helper.make_node("QuantizeLinear", [p + "_y", ys, yz], [node.output[0]])
        nodes += new + bias + [op, q]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return m


__all__ = ["qlinear_as_qdq"]
