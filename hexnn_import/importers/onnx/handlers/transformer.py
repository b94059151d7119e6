"""ONNX ops and chains of transformer encoders: LayerNormalization, Erf, and the chains torch exports.

- ``LayerNormalization`` (opset 17) over the last axis (several trailing axes: their product, as one axis),
  constant scale / bias: ``nodes.norm.emit_layer_norm``
  (QuantizedInstanceNorm_8 with the rows as channels, gamma / beta a 1x1 depthwise layer; its module doc
  says what it computes and where it differs from the op: the epsilon).
- ``Gelu`` (opset 20; approximate 'none' or 'tanh') as the GELU chain below.
- ``Erf`` with fixed input and output ranges (a QDQ model, or calibration): a 256-entry table (nodes.lut,
  rounded half to even as QuantizeLinear rounds). A float model's Erf outside a GELU needs calibration.
- The chains of :mod:`.onnx.transformer_plan`, planned before the walk (``FusionPlan.chains``): the exact
  GELU as one function (a table on fixed ranges, else the float form of ``nodes.norm.emit_gelu_float``),
  ``Erf(x / c)`` as one table, the decomposed LayerNorm as one LayerNorm, and torch's rank-5 head split
  as one Transpose_8.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from hexnn_import.importers.nodes.core import reshape_value
from hexnn_import.importers.nodes.movement import transpose
from hexnn_import.importers.nodes.norm import (GELU_FLOAT_EMITS, LAYER_NORM_EMITS, emit_gelu_float, emit_layer_norm,
                                              gelu_fn)
from hexnn_import.importers.onnx.common import check_data, need_const
from hexnn_import.importers.onnx.fusion_plan import FusionPlan
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op, onnx_planner
from hexnn_import.importers.onnx.layout import IDENTITY, Perm, axis4, onnx4
from hexnn_import.importers.nodes.lut import LUT_EMITS, emit_lut
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.onnx.transformer_plan import Chain, find_chains
from hexnn_import.importers.nodes.values import Value


def _erf(v: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(v, dtype=np.float64))


def _last_axis_value(imp: OnnxImporter, name: str) -> tuple[Value, Perm]:
    """``name`` laid out with its last ONNX axis as graph depth (its own layout when it already is)."""
    r = len(imp.tensors.shape(name))
    a4 = axis4(r - 1, r)
    perm = imp.tensors.perm_of(name)
    if perm[3] != a4:
        perm = tuple([p for p in perm if p != a4] + [a4])  # type: ignore[assignment]
    return imp.tensors.value(name, perm), perm


def layer_norm(imp: OnnxImporter, x_name: str, out: str, gamma: np.ndarray, beta: np.ndarray) -> None:
    """LayerNorm of ``x_name`` over its last axis onto ``out`` (module doc)."""
    x, perm = _last_axis_value(imp, x_name)
    imp.tensors.finish(out, emit_layer_norm(imp, x, gamma, beta, imp.tensors.act_range(out), out), perm)


def layer_norm_trailing(imp: OnnxImporter, x_name: str, out: str, axis: int, gamma: np.ndarray,
                        beta: np.ndarray) -> None:
    """LayerNorm over the axes from ``axis`` to the last: the rows viewed as ``[1, 1, rows, D]`` with D the
    product of those axes (row-major data, so the view is a QuantizedReshape), gamma / beta flattened alike."""
    shape = imp.tensors.shape(x_name)
    d = int(np.prod(shape[axis:]))
    x = reshape_value(imp, imp.tensors.value(x_name, IDENTITY), (1, 1, int(np.prod(shape)) // d, d), f"{out}/rows")
    y = emit_layer_norm(imp, x, gamma, beta, imp.tensors.act_range(out), out)
    imp.tensors.finish(out, reshape_value(imp, y, onnx4(imp.tensors.shape(out)), f"{out}/reshape"), IDENTITY)


# ---- LayerNormalization ---------------------------------------------------------------------------
def _check_layer_norm(imp: OnnxImporter, node: ONode) -> str | None:
    """Data as for every op; normalization over the trailing axes from ``axis``; a constant scale and bias
    of one value or one per normalized element; the Mean / InvStdDev outputs unused."""
    why = check_data(imp, node) or need_const(imp, node, (1, 2))
    if why:
        return why
    shape = imp.tensors.shape(node.inputs[0])
    if not -len(shape) <= int(node.attr("axis", -1)) < len(shape):
        return f"axis {int(node.attr('axis', -1))} outside rank {len(shape)}"
    d = _norm_size(imp, node)
    for pos in (1, 2):
        if node.input(pos) and imp.tensors.const(node.input(pos)).size not in (1, d):
            return f"input {pos} has {imp.tensors.const(node.input(pos)).size} values for {d} features"
    if any(o and (imp.tensors.consumers(o) or o in imp.m.outputs) for o in node.outputs[1:]):
        return "Mean / InvStdDev outputs are used"
    return None


def _const_or(imp: OnnxImporter, name: str, fill: float, d: int) -> np.ndarray:
    if not name:
        return np.full(d, fill)
    return np.broadcast_to(np.asarray(imp.tensors.const(name), dtype=np.float64).reshape(-1), (d,))


def _norm_size(imp: OnnxImporter, node: ONode) -> int:
    """How many elements one normalized row has (the product of the axes from ``axis`` on)."""
    shape = imp.tensors.shape(node.inputs[0])
    return int(np.prod(shape[int(node.attr("axis", -1)) % len(shape):]))


@onnx_op("LayerNormalization", LAYER_NORM_EMITS, _check_layer_norm)
def layer_normalization(imp: OnnxImporter, node: ONode) -> None:
    """LayerNormalization over the last axis, or over several trailing axes as one (module doc)."""
    shape = imp.tensors.shape(node.inputs[0])
    axis = int(node.attr("axis", -1)) % len(shape)
    d = _norm_size(imp, node)
    gamma, beta = _const_or(imp, node.input(1), 1.0, d), _const_or(imp, node.input(2), 0.0, d)
    if axis == len(shape) - 1:
        layer_norm(imp, node.inputs[0], node.outputs[0], gamma, beta)
    else:
        layer_norm_trailing(imp, node.inputs[0], node.outputs[0], axis, gamma, beta)


# ---- Erf --------------------------------------------------------------------------------------------
def _check_erf(imp: OnnxImporter, node: ONode) -> str | None:
    """Data as for every op; fixed input and output ranges (a quantized model, or calibration); a float
    model's exact GELU chain ``x * 0.5 * (1 + erf(x / sqrt 2))`` is imported as one GELU instead."""
    why = check_data(imp, node)
    if why:
        return why
    for name in (node.inputs[0], node.outputs[0]):
        if imp.tensors.act_range(name) is None:
            return f"tensor {name} has no fixed range (a float model needs calibration for Erf outside a GELU)"
    return None


