"""Build, quantize and compare ONNX models against onnxruntime (tests only).

* :func:`build_model` makes a float model from onnx.helper nodes and numpy
  initializers;
* :func:`quantize_ort` quantizes it with ``onnxruntime.quantization.quantize_static``
  (QDQ or QOperator, per-channel or not, int8 / uint8) from sample feeds;
* :func:`compare_onnx` imports a model, runs it and onnxruntime on the same
  feeds and returns per-output :class:`~hexnn_import.testing.tflite_compare.Agreement`:
  for quantized outputs, and for float outputs written by a final
  DequantizeLinear (QDQ), the differences in output codes (``within1``,
  ``worst``); for other float outputs the SQNR in dB.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hexnn_import.testing.tflite_compare import Agreement

Feed = dict[str, np.ndarray]


def build_model(nodes: Sequence[onnx.NodeProto], inputs: Mapping[str, tuple[int, ...]],
                outputs: Mapping[str, tuple[int, ...] | None], inits: Mapping[str, np.ndarray] | None = None,
                opset: int = 13, in_type: int = TensorProto.FLOAT, out_type: int = TensorProto.FLOAT,
                extra_opsets: Mapping[str, int] | None = None) -> bytes:
    """A checked float model (serialized): ``inputs``/``outputs`` name -> shape (None: let inference tell)."""
    g = helper.make_graph(
        list(nodes), "model",
        [helper.make_tensor_value_info(k, in_type, list(s)) for k, s in inputs.items()],
        [helper.make_tensor_value_info(k, out_type, None if s is None else list(s)) for k, s in outputs.items()],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8 if opset < 21 else 10
    if any(s is None for s in outputs.values()):  # let shape inference declare the missing output shapes
        inferred = onnx.shape_inference.infer_shapes(m)
        for out, got in zip(m.graph.output, inferred.graph.output):
            out.CopyFrom(got)
    onnx.checker.check_model(m)
    return m.SerializeToString()


def run_ort(model: bytes, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """onnxruntime (CPU) outputs by name, from a reference session
    (:func:`~hexnn_import.compare.onnx_reference.ort_reference_session`: onnxruntime's exact U8U8 kernels on
    x86-64 machines without VNNI, where its U8S8 ones saturate)."""
    import onnxruntime as ort

    from hexnn_import.compare.onnx_reference import ort_reference_session

    sess = ort_reference_session(ort, model)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, dict(feed))))


def quantize_ort(model: bytes, samples: Sequence[Feed], fmt: str = "QDQ", per_channel: bool = False,
                 activation: str = "int8", weight: str = "int8", **extra) -> bytes:  # type: ignore[no-untyped-def]
    """The model quantized by onnxruntime's ``quantize_static`` calibrated on ``samples``."""
    import logging

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(samples)

        def get_next(self) -> Feed | None:
            return next(self.it, None)

    types = {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}
    logging.getLogger().setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "f.onnx", Path(d) / "q.onnx"
        src.write_bytes(model)
        quantize_static(str(src), str(dst), Reader(), quant_format=getattr(QuantFormat, fmt), per_channel=per_channel,
                        activation_type=types[activation], weight_type=types[weight], **extra)
        return dst.read_bytes()


def output_lsb(model: bytes, name: str) -> float | None:
    """The scale of the DequantizeLinear that writes float output ``name`` (None when none does)."""
    m = onnx.load_from_string(model)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if name in n.output and n.op_type == "DequantizeLinear" and n.input[1] in inits:
            s = np.asarray(inits[n.input[1]]).reshape(-1)
            return float(s[0]) if s.size == 1 else None
    return None


def random_feeds(model: bytes, n: int, rng: np.random.Generator, scale: float = 1.0) -> list[Feed]:
    """``n`` feeds of N(0, scale) floats / full-range codes for every graph input."""
    m = onnx.load_from_string(model)
    inits = {t.name for t in m.graph.initializer}
    feeds = []
    for _ in range(n):
        feed = {}
        for vi in m.graph.input:
            if vi.name in inits:
                continue
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            dt = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
            if np.issubdtype(dt, np.integer):
                info = np.iinfo(dt)
                feed[vi.name] = rng.integers(info.min, info.max + 1, size=shape).astype(dt)
            else:
                feed[vi.name] = (rng.standard_normal(shape) * scale).astype(dt)
        feeds.append(feed)
    return feeds


