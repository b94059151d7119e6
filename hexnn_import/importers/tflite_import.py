"""TFLite -> hexagon_nn Graph (quantized int8 / uint8 models).

The importer walks the operators in order and asks a handler per builtin
(``tflite_ops.py``) to append hexagon_nn nodes. Before any node is built,
every operator is checked, so an unsupported model fails with one error that
lists every unsupported op with its tensor names.

Quantization (SEMANTICS §1): ``(scale, zero_point)`` becomes ``(min, max)``
with ``min = scale * (qmin - zp)``; int8 data becomes quint8 by XOR 0x80, the
float range unchanged. Graph inputs are fed as quint8 (the API layer does the
XOR); graph outputs leave as (data, min, max) triples.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from hexnn_import.errors import ModelFormatError, UnsupportedOpsError
from hexnn_import.graph import Graph, GraphIO, OutputDef, Ref, shape4
from hexnn_import.importers.tflite_reader import TFModel, TFOperator, TFTensor, read_tflite
from hexnn_import.importers.values import Value
from hexnn_import.ops.quant import scale_zp_to_range

Handler = Callable[["TFLiteImporter", TFOperator], None]
Checker = Callable[["TFLiteImporter", TFOperator], "str | None"]

#: builtin name -> (checker, handler); filled by tflite_ops.py
HANDLERS: dict[str, tuple[Checker, Handler]] = {}
#: hexagon_nn ops this importer can emit (for ``hexnn-import ops``)
EMITS: set[str] = {"INPUT", "OUTPUT", "Const"}


def tflite_op(name: str, emits: tuple[str, ...], check: Checker | None = None) -> Callable[[Handler], Handler]:
    """Register a handler for a TFLite builtin; ``check`` returns why an instance is unsupported."""

    def deco(fn: Handler) -> Handler:
        HANDLERS[name] = (check or (lambda imp, op: None), fn)
        EMITS.update(emits)
        return fn

    return deco


QUANT_TYPES = {"int8": True, "uint8": False}  # dtype -> signed


class TFLiteImporter:
    """Builds a Graph from a parsed TFModel."""

    def __init__(self, model: TFModel, label: str = "model"):
        self.model = model
        self.label = label
        self.graph = Graph()
        self.values: dict[int, Value] = {}
        self.graph.meta = {"source_format": "tflite", "source": label, "notes": []}

    # ---- helpers used by op handlers --------------------------------------------
    def tensor(self, index: int) -> TFTensor:
        return self.model.tensors[index]

    def qrange(self, t: TFTensor) -> tuple[float, float]:
        """Float (min, max) of a per-tensor quantized int8/uint8 tensor (SEMANTICS §1)."""
        assert t.quant is not None
        return scale_zp_to_range(float(t.quant.scale[0]), int(t.quant.zero_point[0]), t.dtype == "int8")

    def value(self, index: int) -> Value:
        """The graph value of a tensor, making a Const for constant tensors on first use."""
        v = self.values.get(index)
        if v is not None:
            return v
        t = self.tensor(index)
        if t.data is None:
            raise ModelFormatError(f"{self.label}: tensor {t.name} is read before any operator writes it")
        if t.dtype in QUANT_TYPES and t.quant is not None and not t.quant.per_channel:
            v = self.quantized_const(t.data, t, t.name)
        else:
            data = t.data.astype(np.float32) if t.dtype == "float32" else t.data
            ref = self.graph.const_ref(np.asarray(data).reshape(shape4(t.shape)), t.name)
            v = Value(ref, shape4(t.shape), "float" if t.dtype == "float32" else t.dtype)
        self.values[index] = v
        return v

    def quantized_const(self, data: np.ndarray, t: TFTensor, name: str) -> Value:
        """A quint8 Const (XOR 0x80 for int8) with its min/max Consts."""
        codes = to_quint8(data, t.dtype).reshape(shape4(data.shape))
        mn, mx = self.qrange(t)
        ref = self.graph.const_ref(codes, name)
        return Value(ref, codes.shape, "quint8", self.float_const(mn, f"{name}/min"),
                     self.float_const(mx, f"{name}/max"), (mn, mx))

    def float_const(self, x: float, name: str = "") -> Ref:
        return self.graph.const_ref(float(x), name)

    def set_output(self, index: int, value: Value) -> None:
        self.values[index] = value
        self.graph.tensor_map[self.tensor(index).name] = value.data

    def note(self, text: str) -> None:
        notes = self.graph.meta.setdefault("notes", [])
        assert isinstance(notes, list)
        notes.append(text)

    # ---- the walk ------------------------------------------------------------------
    def check_supported(self) -> None:
        """Raise one UnsupportedOpsError naming every operator that cannot be imported."""
        bad: dict[str, list[str]] = {}
        notes: dict[str, str] = {}
        for op in self.model.operators:
            entry = HANDLERS.get(op.opname)
            first_out = self.tensor(op.outputs[0]).name if op.outputs else f"op{op.index}"
            if entry is None:
                reason = None
                key = op.opname
            else:
                try:
                    reason = entry[0](self, op)
                except (IndexError, AttributeError, KeyError) as exc:
                    reason = f"malformed operator: {type(exc).__name__}"
                if reason is None:
                    continue
                key = f"{op.opname} ({reason})"
            bad.setdefault(key, []).append(first_out)
            if reason is None and self._is_dynamic_range(op):
                notes[key] = "dynamic range: quantized weights with float activations"
        for i in self.model.inputs:
            t = self.tensor(i)
            if t.dtype not in QUANT_TYPES or t.quant is None or t.quant.per_channel:
                bad.setdefault(f"graph input of type {t.dtype}", []).append(t.name)
        if bad:
            raise UnsupportedOpsError("TFLite", bad, notes)

    def _is_dynamic_range(self, op: TFOperator) -> bool:
        ts = [self.tensor(i) for i in op.inputs if i >= 0]
        return any(t.dtype == "float32" and t.data is None for t in ts) and any(
            t.dtype in QUANT_TYPES and t.data is not None for t in ts)

    def run(self) -> Graph:
        """Import the model; returns the graph (verified)."""
        self.check_supported()
        self._inputs()
        for op in self.model.operators:
            HANDLERS[op.opname][1](self, op)
        self._outputs()
        self.graph.verify()
        return self.graph

    def _inputs(self) -> None:
        defs, ios = [], []
        for k, i in enumerate(self.model.inputs):
            t = self.tensor(i)
            defs.append(OutputDef(shape4(t.shape), "quint8"))
            assert t.quant is not None
            ios.append(GraphIO(t.name, t.shape, t.dtype, float(t.quant.scale[0]), int(t.quant.zero_point[0]), index=k))
        node = self.graph.append("INPUT", [], defs, name="INPUT")
        self.graph.inputs = ios
        for k, i in enumerate(self.model.inputs):
            t = self.tensor(i)
            mn, mx = self.qrange(t)
            self.set_output(i, Value(Ref(node.node_id, k), shape4(t.shape), "quint8",
                                     self.float_const(mn, f"{t.name}/min"), self.float_const(mx, f"{t.name}/max"),
                                     (mn, mx)))

    def _outputs(self) -> None:
        refs: list[Ref] = []
        ios = []
        for i in self.model.outputs:
            t = self.tensor(i)
            v = self.value(i)
            start = len(refs)
            if v.quantized:
                refs.extend(v.triple())
            else:
                refs.append(v.data)
            scale = float(t.quant.scale[0]) if t.quant is not None and t.quant.scale.size else None
            zp = int(t.quant.zero_point[0]) if scale is not None else None
            ios.append(GraphIO(t.name, t.shape, t.dtype, scale, zp, refs=tuple(range(start, len(refs)))))
        self.graph.append("OUTPUT", refs, [], name="OUTPUT")
        self.graph.outputs = ios


def to_quint8(data: np.ndarray, dtype: str) -> np.ndarray:
    """int8 codes to quint8 by XOR 0x80 (SEMANTICS §1); uint8 unchanged."""
    if dtype == "int8":
        return (data.astype(np.int8).view(np.uint8) ^ np.uint8(0x80)).astype(np.uint8)
    return data.astype(np.uint8)


def import_tflite(path: str | Path) -> Graph:
    """Read and import a .tflite file."""
    from hexnn_import.importers import tflite_ops  # noqa: F401  (registers the handlers)

    model = read_tflite(path)
    return TFLiteImporter(model, str(path)).run()
