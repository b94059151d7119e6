"""The channel-scaled DepthwiseSupernode that make_supernodes makes (prepare.c ReplaceConv_DwiseSuperNode,
allow_channelscale) on a converter-made per-channel model, layer by layer against LiteRT and the unfused chain.

keras MobileNet v1 int8 (TFLiteConverter, per-channel weights): every depthwise layer imports as
QuantizedDepthwiseConv2d_8x8to32 -> QuantizedChannelScale_32xf -> QuantizedBiasAdd_32p32to32 ->
Requantize_32to8 (-> ReluX) and prepare fuses it into one DepthwiseSupernode_8x8p32to8_d32 with the scales
as input 12. Each fused node is fed LiteRT's own input tensor (teacher forcing) and compared with

- LiteRT's output of that layer: both round the exact product sum once (LiteRT with its fixed-point
  per-channel multiplier, hexagon_nn with ``recip[c] = round(2**31 * k[c] * prod / out_step)``,
  supernode_utils.h), so they agree within 1 code;
- the unfused chain on the same input: it rounds ``sum * k`` to the ChannelScale's qint32 grid before the
  bias and requantize, the fused node rounds once (ops/kernels/dwise_scaled.py), so they agree within 1
  code and exactly almost everywhere.
"""
from __future__ import annotations

import numpy as np
import pytest

import hexnn_import as hx
from hexnn_import.engine import Engine
from hexnn_import.graph import Graph, Node, Ref
from hexnn_import.ops.d32 import D32Tensor
from hexnn_import.ops.d32_io import d32_output
from hexnn_import.ops.registry import KernelContext, get_kernel
from hexnn_import.testing.litert import make_interpreter
from hexnn_import.testing.real_models import REAL, float_inputs, load_manifest, to_model_dtype

MODEL = REAL / "keras_mobilenet_int8.tflite"
FUSED = "DepthwiseSupernode_8x8p32to8_d32"


def run_node(node: Node, inputs: list) -> tuple:
    """One node's kernel on the given input values."""
    ctx = KernelContext(node=node.label, op=node.op, padding=int(node.padding), state={},
                        n_outputs=len(node.output_defs), out_shapes=tuple(tuple(o.shape) for o in node.output_defs))
    return get_kernel(node.op, node.label)(ctx, inputs)


def flat(arr) -> np.ndarray:
    return arr.logical_view() if isinstance(arr, D32Tensor) else np.asarray(arr)


def value(graph: Graph, every: dict, ref: Ref):
    """A ref's value in an engine run with ``mark_all`` (Const data from the graph)."""
    src = graph.node(ref.src_id)
    return src.data if src.is_const else every[ref]


def chain_of(graph: Graph, last_id: int) -> list[Node]:
    """The unfused nodes from the depthwise product to ``last_id`` (following input 0), in order."""
    nodes = [graph.node(last_id)]
    while nodes[-1].op != "QuantizedDepthwiseConv2d_8x8to32":
        nodes.append(graph.node(nodes[-1].inputs[0].src_id))
    return nodes[::-1]


@pytest.fixture(scope="module")
def layers() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Per fused layer: name, LiteRT codes, fused-node codes, unfused-chain codes (all quint8)."""
    assert MODEL.is_file(), f"{MODEL} is committed in models/real/"
    entry = next(e for e in load_manifest() if e["file"] == MODEL.name)
    interp = make_interpreter(MODEL.read_bytes(), preserve_all_tensors=True)
    det_in = interp.get_input_details()[0]
    scale, zp = det_in["quantization"]
    x = to_model_dtype(float_inputs(entry, 1), str(np.dtype(det_in["dtype"])), scale, zp)
    interp.set_tensor(det_in["index"], x)
    interp.invoke()
    details = {d["name"]: d for d in interp.get_tensor_details()}

    def litert_codes(name: str) -> np.ndarray:
        ref = np.asarray(interp.get_tensor(details[name]["index"]))
        return ref.view(np.uint8) ^ np.uint8(0x80) if ref.dtype == np.int8 else ref

    prepared, unprepared = hx.prepare(hx.import_model(MODEL)), hx.import_model(MODEL)
    x_graph = x.view(np.uint8) ^ np.uint8(0x80)
    _, every_p = Engine(prepared).run([x_graph], mark_all=True)
    _, every_u = Engine(unprepared).run([x_graph], mark_all=True)
    names_p = {r: n for n, r in prepared.tensor_map.items()}
    names_u = {r: n for n, r in unprepared.tensor_map.items()}
    out = []
    for node in prepared.nodes:
        if node.op != FUSED or len(node.inputs) != 13:
            continue
        name_in, name_out = names_p[node.inputs[0]], names_p[Ref(node.node_id, 0)]
        x_in = litert_codes(name_in)
        inputs = [d32_output(x_in), *(value(prepared, every_p, r) for r in node.inputs[1:])]
        fused = flat(run_node(node, inputs)[0])
        values: dict[Ref, object] = {}
        for n in chain_of(unprepared, node.node_id):
            ins = [values[r] if r in values else value(unprepared, every_u, r) for r in n.inputs]
            if n.op == "QuantizedDepthwiseConv2d_8x8to32":
                assert names_u[n.inputs[0]] == name_in
                ins[0] = x_in
            for i, v in enumerate(run_node(n, ins)):
                values[Ref(n.node_id, i)] = v
        out.append((name_out, litert_codes(name_out), fused, flat(values[Ref(node.node_id, 0)])))
    return out


def test_every_depthwise_layer_is_fused_with_its_scales(layers) -> None:
    assert len(layers) == 13  # MobileNet v1: 13 depthwise layers, all per-channel


def test_fused_node_within_one_code_of_litert(layers) -> None:
    for name, ref, fused, _ in layers:
        diff = np.abs(fused.astype(np.int32) - ref.reshape(fused.shape).astype(np.int32))
        assert diff.max() <= 1, (name, int(diff.max()))
        assert np.mean(diff == 0) >= 0.99, (name, float(np.mean(diff == 0)))


def test_fused_node_matches_the_unfused_chain(layers) -> None:
    for name, _, fused, chain in layers:
        diff = np.abs(fused.astype(np.int32) - chain.astype(np.int32))
        assert diff.max() <= 1, (name, int(diff.max()))
        assert np.mean(diff == 0) >= 0.99, (name, float(np.mean(diff == 0)))
