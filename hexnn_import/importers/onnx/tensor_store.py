"""The ONNX importer's tensor table: graph values in tracked layouts, constants, ranges, graph I/O.

A part of :class:`~hexnn_import.importers.onnx.importer.OnnxImporter` (``imp.tensors``): it appends
through the importer's :class:`~hexnn_import.importers.nodes.builder.GraphBuilder` (``graph``,
``map_tensor``, the range helpers), which it is given. Layouts: :mod:`onnx.layout`; ranges:
:mod:`onnx.qparams` and builder.py's range policy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hexnn_import.errors import ModelFormatError
from hexnn_import.graph import GraphIO, OutputDef, Ref
from hexnn_import.importers.nodes.builder import GraphBuilder, calibrated_range
from hexnn_import.importers.nodes.core import dequantize, quantize_float, requantize_to, reshape_value
from hexnn_import.importers.nodes.elementwise import reshape_plain
from hexnn_import.importers.nodes.movement import transpose
from hexnn_import.importers.onnx.layout import IDENTITY, Perm, graph_shape, keeps_order, onnx4, relayout, size_problem
from hexnn_import.importers.onnx.qparams import QParam, Range, scan_qparams
from hexnn_import.importers.onnx.reader import ONode, OnnxModel, QConst, printable
from hexnn_import.importers.nodes.values import Value
from hexnn_import.importers.nodes.weights import to_quint8
from hexnn_import.ops.quant import quantize_u8

QUANT_DTYPES = ("int8", "uint8")


@dataclass
class Tensor:
    """An ONNX tensor in the graph: its value and its layout (onnx.layout)."""

    value: Value
    perm: Perm


class TensorStore:
    """Tensor bookkeeping of the ONNX importer (module doc)."""

    def __init__(self, model: OnnxModel, builder: GraphBuilder, live: Sequence[ONode]):
        self.m = model
        self.b = builder
        self.live = live
        self.by_name: dict[str, Tensor] = {}
        #: (tensor, layout) -> the value moved into that layout (made once)
        self.relayouts: dict[tuple[str, Perm], Value] = {}
        self._const_values: dict[tuple[str, Perm, Range | None], Value] = {}
        self.qparams, self.hints = scan_qparams(model)
        #: fixed ranges a fusion chose (the importer copies them from its onnx.fuse.FusionPlan)
        self.range_override: dict[str, Range] = {}
        self.consumers_of = model.consumers()
        self._used: set[str] | None = None
        builder.graph.meta["layouts"] = {}

    # ---- static facts ----------------------------------------------------------------
    def shape(self, name: str) -> tuple[int, ...]:
        """The static ONNX shape (ModelFormatError when shape inference could not tell it)."""
        s = self.m.shape(name)
        if s is None:
            raise ModelFormatError(f"{self.m.label}: tensor {printable(name)} has no static shape")
        return s

    def dtype(self, name: str) -> str:
        """numpy dtype name of a tensor ('float32', 'int8', ...; '' when unknown)."""
        dt = self.m.dtype(name)
        return "" if dt is None else str(dt)

    def is_const(self, name: str) -> bool:
        return name in self.m.consts

    def const(self, name: str) -> np.ndarray:
        return np.asarray(self.m.consts[name])

    def qconst(self, name: str) -> QConst | None:
        """The codes behind a DequantizeLinear'd constant (exact QDQ weights), or None."""
        return self.m.qconsts.get(name)

    def consumers(self, name: str) -> list:
        return self.consumers_of.get(name, [])

    # ---- ranges --------------------------------------------------------------------
    def qparam(self, name: str) -> QParam | None:
        return self.qparams.get(name)

    def act_range(self, name: str) -> Range | None:
        """Fixed range of a tensor, or None when only known at run time (module doc of onnx.importer)."""
        if name in self.range_override:
            return self.range_override[name]
        qp = self.qparams.get(name)
        if qp is not None and self.dtype(name) in QUANT_DTYPES:
            return qp.range
        if name in self.hints:
            return self.hints[name]
        return self.b.float_range(name)

    # ---- values --------------------------------------------------------------------
    def tensor(self, name: str) -> Tensor:
        """The graph value of a non-constant tensor and its layout."""
        t = self.by_name.get(name)
        if t is None:
            raise ModelFormatError(f"{self.m.label}: tensor {printable(name)} is read before any node writes it")
        return t

    def perm_of(self, name: str) -> Perm:
        """The layout of a tensor (constants: the ONNX order, they can take any)."""
        return IDENTITY if self.is_const(name) else self.tensor(name).perm

    def value(self, name: str, perm: Perm | None = None) -> Value:
        """The quint8 (or int) value of ``name`` laid out as ``perm`` (its own layout when None).

        A transpose that moves only size-1 axes is a reshape; anything else is
        one Transpose_8, made once per tensor and layout.
        """
        if self.is_const(name):
            return self.const_value(name, perm or IDENTITY)
        t = self.tensor(name)
        if perm is None or tuple(perm) == t.perm:
            return t.value
        key = (name, tuple(perm))
        v = self.relayouts.get(key)
        if v is None:
            q = relayout(t.perm, tuple(perm))  # type: ignore[arg-type]
            shape = tuple(t.value.shape[a] for a in q)
            if keeps_order(t.value.shape, q):
                if t.value.quantized:
                    v = reshape_value(self.b, t.value, shape, f"{printable(name)}/layout")  # type: ignore[arg-type]
                else:
                    v = reshape_plain(self.b, t.value, shape, f"{printable(name)}/layout")  # type: ignore[arg-type]
            elif t.value.etype == "quint8":
                v = transpose(self.b, t.value, list(q), f"{printable(name)}/transpose")
            else:  # int32 sums (ConvInteger): their codes move with Transpose_int32
                label = printable(name)
                refs = [t.value.data, self.b.int_const(list(q), f"{label}/perm")]
                node = self.b.graph.append("Transpose_int32", refs, [OutputDef(shape, "int32")],
                                         name=f"{label}/transpose")
                v = Value(Ref(node.node_id, 0), shape, "int32")  # type: ignore[arg-type]
            self.relayouts[key] = v
        return v

    def const_value(self, name: str, perm: Perm = IDENTITY, rng: Range | None = None) -> Value:
        """A constant as a quint8 Const laid out as ``perm``.

        int8/uint8 codes keep their codes (XOR 0x80 for int8) on ``rng`` (or
        the QParam declared for them); a DequantizeLinear'd per-tensor
        constant keeps its codes and exact range; float data is quantized on
        its own min/max (zero exact), as TFLite's importer does.
        """
        key = (name, tuple(perm), rng)
        v = self._const_values.get(key)
        if v is not None:
            return v
        data = self.const(name)
        qc = self.qconst(name)
        if data.dtype in (np.int8, np.uint8):
            qp = self.qparams.get(name)
            if rng is None and qp is None:
                raise ModelFormatError(f"{self.m.label}: constant {printable(name)} of type {data.dtype} has no scale")
            rng = rng or qp.range  # type: ignore[union-attr]
            codes = to_quint8(data, str(data.dtype))
        elif qc is not None and qc.axis is None and qc.codes.dtype in (np.int8, np.uint8):
            rng = QParam(float(qc.scale[0]), int(qc.zero_point[0]), qc.dtype).range
            codes = to_quint8(qc.codes, qc.dtype)
        else:
            v = self.array_value(data, perm, name)
            self._const_values[key] = v
            return v
        codes4 = np.ascontiguousarray(codes.reshape(onnx4(data.shape)).transpose(perm))
        ref = self.b.graph.const_ref(codes4, f"{printable(name)}/quantized")
        v = Value(ref, codes4.shape, "quint8", *self.b.range_consts(rng, name), rng)
        self._const_values[key] = v
        return v

    def array_value(self, data: np.ndarray, perm: Perm, name: str) -> Value:
        """Real values (rank <= 4, ONNX order) as a quint8 Const on their own min/max (0 exact), in ``perm``."""
        real = np.asarray(data, dtype=np.float64)
        if not np.all(np.isfinite(real)):
            raise ModelFormatError(f"{self.m.label}: constant {printable(name)} holds NaN or Inf")
        rng = calibrated_range(float(real.min()) if real.size else 0.0, float(real.max()) if real.size else 0.0)
        codes4 = np.ascontiguousarray(quantize_u8(real, *rng).reshape(onnx4(real.shape)).transpose(perm))
        ref = self.b.graph.const_ref(codes4, f"{printable(name)}/quantized")
        return Value(ref, codes4.shape, "quint8", *self.b.range_consts(rng, name), rng)

    def bind(self, name: str, value: Value, perm: Perm) -> None:
        """Record ``name``'s graph value and layout (and the per-layer compare mapping)."""
        self.by_name[name] = Tensor(value, tuple(perm))  # type: ignore[arg-type]
        self.b.map_tensor(name, value)
        layouts = self.b.graph.meta["layouts"]
        if tuple(perm) != IDENTITY:
            layouts[name] = list(perm)
        else:
            layouts.pop(name, None)

    def finish(self, name: str, value: Value, perm: Perm) -> None:
        """Bring ``value`` onto ``name``'s range where it must be, then bind it.

        Quantized (int8/uint8) tensors always end on their declared range; a
        float tensor keeps a fixed range its op produced (as TFLite's
        importer does) and only a run-time range is pinned to the hinted or
        calibrated one.
        """
        if value.quantized and (self.dtype(name) in QUANT_DTYPES or value.range is None):
            value = requantize_to(self.b, value, self.act_range(name), name)
        self.bind(name, value, perm)

    def out_graph_shape(self, name: str, perm: Perm) -> tuple[int, int, int, int]:
        return graph_shape(self.shape(name), perm)

    # ---- graph inputs / outputs ---------------------------------------------------------
    def used_inputs(self) -> set[str]:
        """Tensors some live node reads, plus the graph outputs (computed once)."""
        if self._used is None:
            self._used = {i for n in self.live for i in n.inputs if i} | set(self.m.outputs)
        return self._used

    def input_problems(self) -> list[tuple[str, str]]:
        """(reason, input name) for each used graph input the importer cannot take."""
        out = []
        used = self.used_inputs()
        for name in self.m.inputs:
            if name not in used:
                continue
            dt = self.dtype(name)
            shape = self.m.shape(name)
            if shape is None:
                out.append(("graph input without a static shape", name))
            elif size_problem("graph input", shape):
                out.append((size_problem("graph input", shape), name))  # type: ignore[arg-type]
            elif dt in QUANT_DTYPES and name not in self.qparams:
                out.append((f"graph input of type {dt} with no scale / zero point declared by any node", name))
            elif dt not in QUANT_DTYPES and dt != "float32":
                out.append((f"graph input of type {dt or 'unknown'}", name))
        return out

    def emit_inputs(self) -> None:
        """The INPUT node (one output per graph input, ONNX order and shape) and the inputs' values."""
        defs, ios = [], []
        for k, name in enumerate(self.m.inputs):
            shape = self.m.shape(name) or ()
            dt = self.dtype(name) or "float32"
            qp = self.qparams.get(name)
            if dt == "float32":
                defs.append(OutputDef(onnx4(shape), "float"))
                ios.append(GraphIO(name, shape, dt, None, None, index=k))
            elif dt in QUANT_DTYPES and qp is not None:
                defs.append(OutputDef(onnx4(shape), "quint8"))
                ios.append(GraphIO(name, shape, dt, qp.scale, qp.zero_point, index=k))
            else:
                etype = {"int32": "int32", "int64": "int64", "uint8": "uint8", "int8": "int8"}.get(dt, "float")
                defs.append(OutputDef(onnx4(shape) if len(shape) <= 4 else (1, 1, 1, int(np.prod(shape))), etype))
                ios.append(GraphIO(name, shape, dt, None, None, index=k))
        node = self.b.graph.append("INPUT", [], defs, name="INPUT")
        self.b.graph.inputs = ios
        used = self.used_inputs()
        for k, name in enumerate(self.m.inputs):
            if name not in used:
                continue
            shape4 = defs[k].shape
            if defs[k].dtype == "float":
                v = quantize_float(self.b, Ref(node.node_id, k), shape4, self.act_range(name), name)
            elif defs[k].dtype == "quint8":
                rng = self.qparams[name].range
                v = Value(Ref(node.node_id, k), shape4, "quint8", *self.b.range_consts(rng, name), rng)
            else:
                continue
            self.bind(name, v, IDENTITY)

    def emit_outputs(self) -> None:
        """The OUTPUT node: each graph output in the ONNX order, float dequantized, quantized as a triple."""
        refs: list[Ref] = []
        ios = []
        for name in self.m.outputs:
            start = len(refs)
            dt = self.dtype(name) or "float32"
            scale = zp = None
            if self.is_const(name):
                data = self.const(name)
                refs.append(self.b.graph.const_ref(np.ascontiguousarray(data.reshape(onnx4(data.shape))), name))
            else:
                v = self.value(name, IDENTITY)
                if dt == "int32" or not v.quantized:  # integer sums (qint32 codes of step 1) or int data
                    refs.append(v.data)
                elif dt in QUANT_DTYPES:
                    qp = self.qparams.get(name)
                    if qp is None:
                        raise ModelFormatError(f"{self.m.label}: output {printable(name)} of type {dt} has no scale")
                    v = requantize_to(self.b, v, qp.range, f"{printable(name)}/output")
                    refs.extend(v.triple())
                    scale, zp = qp.scale, qp.zero_point
                else:
                    refs.append(dequantize(self.b, v, name))
            ios.append(GraphIO(name, self.shape(name), dt, scale, zp, refs=tuple(range(start, len(refs)))))
        self.b.graph.append("OUTPUT", refs, [], name="OUTPUT")
        self.b.graph.outputs = ios
