"""A small onnx backend (``onnx.backend.base``) that runs models through hexnn-import (tests only).

``HexnnBackend.prepare(model).run(inputs)`` imports the model into a
hexagon_nn graph and runs it in the engine. A hexagon_nn graph is static,
so inputs that are not *data* - quantization scales and zero points,
weights, shapes, axes, indices, pads given as graph inputs - are bound as
constants at run time (issue [ONNX import]: "quantization scales that
arrive as graph inputs are bound at run time"), and the model is imported
then. Float data inputs are quantized: the model is calibrated on the very
inputs it runs on (hexnn_import.calibrate), int8/uint8 data inputs are fed
as they are.

:func:`check_outputs` is the agreement rule for the node tests: quantized
outputs within 1 code, int32 outputs exact, float outputs within
:data:`FLOAT_LSBS` steps of a 255-step grid over the expected output's
range or the graph's own 8-bit output grid, whichever is coarser (an op
whose result keeps its input's range, such as a pool, cannot be finer than
its input's grid).
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.base import Backend, BackendRep

FLOAT_LSBS = 3.0

#: op -> input positions that carry data (every other graph input is bound as a constant)
DATA_POSITIONS: dict[str, Any] = {
    "Add": "all", "Sub": "all", "Mul": "all", "Div": "all", "Sum": "all", "Max": "all", "Min": "all",
    "Concat": "all", "MatMul": {0, 1}, "QLinearAdd": {0, 3}, "QLinearMul": {0, 3},
}


def data_positions(node: onnx.NodeProto) -> set[int]:
    spec = DATA_POSITIONS.get(node.op_type)
    if spec == "all":
        return set(range(len(node.input)))
    if node.op_type == "QLinearConcat":
        return set(range(2, len(node.input), 3))
    return spec if spec is not None else {0}


def bind_static_inputs(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> tuple[onnx.ModelProto, dict]:
    """A copy of ``model`` with every non-data graph input turned into an initializer; the remaining feed."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    data: set[str] = set()
    for node in m.graph.node:
        for pos in data_positions(node):
            if pos < len(node.input) and node.input[pos]:
                data.add(node.input[pos])
    data |= {o.name for o in m.graph.output}
    keep, rest = [], {}
    for vi in m.graph.input:
        if vi.name in feed and vi.name not in data:
            m.graph.initializer.append(numpy_helper.from_array(np.asarray(feed[vi.name]), vi.name))
        else:
            keep.append(vi)
            if vi.name in feed:
                rest[vi.name] = feed[vi.name]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    return m, rest


class HexnnRep(BackendRep):
    """A prepared model; the graph is imported at :meth:`run`, once the bound inputs are known."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.steps: list[float | None] = []  # per output: the step of the graph's 8-bit result (float outputs)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        import hexnn_import as hx

        inits = {t.name for t in self.model.graph.initializer}
        names = [i.name for i in self.model.graph.input if i.name not in inits]
        feed = dict(inputs) if isinstance(inputs, dict) else dict(zip(names, inputs))
        model, rest = bind_static_inputs(self.model, feed)
        floats = {k: np.asarray(v)[None] for k, v in rest.items() if np.asarray(v).dtype == np.float32}
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "model.onnx"
            onnx.save(model, str(path))
            g = hx.import_model(path, calibration=floats or None)
        outs, every = hx.Runner(hx.prepare(g)).run_all(rest)
        self.steps = [output_step(g, io, every) for io in g.outputs]
        return tuple(outs[o.name] for o in model.graph.output)


def output_step(g: Any, io: Any, every: dict) -> float | None:
    """The quantization step of a float output's 8-bit value in the graph (None if not dequantized)."""
    out_node = next(n for n in g.nodes if n.op == "OUTPUT")
    if len(io.refs) != 1:
        return None
    src = g.node(out_node.inputs[io.refs[0]].src_id)
    if src.op != "Dequantize":
        return None

    def scalar(ref: Any) -> float:
        v = every.get(ref)
        return float(np.asarray(v if v is not None else g.node(ref.src_id).data).reshape(-1)[0])

    return (scalar(src.inputs[2]) - scalar(src.inputs[1])) / 255.0


class HexnnBackend(Backend):
    """onnx backend API over hexnn-import (module doc)."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> HexnnRep:
        return HexnnRep(model)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


def data_lsb(arrays: Sequence[np.ndarray]) -> float:
    """The largest 255-step grid over the float arrays' ranges (0 with none)."""
    lsb = 0.0
    for r in arrays:
        r = np.asarray(r)
        if r.size and np.issubdtype(r.dtype, np.floating):
            lsb = max(lsb, (max(0.0, float(r.max())) - min(0.0, float(r.min()))) / 255.0)
    return lsb


def check_outputs(got: Sequence[np.ndarray], want: Sequence[np.ndarray],
                  steps: Sequence[float | None] = ()) -> str | None:
    """Why the outputs disagree (None when they agree; module doc for the rule)."""
    for k, (a, r) in enumerate(zip(got, want)):
        step = steps[k] if k < len(steps) and steps[k] is not None else 0.0
        a, r = np.asarray(a), np.asarray(r)
        if a.shape != r.shape:
            return f"output {k}: shape {list(a.shape)}, expected {list(r.shape)}"
        if r.dtype in (np.int8, np.uint8):
            d = np.abs(a.astype(np.int64) - r.astype(np.int64))
            if d.size and d.max() > 1:
                return f"output {k}: codes off by up to {int(d.max())}"
        elif np.issubdtype(r.dtype, np.integer):
            if not np.array_equal(a.astype(np.int64), r.astype(np.int64)):
                return f"output {k}: integers differ"
        else:
            lsb = max(data_lsb([r]), step)
            err = float(np.max(np.abs(a.astype(np.float64) - r))) if r.size else 0.0
            if err > FLOAT_LSBS * lsb + 1e-6:
                return f"output {k}: max error {err:.4g} > {FLOAT_LSBS:g} steps of {lsb:.4g}"
    return None
