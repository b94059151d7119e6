"""Split per-channel depthwise chains that hexagon_nn's device code requantizes wrong (issue 36), at import.

hexagon_nn's ``dwconv2dbbb_s1_7xN_asm`` / ``dwconv2dbbb_s2_5xN_asm`` (op_dwise_snode_8bit.c; filter width 7 at
stride width 1, or 5 at 2) requantize every 32-channel depth slice after the first with the first slice's
channel scales (:func:`hexnn_import.ops.kernels.dwise_scaled.scales_slice_defect`). prepare.c's make_supernodes
fuses ``QuantizedDepthwiseConv2d_8x8to32 -> QuantizedChannelScale_32xf -> QuantizedBiasAdd_32p32to32 ->
Requantize_32to8 [-> relu]`` into the DepthwiseSupernode that reaches that code. :func:`split_defect_dwise`
rewrites each such chain of the imported graph (before any prepare, so the engine's prepare and the device's
own ``hexagon_nn_prepare``, which reads the emitted graph, both see it) into groups of at most 32 channels:

- the input split on depth: ``QuantizedSplit_8`` (dimension Const 3) when the depth divides into equal groups
  of 8..32 channels (prepare.c's depth32_replacement_op makes it ``QuantizedSplit_8_d32``, so no convert pair
  is added; its output range ``(fminf(0, in_min), in_max)`` is the input's, as an imported quantized tensor's
  range holds 0), else one ``QuantizedSlice_8`` per group (prepare.c keeps those flat);
- per group the same chain with its slice of weights, channel scales and bias, the same weight range, stride,
  padding and fixed output range (so prepare.c fuses each into a DepthwiseSupernode of <= 32 channels, one
  depth slice: the defect cannot arise);
- ``QuantizedConcat_8`` on depth, which takes the chain's last node id (its consumers stay as they are).

Every channel's arithmetic is unchanged: the fused node's per-channel multiplier and bias (op_dwise_snode_8bit.c
``dwise_supernode_check``: ``max_k_factor`` is 1.0 whatever the scales) read only that channel, the weight zero
comes from the shared weight range, and the concat of inputs on the one output range copies the codes
(op_concat.c: offset 0, gain 32767).

A float model's chain ends in ``QuantizeDownAndShrinkRange_32to8`` (the data's own range), which prepare.c fuses
just the same (into a DepthwiseSupernode with a run-time range): on the device every channel past 31 then takes
another channel's scale and the layer's range grows by orders of magnitude (MediaPipe selfie segmentation,
float: 23,170 where the data reach about 8; the next fixed-range add and supernodes then refuse to run, issue
36). Such chains are split too: each group ends in its own QuantizeDownAndShrinkRange_32to8, and the concat
re-codes the groups onto their merged range (one more rounding, at most half a step of that range, where a
group's range is narrower). A Requantize_32to8 with a free end is not split (its range would differ per group
too); those keep the defect's note (:mod:`.device_defects`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hexnn_import.ops.kernels.dwise_scaled import scales_slice_defect
from hexnn_import.optimizer.consts import (
    create_const_int32_op,
    do_prepend_const_node,
    new_internal_node_id,
)
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.fusion_match import ConvChain, match_conv_chain
from hexnn_import.optimizer.ranges import const_array, const_scalar
from hexnn_import.optimizer.slots import slot
from hexnn_import.optimizer.supernodes import depthwise_ok

from hexnn_import.graph import Graph, Node, OutputDef, Ref

DWISE = "QuantizedDepthwiseConv2d_8x8to32"
#: the requantizes a split chain may end with (prepare.c's requant8_ops): a Const range, or the data's own
TAILS = ("Requantize_32to8", "QuantizeDownAndShrinkRange_32to8")
#: channels per group: one d32 depth slice at most
GROUP = 32
#: the smallest equal group QuantizedSplit_8 is used for (below it, slices of 32 are fewer nodes)
MIN_EQUAL = 8


@dataclass(frozen=True)
class SplitPlan:
    """A chain to split: its nodes, the const data sliced per group, and the group bounds."""

    chain: ConvChain
    weights: np.ndarray
    scales: np.ndarray
    bias: np.ndarray
    bounds: tuple[tuple[int, int], ...]
    equal: bool


def group_bounds(depth: int) -> tuple[tuple[tuple[int, int], ...], bool]:
    """``(bounds, equal)``: equal groups of ``MIN_EQUAL..GROUP`` channels where ``depth`` divides so (the
    fewest such), else groups of ``GROUP`` and the rest."""
    for n in range(-(-depth // GROUP), depth // MIN_EQUAL + 1):
        if depth % n == 0:
            g = depth // n
            return tuple((i * g, (i + 1) * g) for i in range(n)), True
    return tuple((lo, min(lo + GROUP, depth)) for lo in range(0, depth, GROUP)), False


def plan_split(ed: GraphEditor, conv: Node) -> SplitPlan | None:
    """The plan for ``conv`` when its fused DepthwiseSupernode would reach the slice defect, else None."""
    if not depthwise_ok(ed, conv):
        return None
    chain = match_conv_chain(ed, conv, relu=True)
    if chain is None or chain.scale is None or not chain.bias32 or chain.tail.nodes[0].op not in TAILS:
        return None
    q = chain.tail.nodes[0]
    if q.op == "Requantize_32to8" and (const_scalar(ed, slot(q, "out_min")) is None
                                       or const_scalar(ed, slot(q, "out_max")) is None):
        return None
    w, k = const_array(ed, slot(conv, "filter")), const_array(ed, slot(chain.scale, "scale"))
    b = const_array(ed, slot(chain.bias_add, "bias"))
    if w is None or k is None or b is None or w.ndim != 4 or w.shape[3] != 1:
        return None
    depth = int(w.shape[2])
    stride_w = int(ed.graph.node(slot(conv, "stride").src_id).output_defs[0].shape[2])  # a Const (depthwise_ok)
    if k.size != depth or b.size != depth or not scales_slice_defect(w.shape, stride_w, k.reshape(-1)):
        return None
    bounds, equal = group_bounds(depth)
    return SplitPlan(chain, w, k.reshape(-1), b.reshape(-1), bounds, equal)


def _const(ed: GraphEditor, data: np.ndarray, dtype: str, name: str) -> Ref:
    """A Const of ``data`` (``[1, 1, 1, n]`` for a vector) of element type ``dtype``."""
    shape = data.shape if data.ndim == 4 else (1, 1, 1, data.size)
    node = do_prepend_const_node(ed, new_internal_node_id(ed), *shape, data, dtype, name)
    return Ref(node.node_id, 0)


def _with_depth(defs: list[OutputDef], depth: int) -> list[OutputDef]:
    """Output defs with output 0's depth set to ``depth``."""
    first = defs[0]
    return [OutputDef((*first.shape[:3], depth), first.dtype), *defs[1:]]


