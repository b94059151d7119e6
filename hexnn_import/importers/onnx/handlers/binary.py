"""ONNX elementwise binary and variadic ops: Add, Sub, Mul, Div, Sum, Max, Min.

Operands are brought to one layout: the layout of the first non-constant
operand of the output's rank (constants take any layout for free, a
lower-rank operand is right-aligned in the same 4-D frame, as ONNX's
broadcasting is), so an Add of two NHWC tensors or of an NHWC tensor and a
``[C,1,1]`` constant needs no transpose. Arithmetic: nodes.elementwise
(exact rounding onto a fixed output range; the run-time-range chains
otherwise). A division by a constant is a multiplication by its reciprocal.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from hexnn_import.importers.nodes.builder import calibrated_range
from hexnn_import.importers.nodes.core import node3
from hexnn_import.importers.nodes.elementwise import emit_add, emit_div, emit_minmax, emit_mul, emit_sub
from hexnn_import.importers.onnx.common import check_data
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import IDENTITY, Perm, onnx4
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.nodes.values import Value

BINARY_EMITS = ("QuantizedAdd_8p8to8", "QuantizedAdd_8p8to32", "QuantizedSub_8p8to32", "QuantizedNeg_8",
                "QuantizedMul_8x8to32", "QuantizedDiv_8", "QuantizedRecip_8", "QuantizedMaximum", "QuantizedMinimum",
                "Requantize_32to8", "QuantizeDownAndShrinkRange_32to8", "Requantize_8to8", "Transpose_8",
                "QuantizedReshape")


def common_perm(imp: OnnxImporter, node: ONode) -> Perm:
    """The layout the operands meet in (module doc)."""
    r = len(imp.tensors.shape(node.outputs[0]))
    for name in node.inputs:
        if name and not imp.tensors.is_const(name) and len(imp.tensors.shape(name)) == r:
            return imp.tensors.perm_of(name)
    return IDENTITY


def batch_const(imp: OnnxImporter, name: str, out: str) -> str:
    """A constant of batch 1 read by an op whose output has batch > 1, repeated to that batch.

    The d32 arithmetic kernels broadcast only their second operand onto the
    first; a batch-1 constant (anchor grids of detection heads) meeting a
    batched activation must already have the batch.
    """
    shape, data = imp.tensors.shape(out), imp.tensors.const(name)
    if len(shape) < 2 or shape[0] == 1 or data.ndim != len(shape) or data.shape[0] != 1:
        return name
    tiled = f"{name}/batch{shape[0]}"
    if tiled not in imp.m.consts:
        imp.m.consts[tiled] = np.repeat(data, shape[0], axis=0)
        qc = imp.tensors.qconst(name)
        if qc is not None and qc.axis is None:  # keep the exact codes of a DequantizeLinear'd constant
            imp.m.qconsts[tiled] = replace(qc, codes=np.repeat(qc.codes, shape[0], axis=0))
    return tiled


def operands(imp: OnnxImporter, node: ONode) -> tuple[list[Value], Perm]:
    perm = common_perm(imp, node)
    names = [batch_const(imp, n, node.outputs[0]) if imp.tensors.is_const(n) else n for n in node.inputs if n]
    return [imp.tensors.value(n, perm) for n in names], perm


def _check(imp: OnnxImporter, node: ONode) -> str | None:
    """Every present input is float32 / int8 / uint8 of rank <= 4 with a static shape."""
    return check_data(imp, node, tuple(i for i, n in enumerate(node.inputs) if n))


@onnx_op("Add", BINARY_EMITS, _check)
def add(imp: OnnxImporter, node: ONode) -> None:
    """Add -> QuantizedAdd_8p8to8 onto the output range (run-time: 8p8to32 + shrink)."""
    (a, c), perm = operands(imp, node)
    out = node.outputs[0]
    imp.tensors.finish(out, emit_add(imp, a, c, imp.tensors.act_range(out), out), perm)


@onnx_op("Sub", BINARY_EMITS, _check)
def sub(imp: OnnxImporter, node: ONode) -> None:
    """Sub -> QuantizedNeg_8 + QuantizedAdd_8p8to8 onto the output range (run-time: QuantizedSub_8p8to32)."""
    (a, c), perm = operands(imp, node)
    out = node.outputs[0]
    imp.tensors.finish(out, emit_sub(imp, a, c, imp.tensors.act_range(out), out), perm)


@onnx_op("Mul", BINARY_EMITS, _check)
def mul(imp: OnnxImporter, node: ONode) -> None:
    """Mul -> QuantizedMul_8x8to32 (exact) and Requantize_32to8 onto the output range."""
    (a, c), perm = operands(imp, node)
    out = node.outputs[0]
    imp.tensors.finish(out, emit_mul(imp, a, c, imp.tensors.act_range(out), out), perm)


def _divisor_axis(imp: OnnxImporter, node: ONode) -> int | None:
    """The one onnx4 axis along which a non-constant divisor varies (None: a scalar)."""
    out4 = onnx4(imp.tensors.shape(node.outputs[0]))
    d4 = onnx4(imp.tensors.shape(node.inputs[1]))
    big = [a for a in range(4) if d4[a] != 1 and out4[a] != 1]
    return big[0] if len(big) == 1 else None


def _check_div(imp: OnnxImporter, node: ONode) -> str | None:
    """As Add; a constant divisor holds no 0."""
    why = _check(imp, node)
    if why:
        return why
    if imp.tensors.is_const(node.inputs[1]):
        return "division by a constant holding 0" if np.any(imp.tensors.const(node.inputs[1]) == 0) else None
    return None


def _by_div8(imp: OnnxImporter, node: ONode) -> bool:
    """QuantizedDiv_8 takes it: a scalar or one-axis divisor and a dividend of the result's size."""
    d4 = onnx4(imp.tensors.shape(node.inputs[1]))
    if int(np.prod(d4)) > 1 and _divisor_axis(imp, node) is None:
        return False
    return int(np.prod(onnx4(imp.tensors.shape(node.inputs[0])))) == int(np.prod(onnx4(imp.tensors.shape(node.outputs[0]))))


