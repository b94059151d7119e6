"""convert_to_depth32, remove_unnecessary_d32_converts, remove_concats_with_placement
(hexagon_nn_prepare_notes.txt, "Order of Optimization Passes"; SEMANTICS.md §7; prepare.c's
depth32_replacement_op for the per-op conditions).

convert_to_depth32 visits nodes in list order and replaces an op by
``Convert_to_d32 -> op_d32 -> Convert_from_d32`` (data inputs converted, the
scalars and weights kept flat, output 0 read back flat by every former
reader; min/max outputs stay on the _d32 node, which keeps the old id). An
input already produced by a Convert_from_d32 is read at its d32 source, and
an earlier Convert_to_d32 of the same tensor is reused. A node converts only
when the registry has kernels for its _d32 op and both converts. Conditions:

- Supernode_8x8p{8,32}to8: Const weights (any filter size: prepare.c waived
  its "no d32 above 9x9 with SAME" rule, see :mod:`.oversize`); input depth
  <= 4, stride width <= 4 and no channel scales ->
  InputSupernode_*_outd32 (flat input), unless the stride width is odd and
  > 1 (left flat); otherwise Supernode_*_d32. The InputSupernode's output
  definition gets prepare.c's "16KB minimum allocation" depth
  (do_convert_to_short_conv: a depth of ``ceil(16384 / (b*h*w))`` when the
  output holds fewer than 16384 bytes), so its reported shape is the C's;
  the kernel and the Convert_from_d32 after it keep the logical depth.
- DepthwiseSupernode_*, QuantizedBatchNorm_*, Max/Avg/L2 pools: always.
- QuantizedConcat_8: unless the output is ``[b,1,1,d]``; every data input converted.
- QuantizedAdd_8p8to8: when an input is already d32 or the shapes differ, and
  the broadcast is one the _d32 op supports (B broadcast on batch/height
  only, or B of shape ``[1,1,*,*]``; either way round). Both inputs converted.
- QuantizedResizeBilinear_8: output depth > 2, or an output width that is not a power of 2.
- QuantizedTanh_8, QuantizedSigmoid_8, Requantize_8to8: only when the input is already d32.
- QuantizedPRelu_8, QuantizedPRelu_8_V2: always.
- QuantizedSoftmax_8: when the input is already d32 (never after a
  SuperFC_8x8p32to8), or the output is ``h >= 4``, ``w >= 8 or w == 4``, ``d > 2``.
- the u16 ops (QuantizedAdd_u16 / QuantizedSub_u16 / QuantizedPad_u16 / Supernode_16x16p32to16, ``D32REPL_16``):
  :mod:`.d32_u16`; their converts are Convert_to_d32_16b / Convert_from_d32_16b, chosen by the element size of
  the tensor converted, as need_convert_to_d32 does.
- DepthToSpace_8 (prepare.c check_spaceop_ok_for_d32): input depth a multiple of 32, a Const block
  size of 1 or 2 int32 values >= 1 with width <= 4 or 8, dividing the input depth into an output depth
  that is a multiple of 32 (or 16 with block width 2).

A new d32 supernode whose filter is too large for the d32 padding (and any
such d32 supernode the pass meets) gets a QuantizedPadForConv_8_d32 in front
and VALID padding (:mod:`.oversize`, prepare.c do_convert_to_depth32).

The _d32 kernels compute exactly what their flat twins do, so the pass does
not change any result. remove_concats_with_placement gives the Supernode_*_d32
inputs of a QuantizedConcat_8_d32 one common (widest) Const output range so
the concat copies instead of requantizing (each code within one of the
concat's former result). The QuantizedFakeConcat_8_d32 the device then makes
is not in the op set, so the concat node itself stays.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from hexnn_import.graph import NNPad, Node, OutputDef, Ref
from hexnn_import.optimizer.consts import create_const_float_op
from hexnn_import.optimizer.d32_u16 import (TO_D32_OPS, U16_D32_OPS, converts_for_op, converts_for_ref,
                                            from_d32_16b, u16_replacement)
from hexnn_import.optimizer.d32_gated import MORE_D32_OPS, data_outputs, follow_converted_dim, more_replacement
from hexnn_import.optimizer.edits import change_multi_output_refs_table, change_output_refs, replace_node_with
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.fusion_match import reads_qtriple
from hexnn_import.optimizer.lookup import (check_single_consumer_all, find_node, find_node_must_be,
                                           find_node_must_be_Const_from_ref)
from hexnn_import.ops.op_groups import (D32_OPS, D32_SUPERNODES, INPUT_SUPERNODES, OVERSIZE_CANDIDATES,
                                               WHEN_INPUT_D32, OpClass)
from hexnn_import.optimizer.oversize import PAD_FOR_CONV, handle_oversize_d32_supernode, oversize_quick_check
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.quant_passes import bypass
from hexnn_import.optimizer.ranges import const_scalar
from hexnn_import.optimizer.slots import has_slot, part, part_index, run_count, slot, slots, with_slots


#: prepare.c do_convert_to_short_conv: "Hack to ensure 16KB minimum allocation for this output".
MIN_INPUT_SUPERNODE_BYTES = 16 * 1024


def input_supernode_alloc_shape(shape: Sequence[int]) -> tuple[int, int, int, int]:
    """The InputSupernode output definition prepare.c makes: the depth raised to
    ``ceil(16384 / (b*h*w))`` when ``b*h*w*d`` (one byte each) is below 16384."""
    b, h, w, d = shape
    per_depth = b * h * w
    if per_depth > 0 and per_depth * d < MIN_INPUT_SUPERNODE_BYTES:
        d = -(-MIN_INPUT_SUPERNODE_BYTES // per_depth)
    return (b, h, w, d)


def _from_d32(ed: GraphEditor, ref: Ref) -> bool:
    return ref.output_idx == 0 and find_node_must_be(ed, ref.src_id, "Convert_from_d32") is not None


def _shape(ed: GraphEditor, ref: Ref) -> tuple[int, ...]:
    src = ed.known(ref.src_id)
    return tuple(src.output_defs[ref.output_idx].shape) if src is not None else ()


def broadcast_code(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """prepare.c check_broadcast_dims: bit i (and 4+i) where B broadcasts on dim i; 4+i where both are 1."""
    code = 0
    for i, (sa, sb) in enumerate(zip(a, b)):
        if sa != sb:
            if sb != 1:
                return -1
            code |= 0x11 << i
        elif sa == 1:
            code |= 0x10 << i
    return code


def _supernode_choice(ed: GraphEditor, node: Node) -> tuple[str, tuple[int, ...]] | None:
    wref = slot(node, "weights")
    w = find_node(ed, wref.src_id)
    if w is None or not w.is_const or wref.output_idx != 0:
        return None
    din = w.output_defs[0].shape[2]
    sw = _shape(ed, slot(node, "stride"))[2:3]
    if din <= 4 and (not sw or sw[0] <= 4) and not has_slot(node, "channel_scale"):
        if sw and sw[0] > 1 and sw[0] % 2:
            return None
        return INPUT_SUPERNODES[node.op], ()
    return D32_OPS[node.op], (0,)


def softmax_to_d32(ed: GraphEditor, node: Node) -> bool:
    """prepare.c depth32_replacement_op for QuantizedSoftmax_8: input already d32, else not after a
    SuperFC_8x8p32to8, and an output of height >= 4, width >= 8 or 4, depth > 2."""
    src = find_node(ed, slot(node, "data").src_id)
    if src is not None and src.op == "Convert_from_d32":
        return True
    if src is not None and src.op == "SuperFC_8x8p32to8":
        return False
    _, h, w, d = node.output_defs[0].shape
    return h >= 4 and (w >= 8 or w == 4) and d > 2


def depth_to_space_to_d32(ed: GraphEditor, node: Node) -> bool:
    """prepare.c check_spaceop_ok_for_d32 (with get_blocksize_values) for DepthToSpace_8."""
    if len(node.inputs) < 4:
        return False
    din = _shape(ed, slot(node, "data"))
    block = find_node_must_be_Const_from_ref(ed, slot(node, "block"))
    if not din or din[3] % 32 or block is None or block.data is None:
        return False
    vals = np.asarray(block.data)
    if vals.dtype.itemsize != 4 or not 1 <= vals.size <= 2 or block.output_defs[0].shape[3] != vals.size:
        return False
    flat = vals.reshape(-1).view(np.int32)
    bh, bw = int(flat[0]), int(flat[-1])
    if min(bh, bw) < 1 or (bw > 4 and bw != 8):
        return False
    out_depth = din[3] // (bh * bw)
    if out_depth == 0 or out_depth * bh * bw != din[3]:
        return False
    return (out_depth == 16 and bw == 2) or out_depth % 32 == 0


def replacement(ed: GraphEditor, node: Node) -> tuple[str, tuple[int, ...]] | None:
    """``(d32 op, data inputs to convert)`` for ``node``, or None to leave it flat."""
    op = node.op
    if op in INPUT_SUPERNODES:
        return _supernode_choice(ed, node)
    if op == "QuantizedConcat_8":
        n = (len(node.inputs) - 1) // 3
        b, h, w, d = node.output_defs[0].shape
        return None if (h, w) == (1, 1) else (D32_OPS[op], tuple(range(1, 1 + n)))
    if op == "QuantizedAdd_8p8to8":
        x, y = slots(node, "a", "b")
        a, b = _shape(ed, x), _shape(ed, y)
        if not (_from_d32(ed, x) or _from_d32(ed, y)) and a == b:
            return None
        code = broadcast_code(a, b)
        code = code if code >= 0 else broadcast_code(b, a)
        return (D32_OPS[op], (0, 1)) if code >= 0 and ((code & 0x0C) == 0 or (code & 0x30) == 0x30) else None
    if op == "QuantizedResizeBilinear_8":  # the flat op's fast path needs a power-of-2 output width
        _, _, w, d = node.output_defs[0].shape
        return (D32_OPS[op], (0,)) if d > 2 or w & (w - 1) else None
    if op in WHEN_INPUT_D32:
        return (D32_OPS[op], (0,)) if _from_d32(ed, slot(node, "data")) else None
    if op == "QuantizedSoftmax_8":
        return (D32_OPS[op], (0,)) if softmax_to_d32(ed, node) else None
    if op == "DepthToSpace_8":
        return (D32_OPS[op], (0,)) if depth_to_space_to_d32(ed, node) else None
    if op in U16_D32_OPS:
        return u16_replacement(ed, node)
    return (D32_OPS[op], (0,)) if op in D32_OPS else more_replacement(ed, node)


def need_convert_to_d32(ed: GraphEditor, target: Node, ref: Ref) -> tuple[Ref, Node | None]:
    """A d32 ref for flat ``ref`` as read by ``target``, and the Convert_to_d32 made for it (or None); a 16-bit
    tensor gets the 16-bit converts (:func:`.d32_u16.converts_for_ref`)."""
    to_op, from_op, d32_type = converts_for_ref(ed, ref)
    producer = ed.known(ref.src_id)
    if producer is not None and producer.op == from_op and ref.output_idx == 0:
        return slot(producer, "data"), None
    where = ed.position(target)
    for c in ed.graph.consumers(ref.src_id):
        if c.op == to_op and c.inputs == [ref]:
            pos = ed.position(c)
            if pos is None or (where is not None and pos < where):  # placed this pass, or earlier in the list
                return Ref(c.node_id, 0), None
    shape = _shape(ed, ref)
    new = ed.make_node(to_op, [ref], [OutputDef(shape, d32_type)], NNPad.NA, "")
    return Ref(new.node_id, 0), new


@dataclass(frozen=True)
class ConvertToDepth32(PatternPass):
    """Flat ops with a _d32 twin -> to_d32 / op_d32 / from_d32."""

    name: str = "convert_to_depth32"
    requires: ClassVar[OpClass] = OpClass.D32_CANDIDATE
    needs_list: ClassVar[bool] = True  # list order decides "input already d32" and Convert_to_d32 reuse
    ordered: ClassVar[bool] = True
    roots: ClassVar[frozenset[str]] = (frozenset(D32_OPS) | OVERSIZE_CANDIDATES | frozenset(MORE_D32_OPS)
                                       | frozenset(U16_D32_OPS))

    def should_run(self, ed: GraphEditor) -> bool:
        return super().should_run(ed) or bool(ed.nodes_of(MORE_D32_OPS)) or bool(ed.nodes_of(U16_D32_OPS))

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        from hexnn_import.ops.catalog import get_spec
        from hexnn_import.ops.registry import has_kernel

        if node.op in OVERSIZE_CANDIDATES:  # prepare.c OVERSIZE_CHECK_ALL: d32 supernodes met in the list
            return oversize_quick_check(node) and has_kernel(PAD_FOR_CONV) and handle_oversize_d32_supernode(ed, node)
        choice = replacement(ed, node)
        to_op, from_op, d32_type = converts_for_op(choice[0]) if choice is not None else converts_for_op("")
        if choice is None or get_spec(choice[0]) is None \
                or not all(has_kernel(k) for k in (choice[0], to_op, from_op)):
            return False
        new_op, convert = choice
        inputs, made, seen = list(node.inputs), [], {}
        for i in convert:
            if node.inputs[i] not in seen:  # a tensor read twice (concat of x with x) is converted once
                ref, to_node = need_convert_to_d32(ed, node, node.inputs[i])
                seen[node.inputs[i]] = ref
                made += [to_node] if to_node is not None else []
            inputs[i] = seen[node.inputs[i]]
        follow_converted_dim(new_op, node, inputs)
        n_data = data_outputs(new_op, node)
        shape = node.output_defs[0].shape
        if new_op in INPUT_SUPERNODES.values():
            shape = input_supernode_alloc_shape(shape)
        out_defs = [OutputDef(shape, d32_type),
                    *(OutputDef(o.shape, d32_type) for o in node.output_defs[1:n_data]), *node.output_defs[n_data:]]
        d32 = ed.make_node(new_op, inputs, out_defs, node.padding, node.name, node_id=node.node_id)
        backs = [ed.make_node(from_op, [Ref(node.node_id, i)], [node.output_defs[i]], NNPad.NA,
                              f"{node.name}/from_d32{f'_{i}' if i else ''}" if node.name else "")
                 for i in range(n_data)]
        if n_data == 1:
            keep = sum(0xF << (4 * i) for i in range(1, len(node.output_defs)))
            change_output_refs(ed, node, node.node_id, backs[0].node_id, 0x1 | keep)
        else:  # a split: output i -> its own Convert_from_d32 (change_multi_output_refs)
            change_multi_output_refs_table(ed, node, node.node_id, n_data, [Ref(b.node_id, 0) for b in backs])
        replace_node_with(ed, None, node, *made, d32, *backs)
        if oversize_quick_check(d32) and has_kernel(PAD_FOR_CONV):
            handle_oversize_d32_supernode(ed, d32)
        return True


@dataclass(frozen=True)
class RemoveUnnecessaryD32Converts(PatternPass):
    """Convert_to_d32(Convert_from_d32(x)), and the 16-bit pair: readers read x."""

    name: str = "remove_unnecessary_d32_converts"
    requires: ClassVar[OpClass] = OpClass.D32_CONVERT
    roots: ClassVar[frozenset[str]] = TO_D32_OPS

    def should_run(self, ed: GraphEditor) -> bool:
        return super().should_run(ed) or bool(ed.nodes_of(("Convert_to_d32_16b",)))

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        data = slot(node, "data")
        if not (from_d32_16b(ed, data) if node.op == "Convert_to_d32_16b" else _from_d32(ed, data)):
            return False
        return bypass(ed, node, [slot(find_node(ed, data.src_id), "data")])


@dataclass(frozen=True)
class RemoveConcatsWithPlacement(PatternPass):
    """Supernode_d32 inputs of a QuantizedConcat_8_d32 get one common Const output range."""

    name: str = "remove_concats_with_placement"
    requires: ClassVar[OpClass] = OpClass.CONCAT_D32
    roots: ClassVar[frozenset[str]] = frozenset({"QuantizedConcat_8_d32"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        srcs: list[Node] = []
        for k in range(run_count(node)):
            src = find_node(ed, part(node, "data", k).src_id)
            at = [part_index(node, name, k) for name in ("data", "in_min", "in_max")]
            if (src is None or src.op not in D32_SUPERNODES or check_single_consumer_all(ed, src, node) != 0
                    or not reads_qtriple(node, src, *at)):
                return False
            srcs.append(src)
        ends = [(const_scalar(ed, slot(s, "out_min")), const_scalar(ed, slot(s, "out_max"))) for s in srcs]
        if not srcs or any(lo is None or hi is None or not -1e38 < lo <= 0.0 <= hi < 1e38 for lo, hi in ends):
            return False
        lo, hi = min(e[0] for e in ends), max(e[1] for e in ends)
        if all(e == (lo, hi) for e in ends):
            return False
        # new (prepended) Consts: the extreme ones may come after some of the supernodes
        lo_ref, hi_ref = Ref(create_const_float_op(ed, lo), 0), Ref(create_const_float_op(ed, hi), 0)
        for s in {id(s): s for s in srcs}.values():
            ed.rewire(s, with_slots(s, {"out_min": lo_ref, "out_max": hi_ref}))
        return True
