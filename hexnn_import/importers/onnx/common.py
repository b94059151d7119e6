"""Checks and small helpers shared by the ONNX op handlers (``onnx/handlers/*.py``, ``onnx/handlers/q*.py``).

A checker returns why one node cannot be imported (None when it can); the
importer gathers every reason before building anything, so an unsupported
model fails with one error listing all of them (issue [ONNX import]: "the
same all-unsupported-ops error as the TFLite importer").
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from hexnn_import.importers.onnx.layout import size_problem
from hexnn_import.importers.onnx.reader import ONode, attr_type_problem
from hexnn_import.importers.onnx.tensor_store import QUANT_DTYPES

if TYPE_CHECKING:
    from hexnn_import.importers.onnx.graph_builder import OnnxGraphBuilder

#: ops whose outputs may be int32 (integer products) rather than activations
INT_RESULT_OPS = {"ConvInteger", "MatMulInteger", "DynamicQuantizeLinear"}


def used_tensors(imp: "OnnxGraphBuilder") -> set[str]:
    """Tensors some live node reads, plus the graph outputs (computed once by the tensor table)."""
    return imp.tensors.used_inputs()


def generic_reason(imp: "OnnxGraphBuilder", node: ONode) -> str | None:
    """Shape and type problems every handler shares: static shapes, rank <= 4, float32 / int8 / uint8 data."""
    why = attr_type_problem(node, imp.m.opset)
    if why:
        return why
    used = used_tensors(imp)
    for name in node.outputs:
        if not name or name not in used:
            continue
        shape = imp.m.shape(name)
        if shape is None:
            return f"output {name} has no static shape"
        why = size_problem(f"output {name}", shape)
        if why:
            return why
        dt = imp.tensors.dtype(name)
        int_result = node.op_type in INT_RESULT_OPS and dt in ("int32", "float32")
        if dt not in ("float32",) + QUANT_DTYPES and not int_result:
            return f"output {name} of type {dt or 'unknown'}"
    return None


def check_data(imp: "OnnxGraphBuilder", node: ONode, positions: tuple[int, ...] = (0,)) -> str | None:
    """Float32 / int8 / uint8 data of rank <= 4 with static shapes (every input at ``positions`` present)."""
    for pos in positions:
        name = node.input(pos)
        if not name:
            return f"missing input {pos}"
        dt = imp.tensors.dtype(name)
        if dt not in ("float32",) + QUANT_DTYPES:
            return f"input {name} of type {dt or 'unknown'}"
        shape = imp.m.shape(name)
        if shape is None:
            return f"input {name} has no static shape"
        why = size_problem(f"input {name}", shape)
        if why:
            return why
    return None


def const_input(imp: "OnnxGraphBuilder", node: ONode, pos: int) -> np.ndarray | None:
    """A constant input's data; None when absent or not constant."""
    name = node.input(pos)
    return imp.tensors.const(name) if name and imp.tensors.is_const(name) else None


def need_const(imp: "OnnxGraphBuilder", node: ONode, positions: tuple[int, ...]) -> str | None:
    """Every present input at ``positions`` is constant (after folding)."""
    for pos in positions:
        name = node.input(pos)
        if name and not imp.tensors.is_const(name):
            return f"input {pos} ({name}) is not constant"
    return None


def ints(values: object) -> list[int]:
    """An attribute or constant as a list of Python ints."""
    return [int(v) for v in np.asarray(values).reshape(-1)]


def clip_bounds(imp: OnnxGraphBuilder, node: ONode) -> tuple[float, float]:
    """Clip's (min, max): attributes before opset 11, optional constant inputs from 11."""
    if node.since < 11:
        return float(node.attr("min", -3.4028234663852886e38)), float(node.attr("max", 3.4028234663852886e38))
    lo, hi = const_input(imp, node, 1), const_input(imp, node, 2)
    return (-math.inf if lo is None else float(np.asarray(lo).reshape(-1)[0]),
            math.inf if hi is None else float(np.asarray(hi).reshape(-1)[0]))
