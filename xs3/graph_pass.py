"""Put a lowering plan's XS3 kernels into the graph: each lowered layer becomes ``XS3_<kernel>`` node(s).

The graph pass after Replace / Legalize (:mod:`.lower`). For each lowered
layer, in model order, the node that computes the layer's output tensor
(``graph.tensor_map``) is replaced, for all its readers, by an XS3 node
(:mod:`.graph_ops`) reading the layer's input tensors; a fused activation the
output range does not imply adds a ``XS3_lookup8`` node with the clamp as its
table. The Hexagon nodes that only fed the replaced outputs then have no
readers and go (``remove_dead_nodes``). Every edit goes through the
optimizer's :class:`~hexnn_import.optimizer.editor.GraphEditor`, and the
graph is verified at the end. A layer the graph does not expose as a
``(data, min, max)`` triple on the ranges its quantization gives stays on the
Hexagon engine, with the reason in its :class:`Placement`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hexnn_import.graph import Graph, Node, OutputDef, Ref, element_type_of
from hexnn_import.ops.quant import scale_zp_to_range
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.edits import change_multi_output_refs_table
from hexnn_import.ops.op_groups import XS3_PREFIX, is_xs3
from hexnn_import.xs3.convert_ranges import convert_time_range, requantize_table, through_relabels
from hexnn_import.source_layers import LayerInfo, TensorQ
from hexnn_import.xs3.graph_ops import encode_call, register_ops
from hexnn_import.xs3.kernel_table import KernelCall
from hexnn_import.xs3.lower import LayerResult, LoweringPlan
from hexnn_import.xs3.vpu import DEFAULT_OPTIONS, VPUOptions


@dataclass
class Placement:
    """Where one source layer runs: "xs3" (with its kernels and graph nodes) or "hexagon" (with the reason)."""

    name: str
    op: str
    target: str
    kernel: str | None = None
    reason: str | None = None
    nodes: tuple[int, ...] = ()


def tensor_range(t: TensorQ) -> tuple[float, float]:
    """The quint8 range of an int8 (or uint8) tensor's quantization (SEMANTICS §1)."""
    return scale_zp_to_range(float(t.scale), t.int8_zero_point, True)  # type: ignore[arg-type]


class _TensorRefs:
    """``graph.tensor_map`` / ``tensor_ranges`` with the tensor names on each ref, so moving a value's readers
    costs the names on it, not a walk of every tensor (issue 38: the walk per layer made export quadratic)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.on_data: dict[Ref, set[str]] = {}
        self.on_range: dict[Ref, set[str]] = {}
        for t, ref in graph.tensor_map.items():
            self.on_data.setdefault(ref, set()).add(t)
        for t, pair in graph.tensor_ranges.items():
            for ref in pair:
                self.on_range.setdefault(ref, set()).add(t)

    def move(self, moved: dict[Ref, Ref]) -> None:
        """Every tensor (value or range end) on a key of ``moved`` now on its value."""
        tmap, tranges = self.graph.tensor_map, self.graph.tensor_ranges
        for old, new in moved.items():
            for t in sorted(self.on_data.pop(old, ())):
                tmap[t] = new
                self.on_data.setdefault(new, set()).add(t)
        names = set().union(*(self.on_range.get(old, ()) for old in moved))
        for t in sorted(names):
            self.set_range(t, tuple(moved.get(r, r) for r in tranges[t]))

    def set(self, name: str, data: Ref, rng: tuple[Ref, Ref]) -> None:
        """``name``'s value and range refs."""
        prev = self.graph.tensor_map.get(name)
        if prev is not None:
            self.on_data.get(prev, set()).discard(name)
        self.graph.tensor_map[name] = data
        self.on_data.setdefault(data, set()).add(name)
        self.set_range(name, rng)

    def set_range(self, name: str, rng: tuple) -> None:
        for ref in self.graph.tensor_ranges.get(name, ()):
            self.on_range.get(ref, set()).discard(name)
        self.graph.tensor_ranges[name] = rng
        for ref in rng:
            self.on_range.setdefault(ref, set()).add(name)


_ELEMENT_TYPES: dict[np.dtype, str] = {}


def _element_type(arr: np.ndarray) -> str:
    """:func:`hexnn_import.graph.element_type_of`, remembered per dtype (30,000 consts on a 10,000-layer chain)."""
    name = _ELEMENT_TYPES.get(arr.dtype)
    if name is None:
        name = _ELEMENT_TYPES[arr.dtype] = element_type_of(arr)
    return name


