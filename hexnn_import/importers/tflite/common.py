"""Checks and small helpers shared by the TFLite builtin handlers (``tflite/handlers/*.py``).

A checker returns why one operator instance cannot be imported (None when
it can); the importer gathers every reason before building anything, so an
unsupported model fails with one error listing all of them.
"""
from __future__ import annotations

import numpy as np
import tflite

from hexnn_import.graph import NNPad, shape4
from hexnn_import.importers.nodes.core import ACT_CLIP, ACT_NONE, apply_activation, requantize_to
from hexnn_import.importers.tflite.importer import QUANT_TYPES, TFLiteImporter, is_quantized
from hexnn_import.importers.tflite.reader import TFOperator, TFTensor
from hexnn_import.importers.nodes.values import Value

PADDING = {tflite.Padding.SAME: NNPad.SAME, tflite.Padding.VALID: NNPad.VALID}


def activation_kind(t: TFTensor) -> str | None:
    """'float', 'int8' or 'uint8' for an activation tensor the importer handles; None otherwise."""
    if t.dtype == "float32":
        return "float"
    if is_quantized(t):
        return t.dtype
    return None


def check_io(imp: TFLiteImporter, op: TFOperator, inputs: tuple[int, ...] = (0,), outputs: tuple[int, ...] = (0,),
             same_type: bool = True) -> str | None:
    """The listed activation inputs / outputs are float32 or per-tensor int8/uint8 (one kind when ``same_type``)."""
    kinds = set()
    for pos in inputs:
        if pos >= len(op.inputs) or op.inputs[pos] < 0:
            return f"missing input {pos}"
        t = imp.tensor(op.inputs[pos])
        k = activation_kind(t)
        if k is None and t.data is None:
            return f"input {t.name} of type {t.dtype} is not float32 or per-tensor int8/uint8"
        if t.data is None and k is not None:
            kinds.add(k)
    for pos in outputs:
        if pos >= len(op.outputs):
            return f"missing output {pos}"
        t = imp.tensor(op.outputs[pos])
        k = activation_kind(t)
        if k is None:
            return f"output {t.name} of type {t.dtype} is not float32 or per-tensor int8/uint8"
        kinds.add(k)
    if same_type and len(kinds) > 1:
        return f"mixed activation types {sorted(kinds)}"
    return None


def check_fused(imp: TFLiteImporter, op: TFOperator) -> str | None:
    """The fused activation (if the options have one) is NONE, RELU, RELU6 or RELU_N1_TO_1."""
    o = op.options
    if o is None or not hasattr(o, "FusedActivationFunction"):
        return None
    act = int(o.FusedActivationFunction())
    if act != ACT_NONE and act not in ACT_CLIP:
        return f"fused activation {act} (TANH / SIGN_BIT) is not supported"
    return None


def fused(op: TFOperator) -> int:
    """The operator's fused activation, ACT_NONE when it has none."""
    o = op.options
    return int(o.FusedActivationFunction()) if o is not None and hasattr(o, "FusedActivationFunction") else ACT_NONE


def finish(imp: TFLiteImporter, op: TFOperator, v: Value, out_pos: int = 0) -> None:
    """Apply the fused activation, bring ``v`` onto the output tensor's range, bind it.

    Range-preserving ops whose TFLite output parameters differ from their
    input's get a Requantize_8to8 here (issue: "a Requantize_8to8 wherever
    TFLite's input and output parameters differ"). A float model's tensor
    keeps the range its op produced when that range is fixed; only a
    run-time range is pinned to the calibrated one.
    """
    index = op.outputs[out_pos]
    t = imp.tensor(index)
    v = apply_activation(imp, v, fused(op), t.name)
    if t.dtype != "float32" or v.range is None:
        v = requantize_to(imp, v, imp.act_range(index), t.name)
    imp.set_output(index, v)


def out_shape(imp: TFLiteImporter, op: TFOperator, pos: int = 0) -> tuple[int, int, int, int]:
    """The 4-D shape of an operator output tensor."""
    return shape4(imp.tensor(op.outputs[pos]).shape)


def const_ints(imp: TFLiteImporter, op: TFOperator, pos: int) -> np.ndarray | None:
    """The int data of a constant input (shape/axes/paddings), None when it is not constant."""
    if pos >= len(op.inputs) or op.inputs[pos] < 0:
        return None
    t = imp.tensor(op.inputs[pos])
    if t.data is None or t.dtype not in ("int32", "int64", "int16", "int8", "uint8"):
        return None
    return np.asarray(t.data).astype(np.int64)


__all__ = ["PADDING", "QUANT_TYPES", "activation_kind", "check_io", "check_fused", "fused", "finish", "out_shape",
           "const_ints"]
