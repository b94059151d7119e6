"""Per-layer agreement with LiteRT, each layer fed LiteRT's own input ("teacher forcing"; tests only).

End to end, a deep network amplifies every 1-LSB rounding difference of its
early layers; what an op-by-op implementation answers for is each layer's
result on the *same* input. :func:`forced_layers` runs the imported graph
node by node, and after every node that produces a source tensor of the
model it compares that tensor with LiteRT's (all tensors preserved) and
then replaces it with LiteRT's value, so the next layer starts from LiteRT's
input.
"""
from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hexnn_import.graph import Graph, Node, Ref
from hexnn_import.testing.litert import make_interpreter


@dataclass
class LayerAgreement:
    """One source tensor: the graph op that made it, exact and within-1 fractions, worst code difference."""

    name: str
    op: str
    exact: float
    within1: float
    worst: int


def step(graph: Graph, node: Node, values: dict[Ref, np.ndarray], feed: Mapping[str, np.ndarray]
         ) -> tuple[np.ndarray, ...] | None:
    """Run one node of ``graph`` on ``values`` (every earlier output by ref) and store its outputs there: a
    Const's data, the graph inputs from ``feed``, or the node's kernel alone (fresh state); returns the kernel's
    outputs, None for a Const, INPUT or OUTPUT. What the teacher-forcing tools (this module's and
    :mod:`.layerwise_onnx`) replace before the next node reads them."""
    from hexnn_import.ops.registry import KernelContext, get_kernel
    from hexnn_import.runner import to_graph_input

    if node.is_const:
        values[Ref(node.node_id, 0)] = node.data
        return None
    if node.op == "INPUT":
        for io in graph.inputs:
            values[Ref(node.node_id, io.index)] = to_graph_input(io, np.asarray(feed[io.name])).reshape(
                node.output_defs[io.index].shape)
        return None
    if node.op == "OUTPUT":
        return None
    ctx = KernelContext(node=node.label, op=node.op, padding=int(node.padding), state={},
                        n_outputs=len(node.output_defs), out_shapes=tuple(tuple(o.shape) for o in node.output_defs))
    results = tuple(get_kernel(node.op, node.label)(ctx, [values[r] for r in node.inputs]))
    for i, arr in enumerate(results):
        values[Ref(node.node_id, i)] = arr
    return results


def forced_layers(model: bytes, feed: dict[str, np.ndarray]) -> list[LayerAgreement]:
    """Teacher-forced per-layer agreement of an int8/uint8 TFLite model with LiteRT on ``feed``."""
    import hexnn_import as hx

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "model.tflite"
        path.write_bytes(model)
        graph = hx.import_model(path)
    interp = make_interpreter(model, preserve_all_tensors=True)
    for det in interp.get_input_details():
        interp.set_tensor(det["index"], feed[det["name"]])
    interp.invoke()
    details = {d["name"]: d for d in interp.get_tensor_details()}
    by_ref = {ref: name for name, ref in graph.tensor_map.items()}
    values: dict[Ref, np.ndarray] = {}
    out: list[LayerAgreement] = []
    for node in graph.nodes:
        results = step(graph, node, values, feed)
        if results is None:
            continue
        name = by_ref.get(Ref(node.node_id, 0))
        det = details.get(name) if name else None
        if det is None or det["dtype"] not in (np.int8, np.uint8):
            continue
        ref = np.asarray(interp.get_tensor(det["index"]))
        codes = ref.view(np.uint8) ^ np.uint8(0x80) if ref.dtype == np.int8 else ref
        diff = np.abs(results[0].reshape(-1).astype(np.int32) - codes.reshape(-1).astype(np.int32))
        out.append(LayerAgreement(name, node.op, float(np.mean(diff == 0)), float(np.mean(diff <= 1)),
                                  int(diff.max())))
        values[Ref(node.node_id, 0)] = codes.reshape(results[0].shape)
    return out
