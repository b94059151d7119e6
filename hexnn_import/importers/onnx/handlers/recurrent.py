"""ONNX ``LSTM``, ``GRU`` and ``RNN`` (ONNX Operators.md), unrolled over their static sequence length.

Forward, reverse and bidirectional; ``layout`` 0 (``[T, B, I]``) or 1 with batch 1 (the same data
order); constant weights ``W``, ``R``, ``B``; initial states constant (a zero state skips its
products) or computed; ``sequence_lens`` absent or constant and equal to ``T``; the default
activations (RNN: Tanh or Sigmoid). Refused with the reason: ``clip``, ``input_forget``, non-zero
peepholes ``P``, other activations. The cell arithmetic and the ranges of the tensors that exist
only in the decomposition: :mod:`.nodes.recurrent`. Float models (a quantized activation input is
refused): with calibration every decomposition tensor gets its observed range, without it the
ranges are found at run time.
"""
from __future__ import annotations

import numpy as np

from hexnn_import.importers.nodes.core import reshape_value
from hexnn_import.importers.nodes.movement import concat, slice_value
from hexnn_import.importers.nodes.recurrent import RECURRENT_EMITS, Cell, Gate, Unroller, rows_of
from hexnn_import.importers.onnx.common import check_data, need_const
from hexnn_import.importers.onnx.importer import OnnxImporter, onnx_op
from hexnn_import.importers.onnx.layout import IDENTITY, onnx4
from hexnn_import.importers.onnx.reader import ONode
from hexnn_import.importers.nodes.values import Value

#: gate order of W / R / B in the ONNX spec, and the default activations
GATES = {"LSTM": ("i", "o", "f", "c"), "GRU": ("z", "r", "h"), "RNN": ("h",)}
DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
#: most cell steps (time steps x directions) one layer is unrolled into
MAX_STEPS = 512


def _directions(node: ONode) -> int:
    return 2 if str(node.attr("direction", "forward")) == "bidirectional" else 1


def _check(imp: OnnxImporter, node: ONode) -> str | None:
    """Why this recurrent node cannot be unrolled (None: it can); see the module doc."""
    why = check_data(imp, node, (0,)) or need_const(imp, node, (1, 2, 3, 4, 7))
    if why:
        return why
    if imp.tensors.dtype(node.inputs[0]) != "float32":
        return "quantized recurrent input (float models only)"
    shape = imp.tensors.shape(node.inputs[0])
    layout = int(node.attr("layout", 0))
    steps, batch = (shape[0], shape[1]) if layout == 0 else (shape[1], shape[0])
    if len(shape) != 3 or (layout == 1 and batch != 1):
        return "input of rank other than 3, or layout 1 with batch > 1"
    why = _weight_shapes(imp, node, shape[2], batch)
    if why:
        return why
    if node.attr("clip") is not None or int(node.attr("input_forget", 0)) != 0:
        return "clip / input_forget"
    acts = [str(a) for a in node.attr("activations", [])] or DEFAULT_ACTS[node.op_type] * _directions(node)
    allowed = [DEFAULT_ACTS[node.op_type], ["Sigmoid"]] if node.op_type == "RNN" else [DEFAULT_ACTS[node.op_type]]
    per = len(DEFAULT_ACTS[node.op_type])
    if any(acts[k:k + per] not in allowed for k in range(0, len(acts), per)):
        return f"activations {acts} (only the defaults{' or Sigmoid' if node.op_type == 'RNN' else ''})"
    if node.op_type == "LSTM" and node.input(7) and np.any(imp.tensors.const(node.input(7))):
        return "peephole weights P"
    lens = node.input(4)
    if lens and np.any(imp.tensors.const(lens) != steps):
        return f"sequence_lens other than the sequence length {steps}"
    for pos in (5, 6):
        name = node.input(pos)
        if name and not imp.tensors.is_const(name):
            why = check_data(imp, node, (pos,))
            if why:
                return why
    if steps * _directions(node) > MAX_STEPS:
        return f"{steps} steps x {_directions(node)} directions (more than {MAX_STEPS} cell steps)"
    return None