@onnx_op("Div", BINARY_EMITS, _check_div)
def div(imp: OnnxImporter, node: ONode) -> None:
    """Div: by a constant -> Mul by its reciprocal; by a scalar / one-axis tensor -> QuantizedDiv_8 with that
    axis as graph depth; else QuantizedRecip_8 and a product."""
    out = node.outputs[0]
    perm = common_perm(imp, node)
    if imp.tensors.is_const(node.inputs[1]):
        a = imp.tensors.value(node.inputs[0], perm)
        qc = imp.tensors.qconst(node.inputs[1])
        real = qc.real() if qc is not None else np.asarray(imp.tensors.const(node.inputs[1]), dtype=np.float64)
        recip = imp.tensors.array_value(1.0 / real, perm, f"{out}/reciprocal")
        imp.tensors.finish(out, emit_mul(imp, a, recip, imp.tensors.act_range(out), out), perm)
        return
    if not _by_div8(imp, node):  # a * (1 / b): QuantizedRecip_8 (range from the data) and a product
        a, c = imp.tensors.value(node.inputs[0], perm), imp.tensors.value(node.inputs[1], perm)
        recip = node3(imp, "QuantizedRecip_8", c.triple(), c.shape, f"{out}/recip", None)
        imp.tensors.finish(out, emit_mul(imp, a, recip, imp.tensors.act_range(out), out), perm)
        return
    axis = _divisor_axis(imp, node)
    if axis is not None and perm[3] != axis:
        perm = tuple([p for p in perm if p != axis] + [axis])  # type: ignore[assignment]
    a, c = imp.tensors.value(node.inputs[0], perm), imp.tensors.value(node.inputs[1], perm)
    imp.tensors.finish(out, emit_div(imp, a, c, imp.tensors.act_range(out), out), perm)


def _fold(imp: OnnxImporter, node: ONode, fn) -> None:  # type: ignore[no-untyped-def]
    """A variadic op as a chain of binary steps; only the last writes onto the output range."""
    values, perm = operands(imp, node)
    out = node.outputs[0]
    acc = values[0]
    for k, v in enumerate(values[1:], start=1):
        last = k == len(values) - 1
        acc = fn(acc, v, imp.tensors.act_range(out) if last else None, out if last else f"{out}/step{k}", last)
    imp.tensors.finish(out, acc, perm)


@onnx_op("Sum", BINARY_EMITS, _check)
def sum_(imp: OnnxImporter, node: ONode) -> None:
    """Sum of n inputs: a chain of adds; partial sums on the sum of their operands' ranges when fixed."""

    def step(a: Value, c: Value, rng, name: str, last: bool) -> Value:  # type: ignore[no-untyped-def]
        if not last and a.range is not None and c.range is not None:
            rng = calibrated_range(a.range[0] + c.range[0], a.range[1] + c.range[1])
        return emit_add(imp, a, c, rng, name)

    _fold(imp, node, step)


@onnx_op("Max", BINARY_EMITS, _check)
def max_(imp: OnnxImporter, node: ONode) -> None:
    """Max of n inputs -> QuantizedMaximum chain."""
    _fold(imp, node, lambda a, c, rng, name, last: emit_minmax(imp, a, c, rng, name, True))


@onnx_op("Min", BINARY_EMITS, _check)
def min_(imp: OnnxImporter, node: ONode) -> None:
    """Min of n inputs -> QuantizedMinimum chain."""
    _fold(imp, node, lambda a, c, rng, name, last: emit_minmax(imp, a, c, rng, name, False))
