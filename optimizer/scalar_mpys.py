"""fold_scalar_mpys: a multiply by a scalar Const after a supernode goes into the supernode's ranges
(hexagon_nn 2.14.1 prepare.c ``try_fold_scalar_mpy``, run after make_supernodes, before move_relus).

Pattern (prepare.c's comment): ``supernode -> QuantizedMul_8x8to32 (B a [1,1,1,1] Const, Const B
min/max) -> QuantizeDownAndShrinkRange_32to8``, the supernode being a flat (Depthwise)Supernode_* or
QuantizedBatchNorm_*, the scale ``s`` (B's code read over its range, ``read_float_from_qu8``) >= 0.
When ``s != 1`` the supernode must feed only the multiply, and its weight, bias and output range ends
(inputs 4, 5, 8, 9, 10, 11; batch norm 4, 5, 7, 8, 9, 10) must be Consts; each end ``v`` becomes
``s * v`` (float32): in place when the supernode is that Const's only reader (the scalar cache then
forgets it), else through a new (cached) scalar Const. Scaling the weight and bias ranges by ``s``
scales the sum by ``s``, and the output range follows. Then every reader of the requantize reads the
supernode's outputs 0..2 instead; the multiply and the requantize are left to dead-node removal.

As in the C, an end read again after an in-place change (two range inputs naming one Const) is read
with its new value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hexnn_import.graph import Node, Ref
from hexnn_import.optimizer.consts import create_const_float_op, purge_const_cache
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.edits import change_output_refs
from hexnn_import.optimizer.lookup import check_all_outputs, find_node, find_node_must_be_Const
from hexnn_import.ops.op_groups import SCALABLE, OpClass
from hexnn_import.optimizer.pass_base import PatternPass
from hexnn_import.optimizer.slots import slot, slot_indices, slots


def read_float_from_qu8(code: int, lo: np.float32, hi: np.float32) -> np.float32:
    """prepare.c read_float_from_qu8: code 255 is ``hi``, 0 is ``lo``, else ``lo + (hi - lo) * code / 255``
    in float32."""
    if code == 255:
        return hi
    if code == 0:
        return lo
    return np.float32(lo + np.float32(np.float32(hi - lo) * np.float32(code)) / np.float32(255.0))


def first_float(node: Node) -> np.float32 | None:
    """Element 0 of a Const read as float32 (tensor_get_float), or None when the data has no 4-byte element."""
    data = np.ascontiguousarray(node.data).reshape(-1)
    if data.size == 0 or data.dtype.itemsize != 4:
        return None
    return data.view(np.float32)[0]


def set_first_float(ed: GraphEditor, node: Node, value: np.float32) -> None:
    """tensor_set_float(.., 0, value) on a Const only one node reads, then purge_const_cache."""
    data = np.array(node.data, copy=True)
    data.reshape(-1).view(np.float32)[0] = value
    node.data = data
    purge_const_cache(ed, node.node_id)
    ed.changes += 1


def scalar_of_mul(ed: GraphEditor, mul: Node) -> np.float32 | None:
    """The multiply's scalar B (inputs b, b_min, b_max Const, B shaped [1,1,1,1]) as a float, or None."""
    val, lo, hi = (find_node_must_be_Const(ed, r.src_id) for r in slots(mul, "b", "b_min", "b_max"))
    if val is None or lo is None or hi is None or tuple(val.output_defs[0].shape) != (1, 1, 1, 1):
        return None
    lo_f, hi_f = first_float(lo), first_float(hi)
    if lo_f is None or hi_f is None:
        return None
    code = int(np.ascontiguousarray(val.data).reshape(-1).view(np.uint8)[0])
    return read_float_from_qu8(code, lo_f, hi_f)


def scale_ranges(ed: GraphEditor, sn: Node, scale: np.float32) -> bool:
    """Multiply the supernode's six Const range ends by ``scale``; False (nothing changed) when one is
    not a Const."""
    at = slot_indices(sn, *SCALABLE[sn.op])
    consts = [find_node_must_be_Const(ed, sn.inputs[i].src_id) for i in at]
    if any(c is None for c in consts):
        return False
    refs, rewired = list(sn.inputs), False
    for i, const in zip(at, consts):
        old = first_float(const)
        if old is None:
            return rewired
        new = np.float32(scale * old)
        if new == old:  # 0.0, -inf and +inf stay (and NaN is never equal: it is replaced, as in the C)
            continue
        if check_all_outputs(ed, const, sn) != 0:
            refs[i] = Ref(create_const_float_op(ed, float(new)), 0)
            rewired = True
        else:
            set_first_float(ed, const, new)
    if rewired:
        ed.rewire(sn, refs)
    return True


@dataclass(frozen=True)
class FoldScalarMpys(PatternPass):
    """supernode -> QuantizedMul_8x8to32 (scalar Const) -> QuantizeDownAndShrinkRange: readers read the
    supernode, its ranges scaled."""

    name: str = "fold_scalar_mpys"
    requires: ClassVar[OpClass] = OpClass.QUANTMUL8TO32
    ordered: ClassVar[bool] = True
    roots: ClassVar[frozenset[str]] = frozenset({"QuantizeDownAndShrinkRange_32to8"})

    def match_and_rewrite(self, node: Node, ed: GraphEditor) -> bool:
        mul = find_node(ed, slot(node, "data").src_id)
        if mul is None or mul.op != "QuantizedMul_8x8to32":
            return False
        scale = scalar_of_mul(ed, mul)
        if scale is None or scale < 0:
            return False
        sn = find_node(ed, slot(mul, "a").src_id)
        if sn is None or sn.op not in SCALABLE:
            return False
        if scale != np.float32(1.0):
            if check_all_outputs(ed, sn, mul) != 0 or not scale_ranges(ed, sn, scale):
                return False
        return change_output_refs(ed, sn, node.node_id, sn.node_id, 0x321) > 0