def _weight_shapes(imp: OnnxImporter, node: ONode, size: int, batch: int) -> str | None:
    """W ``[nd, G*H, I]``, R ``[nd, G*H, H]``, B ``[nd, 2*G*H]`` and states ``[nd, B, H]`` as the spec has them."""
    hidden, nd, g = int(node.attr("hidden_size", 0)), _directions(node), len(GATES[node.op_type])
    want = {1: (nd, g * hidden, size), 2: (nd, g * hidden, hidden), 3: (nd, 2 * g * hidden),
            5: (nd, batch, hidden), 6: (nd, batch, hidden)}
    if hidden <= 0:
        return "no hidden_size"
    for pos, shape in want.items():
        name = node.input(pos)
        if name and tuple(imp.tensors.shape(name)) != shape:
            return f"input {pos} of shape {list(imp.tensors.shape(name))} (the spec's {list(shape)})"
    return None


def _cell(imp: OnnxImporter, node: ONode, d: int) -> Cell:
    """Direction ``d``'s gates from W ``[nd, G*H, I]``, R ``[nd, G*H, H]``, B ``[nd, 2*G*H]``."""
    hidden = int(node.attr("hidden_size"))
    names = GATES[node.op_type]
    w, r = imp.tensors.const(node.inputs[1])[d], imp.tensors.const(node.inputs[2])[d]
    g = len(names)
    bias = imp.tensors.const(node.input(3))[d] if node.input(3) else np.zeros(2 * g * hidden)
    gates = {}
    for k, n in enumerate(names):
        rows = slice(k * hidden, (k + 1) * hidden)
        gates[n] = Gate(w[rows], r[rows], bias[:g * hidden][rows], bias[g * hidden:][rows])
    act = str((node.attr("activations") or ["Tanh"])[0]).lower() if node.op_type == "RNN" else "tanh"
    return Cell(node.op_type.lower(), gates, hidden, bool(node.attr("linear_before_reset", 0)), act)


def _state(imp: OnnxImporter, node: ONode, pos: int, d: int, batch: int, hidden: int) -> Value | None:
    """Direction ``d``'s initial state ``[1, 1, B, H]`` from input ``pos`` (None: absent or all zero)."""
    name = node.input(pos)
    if not name or (imp.tensors.is_const(name) and not np.any(imp.tensors.const(name))):
        return None
    v = imp.tensors.value(name, IDENTITY)  # [1, nd, B, H]
    return slice_value(imp, v, [0, d, 0, 0], [1, 1, batch, hidden], f"{node.label}/initial{pos}_d{d}")


def _join(imp: OnnxImporter, name: str, parts: list[Value]) -> None:
    """Bind ONNX output ``name`` to ``parts`` (each ``[1, 1, B, H]``) joined along rows in its own shape."""
    shape4 = onnx4(imp.tensors.shape(name))
    rows = sum(p.shape[2] for p in parts)
    y = concat(imp, parts, 2, (1, 1, rows, parts[0].shape[3]), imp.tensors.act_range(name), f"{name}/join")
    imp.tensors.finish(name, reshape_value(imp, y, shape4, f"{name}/shape"), IDENTITY)


@onnx_op(("LSTM", "GRU", "RNN"), RECURRENT_EMITS, _check)
def recurrent(imp: OnnxImporter, node: ONode) -> None:
    """Unroll the layer per direction (module doc) and bind the outputs the graph reads: Y, Y_h, Y_c."""
    shape = imp.tensors.shape(node.inputs[0])
    layout = int(node.attr("layout", 0))
    steps, batch = (shape[0], shape[1]) if layout == 0 else (shape[1], shape[0])
    x = rows_of(imp, imp.tensors.value(node.inputs[0], IDENTITY), node.label)
    reverse_only = str(node.attr("direction", "forward")) == "reverse"
    unroll = Unroller(imp, node.label, imp.float_range)
    runs = []
    for d in range(_directions(node)):
        cell = _cell(imp, node, d)
        h0 = _state(imp, node, 5, d, batch, cell.hidden)
        c0 = _state(imp, node, 6, d, batch, cell.hidden) if node.op_type == "LSTM" else None
        runs.append(unroll.run(cell, x, steps, batch, h0, c0, reverse_only or d == 1, d))
    used = imp.tensors.used_inputs()
    outs = node.outputs + [""] * 3
    if outs[0] in used:
        _join(imp, outs[0], [run.h[t] for t in range(steps) for run in runs])
    if outs[1] in used:
        _join(imp, outs[1], [run.h_last for run in runs])
    if outs[2] in used:
        cs = [run.c_last for run in runs]
        _join(imp, outs[2], [c for c in cs if c is not None])
