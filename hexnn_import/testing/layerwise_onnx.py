"""Per-layer agreement with onnxruntime, each layer fed onnxruntime's own input ("teacher forcing"; tests only).

The ONNX counterpart of :mod:`hexnn_import.testing.layerwise` (LiteRT). For a
QDQ or QOperator model, onnxruntime (graph optimizations off, every node
output marked as a graph output: :func:`hexnn_import.compare.onnx_reference.mark_all_outputs`)
gives the value of every tensor. The imported graph then runs node by node;
after each node whose output the importer mapped to an 8-bit ONNX tensor
(``graph.tensor_map``, layout from ``graph.meta["layouts"]``:
:mod:`hexnn_import.compare.matching`), that output is compared with
onnxruntime's codes, in steps of the ONNX tensor's scale, and then replaced
by onnxruntime's value, so the next layer starts from onnxruntime's input.
A "layer" is therefore the engine's nodes between two mapped 8-bit tensors.

8-bit tensors that are not compared are listed with the reason: no engine
tensor of their own (fused into a node, e.g. a QDQ pair's float twin), a
constant in the engine, or an engine tensor that is not quint8.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hexnn_import.compare.matching import to_source_layout
from hexnn_import.graph import Graph, Ref
from hexnn_import.testing.layerwise import LayerAgreement, step

_INT8 = (np.dtype(np.int8), np.dtype(np.uint8))


@dataclass
class OnnxLayerwise:
    """One model on one input: the layers compared and the 8-bit ONNX tensors left out, with reasons."""

    layers: list[LayerAgreement] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    #: layers spanning float ONNX ops (:func:`float_islands`), measured but outside the 1-LSB bar
    float_layers: list[LayerAgreement] = field(default_factory=list)
    int8_tensors: int = 0
    #: the onnxruntime run compared with (:func:`ort_all_tensors`)
    reference: str = "onnxruntime"
    covered: int = 0


def ort_all_tensors(path: Path, feed: Mapping[str, np.ndarray], exact_qlinear: bool = False
                    ) -> tuple[Any, dict[str, np.ndarray], str]:
    """The ONNX model, onnxruntime's value of every node output and which run gave them.

    Default: graph optimizations off, one thread ("onnxruntime"). With ``exact_qlinear`` (QOperator files),
    onnxruntime's exact U8U8 kernels: ``session.x64quantprecision`` with extended optimizations, the level at
    which its rewrite of int8 weights runs ("onnxruntime x64quantprecision"); where onnxruntime refuses that
    rewrite (a weight shared by two nodes), QLinearConv / QLinearMatMul / QGemm as their specification's float form
    (:mod:`hexnn_import.testing.onnx_qlinear_exact`, "QLinear* as specified").
    """
    import onnx
    import onnxruntime as ort

    from hexnn_import.compare.onnx_reference import mark_all_outputs, ort_reference_session

    model = onnx.load(str(path))
    marked = mark_all_outputs(model).SerializeToString()
    if exact_qlinear:
        try:
            so = ort.SessionOptions()
            so.log_severity_level = 4
            so.intra_op_num_threads = 1
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            so.add_session_config_entry("session.x64quantprecision", "1")
            sess = ort.InferenceSession(marked, so, providers=["CPUExecutionProvider"])
            how = "onnxruntime x64quantprecision"
        except Exception:  # noqa: BLE001 - onnxruntime's own error types have no stable import path
            from hexnn_import.testing.onnx_qlinear_exact import qlinear_as_qdq

            sess = ort_reference_session(ort, mark_all_outputs(qlinear_as_qdq(model)).SerializeToString(),
                                         threads=1, optimize=False)
            how = "QLinear* as specified"
    else:
        sess = ort_reference_session(ort, marked, threads=1, optimize=False)
        how = "onnxruntime"
    names = [o.name for o in sess.get_outputs()]
    return model, dict(zip(names, sess.run(names, dict(feed)))), how


def activation_tensors(model: Any) -> set[str]:
    """Node outputs that depend on a graph input (not folded constants such as weights)."""
    inits = {t.name for t in model.graph.initializer}
    live = {i.name for i in model.graph.input if i.name not in inits}
    for node in model.graph.node:  # ONNX nodes are topologically sorted
        if any(i in live for i in node.input):
            live.update(o for o in node.output if o)
    return live


def float_islands(model: Any, values: Mapping[str, np.ndarray], int8: set[str]) -> dict[str, str]:
    """8-bit tensor -> the float ONNX ops its layer computes from float tensors that are not a
    DequantizeLinear's output (a float GRU between the quantized input and a quantized head): such a
    layer is the engine's own quantization of float arithmetic, not one op on onnxruntime's input codes."""
    producer = {o: n for n in model.graph.node for o in n.output if o}
    dq_out = {n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear"}
    def is_float(t: str) -> bool:
        return t in values and np.asarray(values[t]).dtype.kind == "f"
    out: dict[str, str] = {}
    for name in int8:
        stack, seen, ops = [name], set(), []
        while stack:
            node = producer.get(stack.pop())
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if node.op_type not in ("QuantizeLinear", "DequantizeLinear", "Shape", "Size") and any(
                    is_float(i) and i not in dq_out for i in node.input):
                ops.append(node.op_type)
            stack += [i for i in node.input if i and i not in int8 and i not in dq_out]
        if ops:
            out[name] = ", ".join(sorted(set(ops)))
    return out


def _real(codes: np.ndarray, scale: float, zp: int) -> np.ndarray:
    return (codes.astype(np.float64) - zp) * scale


def _engine_range(graph: Graph, name: str, values: Mapping[Ref, np.ndarray]) -> tuple[float, float] | None:
    ranges = graph.tensor_ranges.get(name)
    if ranges is None:
        return None
    out = []
    for r in ranges:
        node = graph.find_node(r.src_id)
        arr = values.get(r) if r in values else (node.data if node is not None and node.is_const else None)
        if arr is None:
            return None
        out.append(float(np.asarray(arr).reshape(-1)[0]))
    return out[0], out[1]


class _Forcer:
    """Compares one engine output with onnxruntime's tensor and returns onnxruntime's value in engine codes."""

    def __init__(self, graph: Graph, quant: Mapping[str, tuple], ort_values: Mapping[str, np.ndarray]):
        self.graph, self.quant, self.ort = graph, quant, ort_values
        self.layouts = graph.meta.get("layouts") or {}

    def compare(self, name: str, op: str, got: np.ndarray, values: Mapping[Ref, np.ndarray]
                ) -> tuple[LayerAgreement, np.ndarray] | str:
        from hexnn_import.ops.quant import step_zero

        scale_a, zp_a, _ = self.quant[name]
        if np.asarray(scale_a).size != 1:
            return "per-channel activation quantization"
        scale, zp = float(np.asarray(scale_a).reshape(-1)[0]), int(np.asarray(zp_a).reshape(-1)[0])
        rng = _engine_range(self.graph, name, values)
        if rng is None:
            return "engine range not readable"
        step_e, zero_e = step_zero(*rng)
        perm = self.layouts.get(name) if isinstance(self.layouts, dict) else None
        want = np.asarray(self.ort[name])
        mine = to_source_layout(got, perm)
        if mine.size != want.size:
            return f"engine shape {got.shape} vs onnxruntime {want.shape}"
        mine = mine.reshape(want.shape)
        diff = np.abs((mine.astype(np.float64) - zero_e) * step_e - _real(want, scale, zp)) / scale
        # both sides are codes of (nearly) the same step: a code apart is 1 +- 1e-4 steps
        row = LayerAgreement(name, op, float(np.mean(diff <= 1e-3)), float(np.mean(diff <= 1 + 1e-3)),
                             int(np.round(diff.max())) if diff.size else 0)
        forced = np.clip(np.round(_real(want, scale, zp) / step_e) + zero_e, 0, 255).astype(np.uint8)
        if perm:
            pad = forced.reshape((1,) * (len(perm) - forced.ndim) + forced.shape)
            forced = np.transpose(pad, tuple(int(p) for p in perm))
        return row, forced.reshape(got.shape)


def _names_by_ref(graph: Graph) -> dict[Ref, list[str]]:
    out: dict[Ref, list[str]] = {}
    for name, ref in graph.tensor_map.items():
        out.setdefault(ref, []).append(name)
    return out


def _visit(res: OnnxLayerwise, forcer: _Forcer, islands: Mapping[str, str], names: list[str], op: str,
           got: np.ndarray, values: Mapping[Ref, np.ndarray]) -> np.ndarray | None:
    """Compare one engine output mapped to the 8-bit ONNX tensors ``names``; onnxruntime's value to force."""
    if got.dtype != np.uint8:
        res.skipped.update({n: f"engine holds it as {got.dtype} ({op})" for n in names})
        return None
    outcome = forcer.compare(names[0], op, got, values)
    if isinstance(outcome, str):
        res.skipped.update({n: outcome for n in names})
        return None
    if names[0] in islands:
        res.float_layers.append(outcome[0])
        why = f"its layer computes float ONNX ops ({islands[names[0]]}) that the engine quantizes itself"
        res.skipped.update({n: why for n in names})
    else:
        res.layers.append(outcome[0])
        res.covered += len(names)
    return outcome[1]