class _Builder:
    """Const and node construction on one editor."""

    def __init__(self, ed: GraphEditor):
        self.ed = ed
        self.placeholder: Ref | None = None
        self.tensors = _TensorRefs(ed.graph)

    def const(self, data: np.ndarray, name: str) -> Ref:
        arr = np.ascontiguousarray(data)
        arr = arr.reshape((1,) * (4 - arr.ndim) + arr.shape) if arr.ndim <= 4 else arr  # graph.shape4
        nid = self.ed.new_internal_node_id()
        node = Node(nid, "Const", [], [OutputDef(arr.shape, _element_type(arr))], name=name, data=arr)
        self.ed.place([node], None, None, False)
        return Ref(nid, 0)

    def none(self) -> Ref:
        if self.placeholder is None:
            self.placeholder = self.const(np.zeros(1, np.int8), "xs3/none")
        return self.placeholder

    def range_consts(self, rng: tuple[float, float], name: str) -> tuple[Ref, Ref]:
        return (self.const(np.float32(rng[0]).reshape(1), f"{name}/min"),
                self.const(np.float32(rng[1]).reshape(1), f"{name}/max"))


def _input_triple(graph: Graph, t: TensorQ,
                  layer: LayerInfo) -> tuple[list[Ref] | None, str | tuple[float, float] | None]:
    """The graph's (data, min, max) refs of a layer input on its quantization's range, or why not: the
    importer's tensor map, or the refs the importer recorded with the layer (``attrs["refs"]``: a copy of
    the tensor in another layout). A range the graph only knows at run time is returned as it is, with the
    reason :data:`RUNTIME`: :func:`_on_source_range` puts the codes on the file's range; another range fixed
    at convert time (:func:`.convert_ranges.convert_time_range`) is returned as the second item:
    :func:`_lookup_on_source_range` puts the codes on the file's range."""
    own = layer.attrs.get("refs", {}).get(t.name)
    data = own[0] if own else graph.tensor_map.get(t.name)
    rng = (own[1], own[2]) if own else graph.tensor_ranges.get(t.name)
    if data is None or rng is None:
        return None, f"the graph has no quantized value for its input {t.name}"
    data, rng = through_relabels(graph, data, rng)  # a reshape's input: the same codes, read in place
    got = convert_time_range(graph, rng[0], rng[1])
    if got is None:
        return [data, rng[0], rng[1]], RUNTIME
    if not _close(got, tensor_range(t)):
        return [data, rng[0], rng[1]], got
    return [data, rng[0], rng[1]], None


def _close(got: tuple[float, float], want: tuple[float, float], rtol: float = 1e-6, atol: float = 1e-30) -> bool:
    """``np.allclose(got, want, rtol, atol)`` for two pairs of floats, without numpy's per-call cost (issue 38:
    it was a third of the pass on a 10,000-layer chain): ``|g - w| <= atol + rtol |w|`` elementwise, equal
    infinities close, NaN never."""
    return all(float(g) == float(w) or (math.isfinite(float(g)) and math.isfinite(float(w))
                                        and abs(float(g) - float(w)) <= atol + rtol * abs(float(w)))
               for g, w in zip(got, want))


#: :func:`_input_triple`'s reason for an input whose range the graph only knows at run time
RUNTIME = "run-time range"


def _lookup_on_source_range(ed: GraphEditor, b: _Builder, triple: list[Ref], got: tuple[float, float], t: TensorQ,
                            name: str, options: VPUOptions) -> list[Ref]:
    """``triple`` (on the range ``got``, fixed at convert time) moved onto ``t``'s range in the source file by
    an XS3 ``lookup8`` whose table is the Requantize_8to8 of the 256 codes (``convert_ranges.requantize_table``)."""
    src = ed.graph.node(triple[0].src_id)
    shape = tuple(src.output_defs[triple[0].output_idx].shape)
    call = KernelCall("lookup8", None, None, 0, None, shape, shape, table=requantize_table(got, tensor_range(t)))
    lo, hi = b.range_consts(tensor_range(t), f"{name}/xs3_in")
    ins = triple + [b.none(), b.none(), b.const(call.table, f"{name}/xs3_in/table"),
                    b.const(encode_call(call, options), f"{name}/xs3_in/params"), lo, hi]
    node = ed.make_node(call.desc.op, ins, [OutputDef(shape, "quint8"), OutputDef.scalar(), OutputDef.scalar()],
                        name=f"{name}/xs3_in")
    ed.place([node], None, src, True)
    return [Ref(node.node_id, 0), Ref(node.node_id, 1), Ref(node.node_id, 2)]


def _on_source_range(ed: GraphEditor, b: _Builder, triple: list[Ref], t: TensorQ, name: str) -> list[Ref]:
    """``triple`` (a range known only at run time) moved onto the range of ``t``'s quantization in the source
    file by a Requantize_8to8 on the Hexagon side (SEMANTICS §1; an identity when the run-time range is that
    range): the XS3 kernel then reads codes on the range its BSO was computed for."""
    data = triple[0]
    src = ed.graph.node(data.src_id)
    shape = tuple(src.output_defs[data.output_idx].shape)
    lo, hi = b.range_consts(tensor_range(t), f"{name}/xs3_in")
    node = ed.make_node("Requantize_8to8", [data, triple[1], triple[2], lo, hi],
                        [OutputDef(shape, "quint8"), OutputDef.scalar(), OutputDef.scalar()], name=f"{name}/xs3_in")
    ed.place([node], None, src, True)
    return [Ref(node.node_id, 0), Ref(node.node_id, 1), Ref(node.node_id, 2)]


