"""Runners: every backend behind one ``infer(feed) -> {name: array}`` (Polygraphy's runner model).

A runner takes a feed in its own input dtypes (see :attr:`CompareRunner.inputs`)
and returns real-valued float64 arrays keyed by source tensor name: the
model's outputs first, then, with ``per_layer``, every intermediate tensor
it can read ("mark all"). Quantized tensors come back dequantized, so that
runners of different precision compare directly; ``steps`` keeps the size
of one quantization step of each quantized tensor of the last run.

* :class:`HexagonRunner`: the prepared graph on the Hexagon-semantics engine;
  intermediates through the import mapping (:mod:`.matching`);
* :class:`LiteRTRunner`: a .tflite file in LiteRT with the builtin kernels,
  all tensors preserved in per-layer mode;
* :class:`OnnxRuntimeRunner`: a .onnx file in onnxruntime, graph
  optimizations off so that tensor names survive, every node output added
  as a graph output in per-layer mode (:mod:`.onnx_reference`).

Every runner describes its inputs as :class:`hexnn_import.graph.GraphIO` (name, shape, dtype, quantization).
"""
from __future__ import annotations

import abc
import dataclasses
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from hexnn_import.compare.matching import engine_tensors
from hexnn_import.compare.onnx_reference import graph_inputs, mark_all_outputs, ort_reference_session, quant_params
from hexnn_import.errors import InputDataError, ModelFormatError
from hexnn_import.graph import Graph, GraphIO, Ref
from hexnn_import.litert_runtime import RuntimeLoadError, runtime_why
from hexnn_import.optional import require


