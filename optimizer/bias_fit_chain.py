"""What :func:`~.supernodes.fuse_conv` does with a chain whose fused node would refuse its bias
(:mod:`.bias_fit` decides): keep the chain, widen its input where even the chain cannot hold the bias,
give a run-time range with no floor one (:mod:`.bias_fit_floor`), and say so in the graph's notes (printed
by the summary). Module doc of :mod:`.supernodes` for the rule.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from hexnn_import.graph import NNPad, Node, OutputDef, Ref
from hexnn_import.optimizer.bias_fit import FusedOperands, chain_fit, gather, supernode_fit, widened, widening
from hexnn_import.optimizer.bias_fit_floor import (AUTOQ, LOW_EXP, SHRINK, floor_range, floored_width, least_floor,
                                                   range_source, union_part)
from hexnn_import.optimizer.bias_fit_inputs import input_floor, input_range
from hexnn_import.optimizer.consts import create_const_float_op
from hexnn_import.optimizer.editor import GraphEditor
from hexnn_import.optimizer.edits import insert_nodes, replace_nodes
from hexnn_import.optimizer.fusion_match import ConvChain
from hexnn_import.ops.op_groups import CHAIN_LINKS, FUSED_OPS, UNION_OPS
from hexnn_import.optimizer.ranges import const_scalar
from hexnn_import.optimizer.slots import (PRODUCT_DATA, PRODUCT_IN_MAX, PRODUCT_IN_MIN, PRODUCT_QTRIPLE, QTRIPLE, slot,
                                         slots, with_slots)


def run_time_source(ed: GraphEditor, chain: ConvChain) -> Node | None:
    """The node that reports ``chain``'s input range when only the run knows it (for a union with no floor,
    its first part from a shrink: flooring that part floors the union), or None (a range Consts fix, or
    one no node reports)."""
    lo, hi = slots(chain.conv, PRODUCT_IN_MIN, PRODUCT_IN_MAX)
    if input_range(ed, lo, hi) is not None:
        return None
    src = range_source(ed, lo, hi)
    if src is not None and src.op in UNION_OPS and input_floor(ed, lo, hi) is None:
        src = union_part(ed, src)  # flooring one part floors the union
    return src


def reason_to_keep(ed: GraphEditor, chain: ConvChain, k_ref: Ref | None, op: str, src: Node | None) -> str | None:
    """Why ``chain`` must stay a chain (noted in the graph's summary), or None to fuse it; ``src`` is
    :func:`run_time_source` (taken after :func:`pending_product`'s chain was fused, where one was).

    Where every operand is known at convert time and the fused ``op`` would refuse its bias
    (:func:`.bias_fit.supernode_fit`: fill_bias_buf's int32 on every output range its loop can try), the
    canonical chain stays: it adds the bias in product steps, not in channel-scaled ones. Where even
    the chain cannot hold the bias (:func:`.bias_fit.chain_fit`: a bias past the product's qint32 range,
    from an input range so narrow that its product step is too fine), the conv first reads its input
    through a Requantize_8to8 onto a wider range (:func:`widen_input`), after which the chain - or the
    fused node, where it then fits - holds it. A run-time input range is decided at its producer's floor;
    one with no floor (a QuantizeDownAndShrinkRange_32to8's) or the device's ``1e-18`` (an AutoQuantize's)
    first gets one (:func:`_floored`, :mod:`.bias_fit_floor`); a chain whose own output range was floored so
    stays a chain.
    """
    if output_floored(ed, chain):
        return "its output range is floored at run time (a fused node's range ends are Consts)"
    if src is not None and (src.op in (SHRINK, AUTOQ) or floored_width(ed, src) is not None):
        return _floored(ed, chain, k_ref, op, src)
    cases = gather(ed, chain.conv, chain.bias_add, k_ref, (chain.tail.lo, chain.tail.hi), chain.bias32)
    if not cases:
        return None
    why = _first(supernode_fit(c) for c in cases)
    if why is None:
        return None
    name = chain.tail.last.name or chain.conv.label
    lossy = _first(chain_fit(c) for c in cases)
    floor = cases[0].floor
    factor = None if lossy is None or floor is not None else widening(cases[0])
    if factor is not None:
        widen_input(ed, chain.conv, factor, name)
        _note(ed, f"{name}: input read on a {factor:g} times wider range (Requantize_8to8 before "
                  f"{chain.conv.op}): {lossy}")
        op_w = widened(cases[0], factor)
        why, lossy = supernode_fit(op_w), None
        if why is None:
            return None
    note = f"{name}: kept as {chain_text(chain)} instead of {op}: {why}"
    if floor is not None:
        note += f" (a run-time input range, as narrow as its producer allows: {floor:.3g} wide)"
    if lossy is not None:
        note += f"; the chain cannot hold it exactly either ({lossy})"
    _runnable_tail(ed, chain)
    unfusable_tail(ed, chain)
    _note(ed, note)
    return note


def output_floored(ed: GraphEditor, chain: ConvChain) -> bool:
    """True when ``chain``'s own output range was floored (:mod:`.bias_fit_floor`): it stays a chain."""
    return floored_width(ed, chain.tail.nodes[0]) is not None


def pending_product(ed: GraphEditor, src: Node | None) -> Node | None:
    """make_supernodes visits its roots by op, so a shrink ``src`` that ends a conv chain it has not reached
    yet is about to become an auto-range Supernode (whose range has a floor,
    :func:`.bias_fit_inputs.input_floor`): that chain's live product, for the caller to fuse first, as the
    pass would, instead of flooring the shrink (None when ``src`` is no such shrink)."""
    if src is None or src.op != SHRINK:
        return None
    node = ed.known(slot(src, "data").src_id)
    for _ in range(len(CHAIN_LINKS) + 1):
        if node is None or node.op not in CHAIN_LINKS:
            break
        node = ed.known(slot(node, "data").src_id)
    return node if node is not None and node.op in FUSED_OPS and ed.alive(node) else None


def _add_fuses(ed: GraphEditor, shrink: Node) -> bool:
    """A shrink after QuantizedAdd_8p8to32 becomes QuantizedAdd_8p8to8's auto range (make_supernodes): no
    shrink is left to floor."""
    node = ed.known(slot(shrink, "data").src_id)
    return node is not None and node.op == "QuantizedAdd_8p8to32"


def _floored(ed: GraphEditor, chain: ConvChain, k_ref: Ref | None, op: str, src: Node) -> str | None:
    """``chain`` reading a data range with no floor (a shrink; an AutoQuantize, 1e-18: :mod:`.bias_fit_floor`):
    the range gets the least floor at which the fused ``op`` holds its bias for every input (None: fuse), else
    the chain stays with the least floor at which it is exact (the note says why). A range another consumer
    already floored is only raised."""
    def at(width: float) -> list[FusedOperands]:
        got = gather(ed, chain.conv, chain.bias_add, k_ref, (chain.tail.lo, chain.tail.hi), chain.bias32, width)
        return got or []

    if not at(1.0) or (src.op == SHRINK and _add_fuses(ed, src)):
        return None
    have = floored_width(ed, src) or 0.0
    name = chain.tail.last.name or chain.conv.label
    where = f"{src.name or src.op}, each run's own data range, as narrow as the data"
    form = ("Min_f / Max_f -> Minimum_f / Maximum_f -> Quantize" if src.op in (AUTOQ, "Quantize")
            else "RequantizationRange_32 -> Maximum_f -> Requantize_32to8")
    width = least_floor(lambda w: all(supernode_fit(c) is None for c in at(max(w, have))))
    if width is not None:
        if width > have:
            floor_range(ed, src, width)
            _note(ed, f"{name}: its input range ({where}) floored at {width:.3g} ({form}): "
                      f"{op} then holds its bias for every input")
        return None
    width = least_floor(lambda w: all(chain_fit(c) is None for c in at(max(w, have))))
    if width is not None and width > have:
        floor_range(ed, src, width)
    final = max(width or 0.0, have)
    why = str(_first(supernode_fit(c) for c in at(final or 2.0 ** LOW_EXP))).replace(" (AutoQuantize)", "")
    note = f"{name}: kept as {chain_text(chain)} instead of {op}: {why} (input range: {where}"
    note += f"; floored at {final:.3g}, where the chain holds its bias exactly)" if final else ")"
    _runnable_tail(ed, chain)
    unfusable_tail(ed, chain)
    _note(ed, note)
    return note


def _runnable_tail(ed: GraphEditor, chain: ConvChain) -> None:
    """A chain built to be fused may end in Requantize_32to8 onto ``[-inf, inf]`` (the Supernode's "auto"
    output range, as optimizer.transpose_conv builds it); kept as a chain, that requantize is the
    QuantizeDownAndShrinkRange_32to8 of the same data (its range from each run's data), which runs."""
    rq = chain.tail.nodes[0]
    if rq.op != "Requantize_32to8" or len(rq.inputs) < 5:
        return
    ends = [const_scalar(ed, r) for r in slots(rq, "out_min", "out_max")]
    if any(e is None or np.isfinite(e) for e in ends):
        return
    new = ed.make_node("QuantizeDownAndShrinkRange_32to8", slots(rq, *QTRIPLE), rq.output_defs, rq.padding,
                       rq.name, node_id=rq.node_id)
    replace_nodes(ed, None, new, rq)


def unfusable_tail(ed: GraphEditor, chain: ConvChain) -> Node:
    """Make the kept ``chain`` one hexagon_nn_prepare, run again on the emitted graph (on the device), does not
    fuse: the requantize ending it reads the bias add's minimum through ``Minimum_f(min, 0)`` (the same value:
    QuantizedBiasAdd_32p32to32 passes on the minimum of its product, ``INT32_MIN * level`` in op_conv2d.c /
    op_depthwiseconv.c / op_matmul.c, through op_channelscale.c unchanged; QuantizedBiasAdd_8p8to32 reports
    ``-max``: never above 0), so that prepare.c's try_make_supernode_flavored finds no qdown1 - graphops.c
    find_unique_consumer takes a consumer only when every input it has is the producer's or a Const - and the
    device runs the chain the engine runs (as :func:`.bias_fit_floor.floor_range` does for a floored shrink).
    Returns the Minimum_f."""
    rq = ed.known(chain.tail.nodes[0].node_id)   # _runnable_tail may have replaced it (same id)
    assert rq is not None
    name = chain.tail.last.name or chain.conv.label
    zero = Ref(create_const_float_op(ed, 0.0), 0)
    mn = ed.make_node("Minimum_f", [slot(rq, "in_min"), zero], [OutputDef.scalar()], NNPad.NA, f"{name}/chain_min")
    insert_nodes(ed, rq, mn)
    ed.rewire(rq, with_slots(rq, {"in_min": Ref(mn.node_id, 0)}))
    return mn


def _first(reasons: Iterable[str | None]) -> str | None:
    return next((r for r in reasons if r is not None), None)


def _note(ed: GraphEditor, note: str) -> None:
    notes = ed.graph.meta.setdefault("notes", [])
    if isinstance(notes, list) and note not in notes:
        notes.append(note)


def widen_input(ed: GraphEditor, conv: Node, factor: float, name: str) -> Node:
    """Requantize_8to8 of ``conv``'s input onto ``factor`` times its range (a power of two: the zero code
    stays), inserted before ``conv``, which then reads it (:func:`.bias_fit.widening`)."""
    x, lo, hi = slots(conv, PRODUCT_DATA, PRODUCT_IN_MIN, PRODUCT_IN_MAX)
    rng = input_range(ed, lo, hi)
    assert rng is not None
    ends = [Ref(create_const_float_op(ed, float(np.float32(v * factor))), 0) for v in rng]
    shape = ed.known(x.src_id).output_defs[x.output_idx].shape  # type: ignore[union-attr]
    rq = ed.make_node("Requantize_8to8", [x, lo, hi, *ends],
                      [OutputDef(shape, "quint8"), OutputDef.scalar(), OutputDef.scalar()], NNPad.NA,
                      f"{name}/widen_input")
    insert_nodes(ed, conv, rq)
    ed.rewire(conv, with_slots(conv, {"data": Ref(rq.node_id, 0), "in_min": Ref(rq.node_id, 1),
                                      "in_max": Ref(rq.node_id, 2)}, PRODUCT_QTRIPLE))
    return rq


def chain_text(chain: ConvChain) -> str:
    """The chain's ops joined by arrows (for the note)."""
    return " -> ".join(n.op for n in chain.removed)