def _output_node(graph: Graph, t: TensorQ) -> tuple[Node | None, int, str | None]:
    ref = graph.tensor_map.get(t.name)
    if ref is None:
        return None, 0, f"the graph has no node for its output {t.name}"
    node = graph.node(ref.src_id)
    if len(node.output_defs) < ref.output_idx + 3 or node.output_defs[ref.output_idx].dtype != "quint8":
        return None, 0, "its graph node is not a (data, min, max) node"
    return node, ref.output_idx, None


def _place_layer(ed: GraphEditor, b: _Builder, r: LayerResult, options: VPUOptions) -> tuple[list[int], str | None]:
    """Insert the XS3 node(s) of one lowered layer; returns their ids, or the reason it stays on Hexagon."""
    graph = ed.graph
    lowered = r.lowered
    assert lowered is not None
    layer = lowered.op.layer
    acts: list[Ref] = []
    for t in layer.inputs[:lowered.n_inputs]:
        triple, why = _input_triple(graph, t, layer)
        if triple is None:
            return [], why  # type: ignore[return-value]
        if isinstance(why, tuple):  # a range fixed at convert time, not the file's: a lookup8 requantize
            triple = _lookup_on_source_range(ed, b, triple, why, t, f"{layer.name}/{t.name}", options)
        acts += _on_source_range(ed, b, triple, t, f"{layer.name}/{t.name}") if why == RUNTIME else triple
    old, idx, why = _output_node(graph, layer.y)
    if old is None:
        return [], why
    name = layer.name
    out_shape = tuple(old.output_defs[idx].shape)
    mn, mx = b.range_consts(tensor_range(layer.y), f"{name}/xs3_out")
    nodes: list[Node] = []
    for call, label in lowered.calls():
        w = b.const(call.weights, f"{name}/{call.kernel}/weights") if call.weights is not None else b.none()
        bso = b.const(call.bso, f"{name}/{call.kernel}/bso") if call.bso is not None else b.none()
        table = b.const(call.table, f"{name}/{call.kernel}/table") if call.table is not None else b.none()
        params = b.const(encode_call(call, options), f"{name}/{call.kernel}/params")
        ins = acts if not nodes else [Ref(nodes[-1].node_id, 0), mn, mx]
        node = ed.make_node(call.desc.op, ins + [w, bso, table, params, mn, mx],
                            [OutputDef(out_shape, "quint8"), OutputDef.scalar(), OutputDef.scalar()],
                            name=f"{name}/{label}")
        ed.place([node], None, nodes[-1] if nodes else old, True)
        nodes.append(node)
    last = nodes[-1].node_id
    change_multi_output_refs_table(ed, None, old.node_id, idx + 3,
                                   [None] * idx + [Ref(last, 0), Ref(last, 1), Ref(last, 2)])
    # every source tensor on the old value (a no-op reshape's too) moves to the new one
    b.tensors.move({Ref(old.node_id, idx + k): Ref(last, k) for k in range(3)})
    b.tensors.set(layer.y.name, Ref(last, 0), (Ref(last, 1), Ref(last, 2)))
    return [n.node_id for n in nodes], None


def apply_lowering(graph: Graph, plan: LoweringPlan, options: VPUOptions = DEFAULT_OPTIONS) -> list[Placement]:
    """Replace the lowered layers' nodes by XS3 nodes, in place; the placement of every source layer."""
    from hexnn_import.optimizer.cleanup import RemoveDeadNodes

    register_ops()
    ed = GraphEditor(graph)
    b = _Builder(ed)
    placements = []
    for r in plan.results:
        layer = r.layer
        if r.lowered is None:
            placements.append(Placement(layer.name, layer.opname, "hexagon", reason=r.reason))
            continue
        ids, why = _place_layer(ed, b, r, options)
        if why:
            placements.append(Placement(layer.name, layer.opname, "hexagon", reason=why))
        else:
            placements.append(Placement(layer.name, layer.opname, "xs3", kernel=r.lowered.kernel, nodes=tuple(ids)))
    RemoveDeadNodes().apply(ed)
    ed.commit()
    graph.verify()
    graph.meta["xs3_layers"] = [p.name for p in placements if p.target == "xs3"]
    return placements


def kernel_calls(graph: Graph) -> list[tuple[Node, KernelCall]]:
    """Every XS3 node of a graph with the kernel call its inputs describe (export, C header)."""
    from hexnn_import.xs3.graph_ops import TRAILING, decode_call
    from hexnn_import.xs3.kernel_table import kernel_desc

    out = []
    for node in graph.nodes:
        if not is_xs3(node.op):
            continue
        desc = kernel_desc(node.op[len(XS3_PREFIX):])
        consts = [graph.node(r.src_id).data for r in node.inputs[3 * desc.n_inputs:]]
        w, bso, table, params = consts[:4]
        call, _ = decode_call(desc.name, params, w if desc.layout else None, bso if desc.layout else None,
                              table.reshape(-1) if table is not None and table.size == 256 else None)
        out.append((node, call))
    assert len(TRAILING) == 6
    return out
