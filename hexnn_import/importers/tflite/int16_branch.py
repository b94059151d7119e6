"""The int16x8 branch of TFLite builtins: how a handler module registers a builtin's int16 handler over its
8-bit one (:func:`check16`, :func:`branch`, :func:`emits16`), and what those handlers share (the quint16 value
of a tensor, the fused activation's range and top clamp). A handler module using it imports the 8-bit
handler modules first, so the handlers they registered are the ones wrapped (``tflite.handlers.int16`` module doc).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from hexnn_import.graph import shape4
from hexnn_import.importers.nodes.core import ACT_CLIP, ACT_NONE
from hexnn_import.importers.nodes.int16 import activation_range, clamp_top16, const16, range16
from hexnn_import.importers.tflite.common import fused
from hexnn_import.importers.tflite.importer import TFLiteImporter
from hexnn_import.importers.tflite.registry import HANDLERS, OP_EMITS, Checker, Handler
from hexnn_import.importers.tflite.int16 import scale_of
from hexnn_import.importers.tflite.int16_checks import int16_op
from hexnn_import.importers.tflite.reader import TFOperator
from hexnn_import.importers.nodes.values import Value

Range = tuple[float, float]

CONV16 = ("QuantizedTransposeConv2d_16x16p32to16", "QuantizedPad_u16", "SpaceToDepth_16", "Reshape")
VIA8 = ("Convert_u16_8", "Convert_8_u16", "QuantizedAdd_u16")
POOL16 = VIA8 + ("SpaceToDepth_16", "QuantizedTransposeConv2d_16x16p32to16", "QuantizedSub_u16")
FLOAT16 = ("Quantize", "Dequantize", "Sub_f", "Add_f", "Convert_8_u16", "Convert_u16_8", "QuantizedAdd_u16",
           "QuantizedSub_u16")
EDGE16 = ("Quantize", "Dequantize", "Sub_f", "Add_f", "Convert_8_u16", "Convert_u16_8", "QuantizedAdd_u16",
          "QuantizedSub_u16")


def emits16(name: str, extra: tuple[str, ...]) -> tuple[str, ...]:
    """The ops builtin ``name`` may emit: its 8-bit handler's and the int16 branch's."""
    return OP_EMITS[name] + tuple(e for e in extra if e not in OP_EMITS[name])


def check16(name: str, check: Checker) -> Checker:
    """The checker of builtin ``name``: ``check`` for an int16 operator, the 8-bit checker otherwise."""
    check8 = HANDLERS[name][0]

    def either(imp: TFLiteImporter, op: TFOperator) -> str | None:
        return check(imp, op) if int16_op(imp, op) else check8(imp, op)

    either.__doc__ = f"{(check8.__doc__ or '').strip()} int16x8: {(check.__doc__ or '').strip()}"
    return either


def branch(name: str) -> Callable[[Handler], Handler]:
    """Wrap the int16 handler of builtin ``name`` so other operators go to the 8-bit handler registered
    before it (apply below ``@tflite_op``, which then registers the wrapper)."""
    handle8 = HANDLERS[name][1]

    def deco(fn: Handler) -> Handler:
        @functools.wraps(fn)
        def handle(imp: TFLiteImporter, op: TFOperator) -> None:
            (fn if int16_op(imp, op) else handle8)(imp, op)

        return handle

    return deco


def value16(imp: TFLiteImporter, index: int) -> Value:
    """The quint16 value of an int16 tensor (a constant becomes a quint16 Const)."""
    t = imp.tensor(index)
    if t.data is not None:
        s = scale_of(t)
        key = -1 - index
        if key not in imp.values:
            imp.values[key] = const16(imp, np.asarray(t.data, np.float64).reshape(shape4(t.shape)) * s, range16(s),
                                      t.name)
        return imp.values[key]
    return imp.value(index)


def activation16(imp: TFLiteImporter, op: TFOperator, act: int | None = None) -> tuple[Range, float | None]:
    """The output range and top clamp of the operator's fused activation (or ``act``), on the output tensor's
    scale (``nodes.int16.activation_range``)."""
    act = fused(op) if act is None else act
    lo, hi = (-np.inf, np.inf) if act == ACT_NONE else ACT_CLIP[act]
    return activation_range(scale_of(imp.tensor(op.outputs[0])), lo, hi)


def out_range16(imp: TFLiteImporter, op: TFOperator) -> Range:
    """The range the operator writes (:func:`activation16`); :func:`finish16` clamps its top."""
    return activation16(imp, op)[0]


def finish16(imp: TFLiteImporter, op: TFOperator, y: Value, act: int | None = None) -> None:
    """Clamp ``y`` at the fused activation's top where its range does not (``nodes.int16.clamp_top16``) and
    bind it to the output tensor."""
    top = activation16(imp, op, act)[1]
    name = imp.tensor(op.outputs[0]).name
    imp.set_output(op.outputs[0], y if top is None else clamp_top16(imp, y, top, name))