def _table(imp: OnnxImporter, x_name: str, out: str, fn: Callable[[np.ndarray], np.ndarray]) -> None:
    t = imp.tensors.tensor(x_name)
    rng = imp.tensors.act_range(out)
    assert rng is not None
    imp.tensors.finish(out, emit_lut(imp, t.value, fn, rng, out), t.perm)


# the chains planned around Erf (GELU, the head split) emit the float GELU's ops and Transpose_8 too
@onnx_op("Erf", LUT_EMITS + GELU_FLOAT_EMITS + ("Transpose_8",), _check_erf)
def erf(imp: OnnxImporter, node: ONode) -> None:
    """Erf: a table on fixed ranges (module doc)."""
    _table(imp, node.inputs[0], node.outputs[0], _erf)


# ---- GELU ---------------------------------------------------------------------------------------------
def gelu(imp: OnnxImporter, x_name: str, out: str, approximate: bool) -> None:
    """GELU of ``x_name`` onto ``out``: a table on fixed ranges, else the float form (module doc)."""
    t = imp.tensors.tensor(x_name)
    rng = imp.tensors.act_range(out)
    if t.value.range is not None and rng is not None:
        y = emit_lut(imp, t.value, gelu_fn(approximate), rng, out)
    else:
        y = emit_gelu_float(imp, t.value, rng, out)
    imp.tensors.finish(out, y, t.perm)


def _check_gelu(imp: OnnxImporter, node: ONode) -> str | None:
    """Data as for every op; approximate 'none' or 'tanh'."""
    why = check_data(imp, node)
    return why or (None if node.attr("approximate", "none") in ("none", "tanh", b"none", b"tanh")
                   else f"approximate={node.attr('approximate')!r}")


@onnx_op("Gelu", LUT_EMITS + GELU_FLOAT_EMITS, _check_gelu)
def gelu_op(imp: OnnxImporter, node: ONode) -> None:
    """Gelu (opset 20): as the exact GELU chain (module doc); approximate='tanh' the tanh form."""
    approx = node.attr("approximate", "none")
    gelu(imp, node.inputs[0], node.outputs[0], approx in ("tanh", b"tanh"))


# ---- chains -------------------------------------------------------------------------------------------
def _emit_gelu(imp: OnnxImporter, c: Chain) -> None:
    gelu(imp, c.x, c.y, False)


def _emit_chain(c: Chain) -> Callable[[OnnxImporter, ONode], None]:
    def emit(imp: OnnxImporter, node: ONode) -> None:
        if c.kind == "gelu":
            _emit_gelu(imp, c)
        elif c.kind == "erf":
            k = c.params["k"]
            _table(imp, c.x, c.y, lambda v: _erf(k * v))
        elif c.kind == "layernorm":
            layer_norm(imp, c.x, c.y, c.params["gamma"], c.params["beta"])
        else:
            x = imp.tensors.value(c.x, IDENTITY)
            imp.tensors.finish(c.y, transpose(imp, x, c.params["perm"], c.y), IDENTITY)

    return emit


def _fits(imp: OnnxImporter, c: Chain) -> bool:
    """The chain's input and output are data the importer takes; a table needs both ranges fixed."""
    for name in (c.x, c.y):
        if imp.tensors.dtype(name) not in ("float32", "int8", "uint8") or imp.m.shape(name) is None \
                or not 0 < len(imp.m.shape(name)) <= 4 or imp.tensors.is_const(name):  # type: ignore[arg-type]
            return False
    if c.kind == "erf":
        return _fixed_range(imp, c.x) and imp.tensors.act_range(c.y) is not None
    return True


def _fixed_range(imp: OnnxImporter, name: str) -> bool:
    """Whether ``name`` has a fixed range at import: its own, or a DequantizeLinear's input's."""
    if imp.tensors.act_range(name) is not None:
        return True
    dq = next((n for n in imp.live if name in n.outputs), None)
    return dq is not None and dq.op_type == "DequantizeLinear" and imp.tensors.act_range(dq.inputs[0]) is not None


@onnx_planner
def plan_transformer_chains(imp: OnnxImporter, done: FusionPlan) -> FusionPlan:
    """The chains of :mod:`.onnx.transformer_plan`: each chain's last node imports it, the others are absorbed."""
    part = FusionPlan()
    for c in find_chains(imp, done.absorbed):
        if not _fits(imp, c):
            continue
        part.absorbed.update(n.index for n in c.nodes if n is not c.end)
        part.chains[c.end.index] = _emit_chain(c)
    return part