def _input_parts(ed: GraphEditor, plan: SplitPlan) -> tuple[list[Node], list[tuple[Ref, Ref, Ref]]]:
    """The split (or slices) of the conv's input: the nodes and each group's (data, min, max) refs."""
    conv = plan.chain.conv
    x, lo, hi = slot(conv, "data"), slot(conv, "in_min"), slot(conv, "in_max")
    b, h, w, _ = ed.graph.node(x.src_id).output_defs[x.output_idx].shape
    name = f"{conv.name}/depth_split"
    if plan.equal:
        g = plan.bounds[0][1]
        defs = [OutputDef((b, h, w, g), "quint8")] * len(plan.bounds) + [OutputDef.scalar()] * 2
        split = ed.make_node("QuantizedSplit_8", [Ref(create_const_int32_op(ed, 3), 0), x, lo, hi], defs, name=name)
        n = len(plan.bounds)
        return [split], [(Ref(split.node_id, i), Ref(split.node_id, n), Ref(split.node_id, n + 1)) for i in range(n)]
    nodes, parts = [], []
    for i, (a, z) in enumerate(plan.bounds):
        begin = _const(ed, np.array([0, 0, 0, a], np.int32), "int32", f"{name}{i}/begin")
        size = _const(ed, np.array([-1, -1, -1, z - a], np.int32), "int32", f"{name}{i}/size")
        sl = ed.make_node("QuantizedSlice_8", [x, begin, size, lo, hi],
                          [OutputDef((b, h, w, z - a), "quint8"), OutputDef.scalar(), OutputDef.scalar()],
                          name=f"{name}{i}")
        nodes.append(sl)
        parts.append((Ref(sl.node_id, 0), Ref(sl.node_id, 1), Ref(sl.node_id, 2)))
    return nodes, parts


