"""Elementwise functions of quint8 data as 256-entry lookup tables (fixed input and output ranges).

When both the input's and the output's ranges are known at import (a QDQ
or QOperator model, or a calibrated float model), any elementwise function
``f`` is exactly a table of 256 output codes: entry ``c`` is
``f((c - zero) * step)`` quantized onto the output range. This is one
rounding (where Sigmoid onto its fixed ``[0, 1]`` and a Requantize_8to8
onto the model's range are two) and it is how onnxruntime's QLinearSigmoid /
QLinearLeakyRelu compute. The table is built here in float64 with ONNX
QuantizeLinear's rounding (half to even) and looked up on the device with
documented ops: CastUInt8ToInt32 of the codes, then Gather_8 into the
``[1, 1, 1, 256]`` quint8 table (SEMANTICS §6: the table's codes are
copied, the output range is the table's).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from hexnn_import.graph import OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder
from hexnn_import.importers.nodes.core import Range, node3
from hexnn_import.importers.nodes.values import Value
from hexnn_import.ops.quant import dequantize_u8, step_zero

LUT_EMITS = ("CastUInt8ToInt32", "Gather_8")


def lut_codes(fn: Callable[[np.ndarray], np.ndarray], in_range: Range, out_range: Range) -> np.ndarray:
    """The 256 output codes of ``fn`` for every input code (half-to-even rounding, saturated)."""
    real = dequantize_u8(np.arange(256, dtype=np.uint8), *in_range).astype(np.float64)
    step, zero = step_zero(*out_range)
    with np.errstate(over="ignore", invalid="ignore"):  # +-inf (exp overflow, log 0) saturate to 255 / 0
        codes = np.rint(np.asarray(fn(real), dtype=np.float64) / step) + zero
    return np.clip(np.nan_to_num(codes, nan=0.0, posinf=255.0, neginf=0.0), 0, 255).astype(np.uint8)


def emit_lut(b: GraphBuilder, x: Value, fn: Callable[[np.ndarray], np.ndarray], out_range: Range,
             name: str) -> Value:
    """``fn`` applied to ``x`` (fixed range) onto ``out_range`` by a table lookup (module doc)."""
    assert x.range is not None
    table = lut_codes(fn, x.range, out_range).reshape(1, 1, 1, 256)
    g = b.graph
    cast = g.append("CastUInt8ToInt32", [x.data], [OutputDef(x.shape, "int32")], name=f"{name}/codes")
    refs = [Ref(cast.node_id, 0), g.const_ref(table, f"{name}/table"), *b.range_consts(out_range, f"{name}/table"),
            b.int_const(3, f"{name}/index_dim"), b.int_const(4, f"{name}/index_rank")]
    return node3(b, "Gather_8", refs, x.shape, f"{name}/lookup", out_range)


def sigmoid(v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-v) overflows to inf for very negative codes: 1 / inf = 0
        return 1.0 / (1.0 + np.exp(-v))


def hard_sigmoid(alpha: float, beta: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda v: np.clip(alpha * v + beta, 0.0, 1.0)


def hard_swish(v: np.ndarray) -> np.ndarray:
    return v * np.clip(v + 3.0, 0.0, 6.0) / 6.0


def leaky_relu(alpha: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda v: np.where(v >= 0, v, alpha * v)
