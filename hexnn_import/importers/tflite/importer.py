"""TFLite -> hexagon_nn Graph (int8 / uint8 models, and float models).

The importer walks the operators in order and asks a handler per builtin
(registered in :mod:`.tflite.registry` by the modules of :data:`HANDLER_MODULES`) to append hexagon_nn
nodes. Before any node is built,
every operator is checked, so an unsupported model fails with one error that
lists every unsupported op with its tensor names.

Quantization (SEMANTICS §1): ``(scale, zero_point)`` becomes ``(min, max)``
with ``min = scale * (qmin - zp)``; int8 data becomes quint8 by XOR 0x80, the
float range unchanged. Graph inputs are fed as quint8 (the API layer does the
XOR); graph outputs leave as (data, min, max) triples.

Float models: every float activation becomes a quint8 value whose range is
fixed by calibration or computed at run time (builder.py's range policy);
float inputs are quantized at the INPUT (AutoQuantize / Quantize) and float
outputs dequantized before the OUTPUT node.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from hexnn_import.errors import ModelFormatError, UnsupportedOpsError
from hexnn_import.graph import Graph, GraphIO, OutputDef, Ref, shape4
from hexnn_import.importers.tflite.dynamic_dims import resolve_placeholder_shapes
from hexnn_import.importers.tflite.control import inline_constant_ifs
from hexnn_import.importers.tflite.fold import dequantize_hybrid_weights, fold_constants
from hexnn_import.importers.tflite.layer_records import read_layers
from hexnn_import.importers.tflite.reader import TFModel, TFOperator, TFTensor, read_tflite
from hexnn_import.importers.tflite.registry import (EMITS, FUSERS, HANDLERS, OP_EMITS, Checker, Fused, Handler,
                                                    tflite_op)
from hexnn_import.importers.tflite.detect_options import shape_outputs as shape_detection_outputs
from hexnn_import.importers.tflite.shapes import fix_input_shapes
from hexnn_import.importers.nodes.builder import GraphBuilder, calibrated_range
from hexnn_import.importers.nodes.core import dequantize, quantize_float
from hexnn_import.importers.nodes.int16 import range16
from hexnn_import.importers.tflite.int16 import is_int16, scale_of
from hexnn_import.importers.nodes.values import Value
from hexnn_import.importers.nodes.weights import to_quint8
from hexnn_import.ops.quant import quantize_u8, scale_zp_to_range

QUANT_TYPES = {"int8": True, "uint8": False}  # dtype -> signed


class TFLiteImporter(GraphBuilder):
    """Builds a Graph from a parsed TFModel (quantized, or float with run-time or calibrated ranges)."""

    def __init__(self, model: TFModel, label: str = "model",
                 calibration: Mapping[str, tuple[float, float]] | None = None):
        super().__init__(label, "tflite", calibration)
        self.model = model
        self.values: dict[int, Value] = {}
        self.implied_ranges = self._implied_ranges()
        self.fused: dict[int, Fused] = {}  # operator index -> the fused chain it belongs to

    def _implied_ranges(self) -> dict[str, tuple[float, float]]:
        """Ranges of float tensors that sit between quantized ones (a quantizer that leaves an op in float,
        e.g. ai-edge-quantizer's PRELU): a DEQUANTIZE output has its input's range, the float input of a
        QUANTIZE (not a graph input) the QUANTIZE output's range, so no run-time range is needed there."""
        out: dict[str, tuple[float, float]] = {}
        graph_inputs = set(self.model.inputs)
        for op in self.model.operators:
            if op.opname not in ("DEQUANTIZE", "QUANTIZE") or not op.inputs or not op.outputs:
                continue
            x, y = self.tensor(op.inputs[0]), self.tensor(op.outputs[0])
            if op.opname == "DEQUANTIZE" and is_quantized(x) and x.data is None and y.dtype == "float32":
                out[y.name] = self.qrange(x)
            elif (op.opname == "QUANTIZE" and x.dtype == "float32" and x.data is None and is_quantized(y)
                  and op.inputs[0] not in graph_inputs):
                out.setdefault(x.name, self.qrange(y))
        return out

    # ---- helpers used by op handlers --------------------------------------------
    def tensor(self, index: int) -> TFTensor:
        return self.model.tensors[index]

    def qrange(self, t: TFTensor) -> tuple[float, float]:
        """Float (min, max) of a per-tensor quantized int8/uint8 tensor (SEMANTICS §1)."""
        assert t.quant is not None
        return scale_zp_to_range(float(t.quant.scale[0]), int(t.quant.zero_point[0]), t.dtype == "int8")

    def act_range(self, index: int) -> tuple[float, float] | None:
        """The fixed range of an activation tensor, or None when it is only known at run time.

        Quantized tensors: from scale / zero point; float tensors: from
        calibration when given (see builder.py's range policy).
        """
        t = self.tensor(index)
        if is_quantized(t):
            return self.qrange(t)
        return self.float_range(t.name)

    def is_float(self, index: int) -> bool:
        """A float32 source tensor (its graph value is still quint8 unless it is a float Const)."""
        return self.tensor(index).dtype == "float32"

    def value(self, index: int) -> Value:
        """The graph value of a tensor, making a Const for constant tensors on first use."""
        v = self.values.get(index)
        if v is not None:
            return v
        t = self.tensor(index)
        if t.data is None:
            raise ModelFormatError(f"{self.label}: tensor {t.name} is read before any operator writes it")
        if is_quantized(t):
            v = self.quantized_const(t.data, t, t.name)
        else:
            data = t.data.astype(np.float32) if t.dtype == "float32" else t.data
            ref = self.graph.const_ref(np.asarray(data).reshape(shape4(t.shape)), t.name)
            v = Value(ref, shape4(t.shape), "float" if t.dtype == "float32" else t.dtype)
        self.values[index] = v
        return v

    def qvalue(self, index: int) -> Value:
        """The quint8 value of a tensor: float constants are quantized onto their own range."""
        t = self.tensor(index)
        if t.data is not None and t.dtype == "float32":
            key = -1 - index  # cache slot distinct from the float const's
            v = self.values.get(key)
            if v is None:
                data = np.asarray(t.data, dtype=np.float64)
                if not np.all(np.isfinite(data)):
                    raise ModelFormatError(f"{self.label}: constant tensor {t.name} holds NaN or Inf")
                rng = calibrated_range(float(data.min()) if data.size else 0.0, float(data.max()) if data.size else 0.0)
                codes = quantize_u8(data, *rng).reshape(shape4(t.shape))
                v = Value(self.graph.const_ref(codes, f"{t.name}/quantized"), codes.shape, "quint8",
                          *self.range_consts(rng, t.name), rng)
                self.values[key] = v
            return v
        v = self.value(index)
        if not v.quantized:
            raise ModelFormatError(f"{self.label}: tensor {t.name} of type {t.dtype} where quantized data is expected")
        return v

    def quantized_const(self, data: np.ndarray, t: TFTensor, name: str) -> Value:
        """A quint8 Const (XOR 0x80 for int8) with its min/max Consts."""
        codes = to_quint8(data, t.dtype).reshape(shape4(data.shape))
        mn, mx = self.qrange(t)
        ref = self.graph.const_ref(codes, name)
        return Value(ref, codes.shape, "quint8", self.float_const(mn, f"{name}/min"),
                     self.float_const(mx, f"{name}/max"), (mn, mx))

    def set_output(self, index: int, value: Value) -> None:
        """Bind an operator output tensor to its graph value."""
        self.values[index] = value
        self.map_tensor(self.tensor(index).name, value)

    def options(self, op: TFOperator) -> Any:
        """The operator's options table; ModelFormatError naming the op when it is missing."""
        if op.options is None:
            first = self.tensor(op.outputs[0]).name if op.outputs else f"op{op.index}"
            raise ModelFormatError(f"{self.label}: operator {op.opname} ({first}) has no options table")
        return op.options

    # ---- the walk ------------------------------------------------------------------
    def check_supported(self) -> None:
        """Raise one UnsupportedOpsError naming every operator that cannot be imported."""
        bad: dict[str, list[str]] = {}
        notes: dict[str, str] = {}
        for op in self.model.operators:
            if op.index in self.fused:
                continue
            entry = HANDLERS.get(op.opname)
            first_out = self.tensor(op.outputs[0]).name if op.outputs else f"op{op.index}"
            if entry is None:
                reason = None
                key = op.opname
            else:
                try:
                    reason = entry[0](self, op)
                except (IndexError, AttributeError, KeyError, TypeError) as exc:
                    reason = f"malformed operator: {type(exc).__name__}"
                if reason is None and self._is_dynamic_range(op):
                    reason = "dynamic range"
                if reason is None:
                    continue
                key = f"{op.opname} ({reason})"
            bad.setdefault(key, []).append(first_out)
            if self._is_dynamic_range(op):
                notes[key] = "dynamic range: quantized weights with float activations"
        for i in self.model.inputs:
            t = self.tensor(i)
            if t.dtype != "float32" and not is_quantized(t) and not is_int16(t):
                bad.setdefault(f"graph input of type {t.dtype}", []).append(t.name)
        if bad:
            raise UnsupportedOpsError("TFLite", bad, notes)

    def _is_dynamic_range(self, op: TFOperator) -> bool:
        ts = [self.tensor(i) for i in op.inputs if i >= 0]
        return any(t.dtype == "float32" and t.data is None for t in ts) and any(
            t.dtype in QUANT_TYPES and t.data is not None for t in ts)

    def run(self) -> Graph:
        """Import the model; returns the graph (verified)."""
        self.fused = {i: f for fuser in FUSERS for f in fuser(self) for i in f.ops}
        self.check_supported()
        self._inputs()
        for op in self.model.operators:
            chain = self.fused.get(op.index)
            if chain is None:
                HANDLERS[op.opname][1](self, op)
            elif op.index == chain.anchor:
                chain.emit(self)
        self._outputs()
        self.fuse_fixed_chains()
        self.graph.source_layers = read_layers(self.model)
        self.graph.verify()
        return self.graph

    def _inputs(self) -> None:
        defs, ios = [], []
        for k, i in enumerate(self.model.inputs):
            t = self.tensor(i)
            if t.dtype == "float32":
                defs.append(OutputDef(shape4(t.shape), "float"))
                ios.append(GraphIO(t.name, t.shape, "float32", None, None, index=k))
            else:
                defs.append(OutputDef(shape4(t.shape), "quint16" if is_int16(t) else "quint8"))
                assert t.quant is not None
                ios.append(GraphIO(t.name, t.shape, t.dtype, float(t.quant.scale[0]), int(t.quant.zero_point[0]),
                                   index=k))
        node = self.graph.append("INPUT", [], defs, name="INPUT")
        self.graph.inputs = ios
        for k, i in enumerate(self.model.inputs):
            t = self.tensor(i)
            if t.dtype == "float32":
                v = quantize_float(self, Ref(node.node_id, k), shape4(t.shape), self.act_range(i), t.name)
            else:
                mn, mx = range16(scale_of(t)) if is_int16(t) else self.qrange(t)
                v = Value(Ref(node.node_id, k), shape4(t.shape), "quint16" if is_int16(t) else "quint8",
                          self.float_const(mn, f"{t.name}/min"),
                          self.float_const(mx, f"{t.name}/max"), (mn, mx))
            self.set_output(i, v)

    def _outputs(self) -> None:
        refs: list[Ref] = []
        ios = []
        for i in self.model.outputs:
            t = self.tensor(i)
            v = self.value(i)
            start = len(refs)
            if t.dtype == "float32" and v.quantized:
                refs.append(dequantize(self, v, t.name))
            elif v.quantized:
                refs.extend(v.triple())
            else:
                refs.append(v.data)
            scale = float(t.quant.scale[0]) if t.quant is not None and t.quant.scale.size else None
            zp = int(t.quant.zero_point[0]) if scale is not None else None
            ios.append(GraphIO(t.name, t.shape, t.dtype, scale, zp, refs=tuple(range(start, len(refs)))))
        self.graph.append("OUTPUT", refs, [], name="OUTPUT")
        self.graph.outputs = ios


def is_quantized(t: TFTensor) -> bool:
    """A per-tensor quantized int8/uint8 tensor."""
    return t.dtype in QUANT_TYPES and t.quant is not None and not t.quant.per_channel


#: the package of the handler modules (one table per format: the names below, in load order)
HANDLER_PACKAGE = "hexnn_import.importers.tflite.handlers"
#: the modules whose ``@tflite_op`` functions handle TFLite builtins: a new handler file is added here
#: (tests/importers/test_handler_modules.py fails on a file that uses ``@tflite_op`` and is not listed)
HANDLER_MODULES = ("conv_pool", "activation", "custom", "detect", "elementwise", "decomposed", "movement", "quantize",
                   "reduce", "resize", "shape", "transformer", "transpose_conv", "sequence", "variable", "unary", "int16",
                   "int16_activation")  # int16 last: they wrap the 8-bit handlers


def load_handlers() -> None:
    """Import the handler modules of :data:`HANDLER_MODULES` (each registers its builtins with ``@tflite_op``)."""
    import importlib

    for name in HANDLER_MODULES:
        importlib.import_module(f"{HANDLER_PACKAGE}.{name}")


def load_tflite(path: str | Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None
                ) -> tuple[TFModel, list[str]]:
    """Read a .tflite file with its input shapes fixed and constants folded (see :func:`import_tflite`).

    Also what the XS3 lowering reads, so both paths see the same operators.
    Returns the model and the notes for the summary.
    """
    model = read_tflite(path)
    notes = fix_input_shapes(model, input_shapes or {}, str(path))
    notes += shape_detection_outputs(model)
    fold_constants(model)
    notes += inline_constant_ifs(model)
    resolve_placeholder_shapes(model)
    dequantize_hybrid_weights(model)
    return model, notes


def import_tflite(path: str | Path, calibration: Mapping[str, tuple[float, float]] | None = None,
                  input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Graph:
    """Read and import a .tflite file (``calibration``: float tensor name -> observed (min, max)).

    Before op mapping: input shapes are fixed (``tflite.shapes``: a dynamic
    batch becomes 1 with a note, ``input_shapes`` may set the batch), then
    every operator on constants is folded and hybrid weights dequantized
    (``tflite.fold``), so shape arithmetic never reaches a handler.
    """
    load_handlers()
    model, notes = load_tflite(path, input_shapes)
    graph = TFLiteImporter(model, str(path), calibration).run()
    if notes:
        graph.meta.setdefault("notes", []).extend(notes)  # type: ignore[union-attr]
    return graph


__all__ = ["TFLiteImporter", "tflite_op", "HANDLERS", "EMITS", "OP_EMITS", "FUSERS", "Fused", "Checker", "Handler",
           "QUANT_TYPES", "is_quantized", "HANDLER_MODULES", "load_handlers", "load_tflite", "import_tflite"]
