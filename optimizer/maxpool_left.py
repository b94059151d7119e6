"""Max pools the device's QuantizedMaxPool_8_d32 computes wrong behind a depthwise layer (issue 36), at import.

hexagon_nn's DepthwiseSupernode_8x8p*to8_d32 (op_dwise_snode_8bit.c l. 409-410) gives its d32 output a left padding
of ``in_left / stride_w`` (VALID) or ``(in_left - pad_before_w) / stride_w`` (SAME): 3 after a 3x3 SAME layer on
the usual left padding 4. Add / Sub / Mul, PRelu, Tanh, Softmax and InstanceNorm _d32 keep their input's. On a left
padding other than 4 QuantizedMaxPool_8_d32's asm slices (2x2 / 2, 3x3 / 1, 3x3 / 2, square) read moved windows
and, for SAME on a left padding of 0 or 5-7, its zap clears the wrong columns
(:mod:`hexnn_import.ops.nnlib_maxpool_d32`; the engine follows the device there).

:func:`split_left_pools` rewrites each such QuantizedMaxPool_8 of the imported graph (before any prepare, so the
engine's prepare and the device's own ``hexagon_nn_prepare`` both see it) into a pool over rows (window ``kh x 1``,
stride ``sh x 1``) then one over columns (``1 x kw``, ``1 x sw``), same padding: the max is separable, each axis
keeps its own SAME / VALID padding, so the codes are the same; neither window is square, so the device takes its
rolling buffer, which aligns by the left padding (right on a left padding of 1-3 with SAME, on any with VALID;
the second pool's input has the default padding). prepare.c makes both _d32, as the single pool. Which layers
become DepthwiseSupernodes is prepare's call (a depth multiplier > 1 or a chain the bias fit keeps stays a chain,
whose output reaches the pool through a Convert_to_d32 with the default padding), so each candidate is checked on
a prepared copy of the graph (:func:`_confirmed`) before it is split. Where the split
cannot help (SAME on a left padding of 0 or 5-7) the pool stays as it is and :func:`left_pool_note` names it at
convert time (:mod:`.device_defects`), or refuses it where the device fails it (a left padding short of the
window's).
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Callable

from hexnn_import.ops.nnlib_maxpool_d32 import collapse, path_shift
from hexnn_import.ops.padding import nn_outsize_padding
from hexnn_import.ops.windows import Axis
from hexnn_import.optimizer.consts import do_prepend_const_node, new_internal_node_id
from hexnn_import.optimizer.editor import GraphEditor

from hexnn_import.errors import HexnnError, OpError
from hexnn_import.graph import Graph, Node, OutputDef, Ref

POOLS = ("QuantizedMaxPool_8", "QuantizedMaxPool_8_d32")
DWISE = ("DepthwiseSupernode_8x8p32to8", "DepthwiseSupernode_8x8p8to8", "DepthwiseSupernode_8x8p32to8_d32",
         "DepthwiseSupernode_8x8p8to8_d32", "QuantizedDepthwiseConv2d_8x8to32")
#: the layer's own chain (prepare.c fuses it into the DepthwiseSupernode) and the _d32 ops whose output keeps
#: the input's left padding: the walk goes on through input 0
KEEP = ("QuantizedChannelScale_32xf", "QuantizedBiasAdd_32p32to32", "Requantize_32to8",
        "QuantizeDownAndShrinkRange_32to8", "QuantizedRelu_8", "QuantizedReluX_8", "QuantizedClamp_8",
        "QuantizedAdd_8p8to8_d32", "QuantizedSub_8p8to8_d32", "QuantizedMul_8x8to8_d32", "QuantizedPRelu_8_d32",
        "QuantizedPRelu_8_V2_d32", "QuantizedTanh_8_d32", "QuantizedSigmoid_8_d32", "QuantizedSoftmax_8_d32",
        "QuantizedInstanceNorm_8_d32")


def _shape(graph: Graph, ref: Ref) -> tuple[int, int, int, int]:
    return graph.node(ref.src_id).output_defs[ref.output_idx].shape


def device_left(graph: Graph, ref: Ref, hops: int = 64) -> int:
    """The left padding of the d32 tensor the device makes for ``ref`` (4 unless a depthwise layer moves it)."""
    node = graph.find_node(ref.src_id)
    if node is None or hops == 0 or ref.output_idx != 0:
        return 4
    if node.op in KEEP:
        return device_left(graph, node.inputs[0], hops - 1)
    if node.op not in DWISE:
        return 4
    left = device_left(graph, node.inputs[0], hops - 1)
    kw = _shape(graph, node.inputs[1])[1]
    sw = _shape(graph, node.inputs[6])[2]
    if int(node.padding) == 2:  # VALID
        return left // sw
    _, before, _ = nn_outsize_padding(_shape(graph, node.inputs[0])[2], kw, sw, int(node.padding))
    return (left - before) // sw


def _axes(graph: Graph, pool: Node) -> tuple[Axis, Axis]:
    _, h, w, _ = _shape(graph, pool.inputs[0])
    _, kh, kw, _ = _shape(graph, pool.inputs[3])
    _, sh, sw, _ = _shape(graph, pool.inputs[4])
    pad = int(pool.padding)
    return (Axis(h, kh, sh, *nn_outsize_padding(h, kh, sh, pad)), Axis(w, kw, sw, *nn_outsize_padding(w, kw, sw, pad)))


def wrong_on_device(graph: Graph, pool: Node) -> tuple[int, bool] | None:
    """(the input's device left padding, whether the split fixes it) for a pool the device computes wrong, or
    None (module doc)."""
    left = device_left(graph, pool.inputs[0])
    if left == 4:
        return None
    rows, cols = _axes(graph, pool)
    if min(rows.out, cols.out) < 1:
        return None
    fake = SimpleNamespace(left=left, right=(-(cols.size + left)) & 3, top=4, bottom=4)
    path = path_shift(rows, cols, fake)  # type: ignore[arg-type]
    same = int(pool.padding) != 2
    bad_zap = same and (left % 4 == 0 or left > 4)
    if path is None or not (path[1] or bad_zap):
        return None
    return left, not bad_zap


def _split(ed: GraphEditor, graph: Graph, pool: Node) -> None:
    """Replace ``pool`` by its rows pool and its columns pool (the second takes its id and name)."""
    b, _, w, d = _shape(graph, pool.inputs[0])
    _, kh, kw, _ = _shape(graph, pool.inputs[3])
    _, sh, sw, _ = _shape(graph, pool.inputs[4])
    rows, _ = _axes(graph, pool)
    x, mn, mx = pool.inputs[:3]
    dtype = graph.node(pool.inputs[3].src_id).output_defs[0].dtype
    consts = [Ref(do_prepend_const_node(ed, new_internal_node_id(ed), *s, None, dtype, f"{pool.label}_{n}").node_id, 0)
              for s, n in (((1, kh, 1, 1), "rows_window"), ((1, sh, 1, 1), "rows_stride"),
                           ((1, 1, kw, 1), "cols_window"), ((1, 1, sw, 1), "cols_stride"))]
    first = ed.make_node(pool.op, [x, mn, mx, *consts[:2]],
                         [OutputDef((b, rows.out, w, d), "uint8"), OutputDef.scalar(), OutputDef.scalar()],
                         pool.padding, f"{pool.label}_rows")
    second = ed.make_node(pool.op, [Ref(first.node_id, 0), Ref(first.node_id, 1), Ref(first.node_id, 2),
                                    *consts[2:]], pool.output_defs, pool.padding, pool.name, pool.node_id)
    ed.place([first, second], pool, None, False)


def _split_helps(graph: Graph, pool: Node) -> bool:
    r = wrong_on_device(graph, pool)
    return r is not None and r[1]


def _confirmed(graph: Graph, pools: list[Node], trial: Callable[[Graph], object]) -> list[Node]:
    """The ``pools`` whose input a depthwise layer still makes in a prepared copy of ``graph`` (``trial``
    prepares it in place): a chain prepare does not fuse (a depth multiplier > 1, a chain the bias fit keeps)
    reaches the pool through a Convert_to_d32, whose left padding is 4. All of them when that prepare fails
    (the real one will say why)."""
    copy = graph.clone()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trial(copy)
    except HexnnError:
        return pools
    nodes = {n.node_id: n for n in copy.nodes}
    return [p for p in pools if p.node_id in nodes and _split_helps(copy, nodes[p.node_id])]


def split_left_pools(graph: Graph, trial: Callable[[Graph], object] | None = None) -> int:
    """Split every max pool the device would compute wrong and the split fixes (module doc); returns how many,
    and names them in ``graph.meta["notes"]``. ``trial`` (prepare in place) checks the candidates on a
    prepared copy (:func:`_confirmed`)."""
    todo = [p for p in graph.nodes if p.op in POOLS and _split_helps(graph, p)]
    if todo and trial is not None:
        todo = _confirmed(graph, todo, trial)
    if not todo:
        return 0
    ed = GraphEditor(graph)
    for pool in todo:
        _split(ed, graph, pool)
    ed.commit()
    labels = ", ".join(p.label for p in todo[:3]) + (", ..." if len(todo) > 3 else "")
    graph.meta.setdefault("notes", []).append(  # type: ignore[union-attr]
        f"{len(todo)} max pool(s) after a depthwise layer split into a rows pool and a columns pool, as hexagon_nn's "
        f"QuantizedMaxPool_8_d32 reads the wrong columns on the depthwise output's left padding: {labels}")
    graph.verify()
    return len(todo)


def left_pool_note(graph: Graph, node: Node) -> str | None:
    """The convert-time note for a prepared QuantizedMaxPool_8_d32 the device computes wrong, or None; refuses
    the node (OpError) where the device fails it: a left padding short of the window's (``maxpool_execute``:
    "insufficient width padding", e.g. SAME 3x3 after a 7x7 stride-2 SAME depthwise layer, left 0)."""
    if node.op != "QuantizedMaxPool_8_d32":
        return None
    left = device_left(graph, node.inputs[0])
    if left != 4:
        _, cols = _axes(graph, node)
        c = collapse(cols)
        if left < c.before or left + ((-(c.size + left)) & 3) < c.after:
            raise OpError(node.label, node.op, f"hexagon_nn cannot run it: its input's d32 left padding is {left} "
                                               f"(a depthwise layer's output), short of the window's {c.before} "
                                               "column(s) (op_maxpool_d32.c: insufficient width padding)")
    r = wrong_on_device(graph, node)
    if r is None:
        return None
    return (f"{node.label}: device defect: hexagon_nn's QuantizedMaxPool_8_d32 on an input left padding of {r[0]} "
            f"(a depthwise layer's output) reads moved windows or zaps the wrong columns (op_maxpool_d32.c); the "
            f"device's outputs are wrong (the engine follows them only where its input carries that padding)")
