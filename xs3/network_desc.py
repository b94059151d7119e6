"""The lowered network as the device sees it, in Python: XS3 layers, their tensors, the arena plan.

:mod:`.c_network` writes this description as xs3-export's network header.

:func:`network_desc` reads the XS3 nodes of a lowered graph (their kernel
calls, :func:`~.graph_pass.kernel_calls`) in graph order. Each node's data
output is a network tensor; an input produced outside the XS3 layers (a graph
input, a layer left on Hexagon) is a network input, and a tensor read outside
them (a graph output, a Hexagon layer) a network output. Lifetimes run from
the layer that writes a tensor to the last XS3 layer that reads it (inputs
from the start, outputs to the end); :func:`~.arena.plan_arena` places them
(TFLM's greedy planner). Tensors keep their source shapes; a kernel whose weight
layout pads channels (or a fully-connected vector) says so in its parameters:
``k_in`` is the layout's input width (channels, or vector length) and ``k_out``
its output count, so a runner pads the input and cuts the output back
(``xs3_runner.c``, :mod:`.c_runner`). A network input a Hexagon node writes and
a network output a Hexagon node reads are listed in ``NetworkDesc.hexagon_inputs``
/ ``hexagon_outputs``: the network header then holds only the XS3 part of the
model.
"""
from __future__ import annotations

import math

import numpy as np

from hexnn_import.graph import Graph, Ref
from hexnn_import.xs3.arena import ArenaBuffer, ArenaPlan, plan_arena
from hexnn_import.xs3.c_network import NetLayer, NetTensor, NetworkDesc
from hexnn_import.xs3.gc_pause import fewer_collections
from hexnn_import.xs3.graph_pass import kernel_calls
from hexnn_import.xs3.kernel_table import KernelCall


def _call_params(call: KernelCall) -> dict[str, int | list[int]]:
    """A call's parameters for the layer table: the kernel's fields, the window, the zero point, shapes."""
    p: dict[str, int | list[int]] = {}
    if call.params:
        p.update(dict(zip(call.desc.fields, call.params)))
    if call.window is not None:
        w = call.window
        p["window"] = [w.k_h, w.k_w, w.start_row, w.start_col, w.stride_v, w.stride_h]
    if call.bso is not None:
        p["zero_point"] = call.zero_point
    if call.kernel.startswith("fully_connected"):  # fully_connected_16 too (no fast form: desc.form is "")
        p["rows"] = call.rows
    if call.weights is not None:  # the weight layout's input width and output count (channels padded)
        shape = np.shape(call.weights)
        p["k_in"] = int(shape[-1])
        p["k_out"] = int(shape[-1] if call.kernel == "conv2d_depthwise" else shape[0])
    return p


def network_desc(graph: Graph, name: str) -> tuple[NetworkDesc, ArenaPlan]:
    """The XS3 layers of ``graph`` as a :class:`NetworkDesc` with its arena plan (fewer garbage collections
    meanwhile: :mod:`.gc_pause`)."""
    with fewer_collections():
        net, plan, _ = describe_network(graph, name)
    return net, plan


def describe_network(graph: Graph, name: str) -> tuple[NetworkDesc, ArenaPlan, dict[str, Ref]]:
    """:func:`network_desc` and the graph value of every network tensor (name -> ref)."""
    calls = kernel_calls(graph)
    xs3_ids = {node.node_id for node, _ in calls}
    tensor_of: dict[Ref, str] = {}
    shapes: dict[str, tuple[int, ...]] = {}
    names: dict[Ref, str] = {}
    for n, ref in graph.tensor_map.items():  # a value with several names (a no-op reshape's): the first
        names.setdefault(ref, n)

    def tensor(ref: Ref, shape: tuple[int, ...]) -> str:
        if ref not in tensor_of:
            t = names.get(ref) or f"t{ref.src_id}_{ref.output_idx}"
            tensor_of[ref] = t
            shapes[t] = tuple(int(v) for v in shape)
        return tensor_of[ref]

    layers, first, last = [], {}, {}
    n = len(calls)
    for pos, (node, call) in enumerate(calls):
        ins = []
        for k in range(call.desc.n_inputs):
            ref = node.inputs[3 * k]
            t = tensor(ref, call.x_shape)  # every input of a kernel has the call's input shape
            if ref.src_id not in xs3_ids:
                first.setdefault(t, -1)
            last[t] = pos
            ins.append(t)
        out = tensor(Ref(node.node_id, 0), call.y_shape)
        first[out] = pos
        last.setdefault(out, pos)
        arrays: dict[str, np.ndarray] = {}
        if call.weights is not None:
            arrays["weights"] = np.asarray(call.weights, np.int8)
        if call.bso is not None:
            arrays["bso"] = np.asarray(call.bso, np.int16)
        if call.table is not None:
            arrays["lut"] = np.asarray(call.table, np.int8)
        layers.append(NetLayer(node.label, call.kernel, ins, [out], _call_params(call), arrays))
    outputs, hexagon_outputs = [], []
    for node in graph.nodes:  # read outside the XS3 layers: live to the end
        if node.node_id in xs3_ids:
            continue
        for r in node.inputs:
            if r.src_id in xs3_ids and r.output_idx == 0 and r in tensor_of:
                last[tensor_of[r]] = n
                if tensor_of[r] not in outputs:
                    outputs.append(tensor_of[r])
                if node.op != "OUTPUT" and tensor_of[r] not in hexagon_outputs:
                    hexagon_outputs.append(tensor_of[r])
    inputs = [t for t in tensor_of.values() if first[t] == -1]
    hexagon_inputs = [tensor_of[r] for r in tensor_of if first[tensor_of[r]] == -1
                      and graph.node(r.src_id).op != "INPUT"]
    buffers = [ArenaBuffer(t, math.prod(shapes[t]), first[t], last[t]) for t in tensor_of.values()]
    plan = plan_arena(buffers)
    weight_bytes = sum(int(a.nbytes) for layer in layers for a in layer.arrays.values())
    tensors = [NetTensor(t, shapes[t], "int8", plan.offsets[t]) for t in tensor_of.values()]
    desc = NetworkDesc(name, tensors, layers, inputs, outputs, plan.size, plan.largest_live, weight_bytes,
                       hexagon_inputs, hexagon_outputs)
    return desc, plan, {t: r for r, t in tensor_of.items()}