def _group_chain(ed: GraphEditor, plan: SplitPlan, i: int, part: tuple[Ref, Ref, Ref]) -> list[Node]:
    """Group ``i``'s copy of the chain: each node's inputs as before, with the group's input triple, its
    slice of weights / scales / bias, and the previous group node in place of the old one."""
    ch, (a, z) = plan.chain, plan.bounds[i]
    conv, scale, bias = ch.conv, ch.scale, ch.bias_add
    assert scale is not None
    swap: dict[Ref, Ref] = {slot(conv, "data"): part[0], slot(conv, "in_min"): part[1],
                            slot(conv, "in_max"): part[2]}
    for node, name, data in ((conv, "filter", plan.weights[:, :, a:z, :]),
                             (scale, "scale", plan.scales[a:z]), (bias, "bias", plan.bias[a:z])):
        ref = slot(node, name)
        dtype = ed.graph.node(ref.src_id).output_defs[0].dtype
        swap[ref] = _const(ed, np.ascontiguousarray(data), dtype, f"{node.name}/group{i}/{name}")
    out: list[Node] = []
    for old in (conv, scale, bias, *ch.tail.nodes):
        new = ed.make_node(old.op, [swap.get(r, r) for r in old.inputs], _with_depth(old.output_defs, z - a),
                           old.padding, f"{old.name}/group{i}")
        swap.update({Ref(old.node_id, k): Ref(new.node_id, k) for k in range(len(old.output_defs))})
        out.append(new)
    return out


def split_chain(ed: GraphEditor, plan: SplitPlan) -> None:
    """Replace ``plan``'s chain by the split input, the group chains and a QuantizedConcat_8 on depth that
    takes the chain's last node id (module doc); the new nodes stand where the chain's last node stood."""
    ch = plan.chain
    last = ch.tail.last
    nodes, parts = _input_parts(ed, plan)
    groups = [_group_chain(ed, plan, i, p) for i, p in enumerate(parts)]
    ends = [g[-1] for g in groups]
    refs = [Ref(create_const_int32_op(ed, 3), 0), *(Ref(e.node_id, k) for k in range(3) for e in ends)]
    concat = ed.make_node("QuantizedConcat_8", refs, last.output_defs, name=last.name, node_id=last.node_id)
    ed.replace(None, [n for n in ch.removed if n is not last])
    ed.place([*nodes, *(n for g in groups for n in g), concat], last, None, False)


def _drop_stale(graph: Graph) -> None:
    """Forget source-tensor refs to nodes the split removed (the chain's inner tensors)."""
    live = graph.find_node
    graph.tensor_map = {k: r for k, r in graph.tensor_map.items() if live(r.src_id) is not None}
    graph.tensor_ranges = {k: (a, b) for k, (a, b) in graph.tensor_ranges.items()
                           if k in graph.tensor_map and live(a.src_id) is not None and live(b.src_id) is not None}


def split_defect_dwise(graph: Graph) -> int:
    """Split every chain of ``graph`` that would reach the slice defect (module doc); returns how many, and
    names each in ``graph.meta["notes"]``."""
    ed = GraphEditor(graph)
    plans = [p for conv in list(ed.nodes_of([DWISE])) if (p := plan_split(ed, conv)) is not None]
    for plan in plans:
        split_chain(ed, plan)
    if not plans:
        return 0
    ed.commit()
    _drop_stale(graph)
    labels = ", ".join(p.chain.conv.label for p in plans[:3]) + (", ..." if len(plans) > 3 else "")
    graph.meta.setdefault("notes", []).append(  # type: ignore[union-attr]
        f"{len(plans)} depthwise layer(s) with channel scales split into groups of <= {GROUP} channels, as "
        f"hexagon_nn's dwconv2dbbb 5xN stride-2 / 7xN stride-1 kernels requantize every depth slice after the "
        f"first with the first slice's scales: {labels}")
    graph.verify()
    return len(plans)