def compare_onnx(model: bytes, feeds: Sequence[Feed], calibration: Mapping[str, np.ndarray] | None = None,
                 input_shapes: Mapping[str, tuple[int, ...]] | None = None,
                 check_graph: Callable | None = None) -> dict[str, Agreement]:  # type: ignore[type-arg]
    """Import ``model``, run it and onnxruntime on ``feeds``; agreement per output (module doc)."""
    import hexnn_import as hx

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "model.onnx"
        path.write_bytes(model)
        g = hx.import_model(path, calibration=calibration, input_shapes=input_shapes)
    if check_graph is not None:
        check_graph(g)
    runner = hx.Runner(hx.prepare(g))
    got: dict[str, list[np.ndarray]] = {io.name: [] for io in g.outputs}
    ref: dict[str, list[np.ndarray]] = {io.name: [] for io in g.outputs}
    for feed in feeds:
        ours, theirs = runner.run(feed), run_ort(model, feed)
        for io in g.outputs:
            a, r = np.asarray(ours[io.name]), np.asarray(theirs[io.name])
            if a.shape != r.shape or a.dtype != r.dtype:
                raise AssertionError(f"output {io.name}: ours {a.dtype}{list(a.shape)}, ORT {r.dtype}{list(r.shape)}")
            got[io.name].append(a.astype(np.float64).reshape(-1))
            ref[io.name].append(r.astype(np.float64).reshape(-1))
    result = {}
    for io in g.outputs:
        a, r = np.concatenate(got[io.name]), np.concatenate(ref[io.name])
        res = Agreement(io.name)
        lsb = 1.0 if io.dtype in ("int8", "uint8") else output_lsb(model, io.name)
        noise = float(np.sum((a - r) ** 2))
        res.sqnr = float("inf") if noise == 0 else 10 * np.log10(max(float(np.sum(r ** 2)), 1e-30) / noise)
        if lsb is not None:
            diff = np.round(np.abs(a - r) / lsb)
            res.within1, res.worst = float(np.mean(diff <= 1)), int(diff.max()) if diff.size else 0
            res.diffs = [diff]
        result[io.name] = res
    return result


def graph_tensor(graph, every: Mapping, name: str) -> np.ndarray | None:  # type: ignore[no-untyped-def]
    """An ONNX tensor as the imported graph computed it: real values in the ONNX order and shape.

    Reads ``graph.tensor_map`` / ``tensor_ranges`` (dequantizing quint8) and
    undoes ``graph.meta["layouts"][name]`` (graph axis i is axis perm[i] of
    the ONNX shape left-padded to 4-D). ``every`` is ``Runner.run_all``'s
    second result. None when the tensor is not in the graph.
    """
    from hexnn_import.ops.quant import dequantize_u8

    ref = graph.tensor_map.get(name)
    if ref is None:
        return None

    def value(r):  # type: ignore[no-untyped-def]
        v = every.get(r)
        return np.asarray(v if v is not None else graph.node(r.src_id).data)

    arr = value(ref)
    rr = graph.tensor_ranges.get(name)
    if rr is not None and arr.dtype == np.uint8:
        arr = dequantize_u8(arr, float(value(rr[0]).reshape(-1)[0]), float(value(rr[1]).reshape(-1)[0]))
    perm = graph.meta.get("layouts", {}).get(name)
    if perm is not None:
        arr = arr.reshape(tuple(arr.shape)).transpose(np.argsort(perm))
    return np.asarray(arr, dtype=np.float64)


def compare_layers(model: bytes, feed: Feed, graph=None) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """SQNR (dB) of every float ONNX tensor of ``model`` that the graph maps, against onnxruntime's."""
    import hexnn_import as hx

    m = onnx.load_from_string(model)
    if graph is None:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "model.onnx"
            path.write_bytes(model)
            graph = hx.import_model(path)
    names = [o for n in m.graph.node for o in n.output if o in graph.tensor_map]
    for name in names:
        if name not in {o.name for o in m.graph.output}:
            m.graph.output.append(helper.make_value_info(name, onnx.TypeProto()))
    ref = run_ort(m.SerializeToString(), feed)
    _, every = hx.Runner(graph).run_all(feed)
    out = {}
    for name in names:
        got, want = graph_tensor(graph, every, name), ref.get(name)
        if got is None or want is None or want.dtype != np.float32:
            continue
        want = want.astype(np.float64)
        noise = float(np.sum((got.reshape(want.shape) - want) ** 2))
        out[name] = float("inf") if noise == 0 else 10 * np.log10(max(float(np.sum(want ** 2)), 1e-30) / noise)
    return out