def forced_layers_onnx(path: Path, feed: Mapping[str, np.ndarray],
                       input_shapes: Mapping[str, tuple[int, ...]] | None = None,
                       exact_qlinear: bool = False) -> OnnxLayerwise:
    """Teacher-forced per-layer agreement of a QDQ / QOperator ONNX model with onnxruntime on ``feed``
    (``exact_qlinear``: see :func:`ort_all_tensors`)."""
    import hexnn_import as hx
    from hexnn_import.compare.onnx_reference import quant_params

    graph = hx.import_model(path, input_shapes=input_shapes)
    model, ort_values, how = ort_all_tensors(path, feed, exact_qlinear)
    quant = quant_params(model)
    live = activation_tensors(model)
    int8 = {n for n, v in ort_values.items() if n in live and np.asarray(v).dtype in _INT8 and n in quant}
    islands = float_islands(model, ort_values, int8)
    forcer, by_ref = _Forcer(graph, quant, ort_values), _names_by_ref(graph)
    res = OnnxLayerwise(int8_tensors=len(int8), reference=how)
    values: dict[Ref, np.ndarray] = {}
    done: set[str] = set()
    for node in graph.nodes:
        results = step(graph, node, values, feed)
        if results is None:
            continue
        for i, arr in enumerate(results):
            names = [n for n in by_ref.get(Ref(node.node_id, i), []) if n in int8]
            if names:
                done.update(names)
                forced = _visit(res, forcer, islands, names, node.op, np.asarray(arr), values)
                if forced is not None:
                    values[Ref(node.node_id, i)] = forced
    for n in sorted(int8 - done):
        ref = graph.tensor_map.get(n)
        src = graph.find_node(ref.src_id) if ref is not None else None
        res.skipped[n] = ("no engine tensor of its own (fused into a node)" if ref is None else
                          "a constant in the engine" if src is not None and src.is_const else
                          f"not an output of an engine node ({src.op if src else '?'})")
    return res


__all__ = ["OnnxLayerwise", "activation_tensors", "forced_layers_onnx", "ort_all_tensors"]