class CompareRunner(abc.ABC):
    """One backend. ``name`` identifies it in reports, ``backend`` says what runs it, ``model`` which file."""

    name: str
    backend: str
    model: str
    per_layer: bool
    quantized: bool = False
    #: the inputs as the runner takes them: shape (-1 where dynamic), dtype name, per-tensor quantization
    inputs: list[GraphIO]
    outputs: list[str]

    def __init__(self) -> None:
        self.steps: dict[str, float] = {}

    @abc.abstractmethod
    def infer(self, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run once on ``feed`` (runner dtypes); real-valued outputs (and intermediates) by tensor name."""


def dequantize(q: np.ndarray, scales: np.ndarray, zero_points: np.ndarray, axis: int = 0) -> np.ndarray:
    """``(q - zp) * scale`` in float64, per tensor (one scale) or per channel along ``axis``.

    ModelFormatError when per-channel scales or zero points do not match the tensor's ``axis``
    (a damaged file LiteRT still loads).
    """
    s = np.asarray(scales, dtype=np.float64).reshape(-1)
    z = np.asarray(zero_points, dtype=np.float64).reshape(-1)
    a = q.astype(np.float64)
    if s.size > 1 and a.ndim:
        axis = axis + a.ndim if -a.ndim <= axis < 0 else axis  # ONNX counts a negative axis from the end
        if not 0 <= axis < a.ndim or a.shape[axis] != s.size or z.size not in (0, 1, s.size):
            raise ModelFormatError(f"{s.size} scales and {z.size} zero points along axis {axis} do not fit a "
                                   f"tensor of shape {list(a.shape)}")
        if z.size == 0:
            z = np.zeros(1)
        shape = [1] * a.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), (z.reshape(shape) if z.size > 1 else z[:1])
    else:
        s, z = s[:1], (z[:1] if z.size else np.zeros(1))
    return (a - z) * s


class HexagonRunner(CompareRunner):
    """The prepared graph on the Hexagon-semantics engine (:class:`hexnn_import.runner.Runner`)."""

    backend = "hexagon"

    def __init__(self, graph: Graph, per_layer: bool = False, name: str = "hexagon", model: str = "") -> None:
        from hexnn_import.runner import Runner

        super().__init__()
        self.graph, self.name, self.per_layer = graph, name, per_layer
        self.model = model or str(graph.meta.get("source", ""))
        self.runner = Runner(graph)
        self.inputs = [dataclasses.replace(io, shape=tuple(io.shape)) for io in graph.inputs]
        self.outputs = [io.name for io in graph.outputs]
        self._input_node = next((n.node_id for n in graph.nodes if n.op == "INPUT"), None)
        # a float output's step is the one of the quint8 tensor behind its Dequantize
        self._mark_all = per_layer or any(not io.quantized and io.name in graph.tensor_ranges
                                          for io in graph.outputs)

    def infer(self, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        from hexnn_import.runner import to_graph_input

        self.steps = {}
        if not self._mark_all:
            outs, every = self.runner.run(feed), {}
        else:
            outs, every = self.runner.run_all(feed)
        values: dict[Ref, np.ndarray] = dict(every)
        if self._input_node is not None:
            for io in self.graph.inputs:
                values[Ref(self._input_node, io.index)] = to_graph_input(io, np.asarray(feed[io.name]))
        mapped = engine_tensors(self.graph, values) if self._mark_all else {}
        outputs: dict[str, np.ndarray] = {}
        for io in self.graph.outputs:
            arr = np.asarray(outs[io.name])
            if io.quantized:
                assert io.scale is not None and io.zero_point is not None
                outputs[io.name] = (arr.astype(np.float64) - io.zero_point) * io.scale
                self.steps[io.name] = float(io.scale)
            else:
                outputs[io.name] = arr.astype(np.float64)
                step = mapped[io.name].step if io.name in mapped else None
                if step:
                    self.steps[io.name] = step
        result: dict[str, np.ndarray] = {}
        if self.per_layer:  # graph order; an output keeps the value the Runner hands out
            for name, t in mapped.items():
                result[name] = outputs.get(name, t.value)
                if t.step and name not in outputs:
                    self.steps[name] = t.step
        for name, value in outputs.items():
            result.setdefault(name, value)
        return result


def _read_model(model: "str | os.PathLike | bytes") -> tuple[bytes, str]:
    if isinstance(model, (bytes, bytearray)):
        return bytes(model), "<bytes>"
    p = Path(model)
    try:
        return p.read_bytes(), str(p)
    except OSError as exc:
        raise ModelFormatError(f"{p}: cannot read ({exc.strerror or exc})") from exc


def _litert_spec(d: Mapping[str, Any]) -> GraphIO:
    q = d["quantization_parameters"]
    dtype = np.dtype(d["dtype"]).name
    quantized = len(q["scales"]) == 1 and dtype in ("int8", "uint8", "int16")
    return GraphIO(d["name"], tuple(int(v) for v in d["shape"]), dtype,
                  float(q["scales"][0]) if quantized else None, int(q["zero_points"][0]) if quantized else None)


class LiteRTRunner(CompareRunner):
    """A TFLite model in LiteRT (builtin kernels, no delegate); all tensors preserved in per-layer mode."""

    backend = "litert"

    def __init__(self, model: "str | os.PathLike | bytes", per_layer: bool = False, name: str = "litert") -> None:
        from hexnn_import.litert_runtime import make_interpreter

        super().__init__()
        data, self.model = _read_model(model)
        self.name, self.per_layer = name, per_layer
        self.interp = make_interpreter(data, preserve_all_tensors=per_layer, model=self.model, probe=True)
        try:  # LiteRT decodes names and quantization lazily: a damaged name fails here (UnicodeDecodeError)
            self._details = {d["index"]: d for d in self.interp.get_tensor_details()}
            self._in = self.interp.get_input_details()
            self._out = [d["index"] for d in self.interp.get_output_details()]
            self._layers: list[int] = []
            if per_layer:  # the inputs, then every operator output in execution order
                self._layers = [int(d["index"]) for d in self._in]
                for op in self.interp._get_ops_details():  # private: the only op list LiteRT exposes
                    self._layers += [int(i) for i in op["outputs"] if int(i) >= 0 and int(i) not in self._out]
            unknown = [i for i in self._out + self._layers if i not in self._details]
            if unknown:
                raise ValueError(f"tensor {unknown[0]} is read but not listed among the tensors")
        except (ValueError, RuntimeError) as exc:
            raise RuntimeLoadError(f"LiteRT cannot read the tensors of {self.model}: {runtime_why(exc)}") from exc
        #: whether the model holds quantized tensors (then it is not a float reference)
        self.quantized = any(len(d["quantization_parameters"]["scales"]) > 0 for d in self._details.values())
        self.inputs = [_litert_spec(d) for d in self._in]
        self.outputs = [self._details[i]["name"] for i in self._out]

    def _real(self, index: int) -> tuple[np.ndarray, float | None]:
        d = self._details[index]
        arr = np.array(self.interp.get_tensor(index))
        q = d["quantization_parameters"]
        if len(q["scales"]) == 0 or arr.dtype.kind == "f":
            return arr.astype(np.float64), None
        try:
            real = dequantize(arr, q["scales"], q["zero_points"], int(q["quantized_dimension"]))
        except ModelFormatError as exc:
            raise ModelFormatError(f"{self.model}: tensor {d['name']}: {exc}") from exc
        return real, (float(q["scales"][0]) if len(q["scales"]) == 1 else None)

    def infer(self, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        missing = [d["name"] for d in self._in if d["name"] not in feed]
        if missing:
            raise InputDataError(f"{self.name}: inputs {missing} missing from the feed")
        for d in self._in:
            arr = np.asarray(feed[d["name"]])
            if tuple(arr.shape) != tuple(d["shape"]) or arr.dtype != d["dtype"]:
                raise InputDataError(f"{self.name}: input {d['name']} takes {list(d['shape'])} "
                                     f"{np.dtype(d['dtype']).name}, got {list(arr.shape)} {arr.dtype}")
        try:
            for d in self._in:
                self.interp.set_tensor(d["index"], np.asarray(feed[d["name"]]))
            self.interp.reset_all_variables()  # a fused LSTM's state tensors start at zero each run, as here
            self.interp.invoke()
            self.steps = {}
            result: dict[str, np.ndarray] = {}
            for index in self._out + self._layers:
                name = self._details[index]["name"]
                result[name], step = self._real(index)
                if step:
                    self.steps[name] = step
        except (ValueError, RuntimeError) as exc:  # a kernel's check, or a tensor LiteRT left without data
            raise RuntimeLoadError(f"{self.name}: LiteRT failed running {self.model}: {runtime_why(exc)}") from exc
        return result


class OnnxRuntimeRunner(CompareRunner):
    """An ONNX model in onnxruntime (CPU, graph optimizations off); node outputs marked in per-layer mode."""

    backend = "onnxruntime"

    def __init__(self, model: "str | os.PathLike | bytes", per_layer: bool = False, name: str = "onnxruntime",
                 threads: int | None = None) -> None:
        import onnx

        ort = require("onnxruntime", f"running {model if isinstance(model, (str, os.PathLike)) else 'the model'} "
                                     "in onnxruntime")

        super().__init__()
        data, self.model = _read_model(model)
        self.name, self.per_layer = name, per_layer
        try:
            proto = onnx.load_from_string(data)
        except Exception as exc:  # onnx raises DecodeError and others, with no common base
            raise ModelFormatError(f"{self.model}: not an ONNX model onnx can read ({runtime_why(exc)})") from exc
        self._quant = quant_params(proto)
        #: whether the model holds quantized tensors (then it is not a float reference)
        self.quantized = bool(self._quant)
        self.outputs = [o.name for o in proto.graph.output]
        self.inputs = graph_inputs(proto, self._quant)
        if per_layer:
            proto = mark_all_outputs(proto)
        try:
            self.session = ort_reference_session(ort, proto.SerializeToString(), threads, optimize=False)
        except Exception as exc:  # onnxruntime's own exception types are not importable by a stable path
            raise RuntimeLoadError(f"onnxruntime cannot load {self.model}: {runtime_why(exc)}") from exc
        self._fetch = [o.name for o in self.session.get_outputs()]

    def infer(self, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        missing = [s.name for s in self.inputs if s.name not in feed]
        if missing:
            raise InputDataError(f"{self.name}: inputs {missing} missing from the feed")
        try:
            arrays = self.session.run(self._fetch, {s.name: np.asarray(feed[s.name]) for s in self.inputs})
        except Exception as exc:  # onnxruntime's exception types are not importable by a stable path
            raise RuntimeLoadError(f"{self.name}: onnxruntime failed running {self.model}: {runtime_why(exc)}") from exc
        self.steps = {}
        got = dict(zip(self._fetch, arrays))
        if self.per_layer:  # the inputs too, as LiteRT's preserved tensors include them
            got = {**{s.name: np.asarray(feed[s.name]) for s in self.inputs}, **got}
        result: dict[str, np.ndarray] = {}
        for name in list(got):
            arr = np.asarray(got[name])
            if arr.dtype.kind not in "fiu" or arr.dtype == np.bool_:
                continue
            q = self._quant.get(name)
            if q is not None and arr.dtype in (np.int8, np.uint8, np.int16, np.uint16):
                scales, zps, axis = q
                try:
                    result[name] = dequantize(arr, scales, zps, axis)
                except ModelFormatError as exc:
                    raise ModelFormatError(f"{self.model}: tensor {name}: {exc}") from exc
                if np.asarray(scales).size == 1:
                    self.steps[name] = float(np.asarray(scales).reshape(-1)[0])
            else:
                result[name] = arr.astype(np.float64)
        return result
