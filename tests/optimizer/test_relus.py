"""move_relus: a bare QuantizedRelu_8 becomes output min 0 on the Supernodes feeding it.

The Supernodes then quantize onto [0, max] instead of [min, max] before the
crossed ops, so results agree within one step of the coarser of the two
final output ranges; through a concat (which requantizes again) add one
step of the coarser supernode range.
"""
from __future__ import annotations

import copy
import math

import numpy as np

from hexnn_import.engine import Engine
from hexnn_import.graph import NNPad, Node, Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.cleanup import RemoveDeadNodes
from hexnn_import.optimizer.relus import MoveRelus
from hexnn_import.testing.prepare_graphs import QBuilder, canonical, q3, real_outputs, run_outputs

RNG = np.random.default_rng(5)
X = RNG.integers(0, 256, (1, 4, 4, 3)).astype(np.uint8)


def supernode(b: QBuilder, x: list[Ref], lo: float, seed: int, dout: int = 4) -> Node:
    w = (128 + np.random.default_rng(seed).integers(-25, 26, (3, 3, 3, dout))).astype(np.uint8)
    ins = [x[0], b.c(w, np.uint8), x[1], x[2], b.c(-0.5), b.c(0.5), b.g.shape_ref((1, 1, 1, 1)),
           b.c(np.zeros((1, 1, 1, dout)), np.int32), b.c(-1.0), b.c(1.0), b.c(lo), b.c(math.inf)]
    return b.op("Supernode_8x8p32to8", ins, (1, 4, 4, dout), padding=NNPad.SAME, name=f"sn{seed}")


def pool(b: QBuilder, src: Node, op: str = "QuantizedMaxPool_8") -> Node:
    ones = [b.g.shape_ref((1, 2, 2, 1)), b.g.shape_ref((1, 1, 1, 1))]
    return b.op(op, [*q3(src), *ones], (1, 4, 4, src.output_defs[0].shape[3]), padding=NNPad.SAME, name="pool")


def graph(lo: float, with_relu: bool, op: str = "QuantizedMaxPool_8") -> QBuilder:
    b = QBuilder()
    x = b.input((1, 4, 4, 3))
    p = pool(b, supernode(b, x, lo, 1), op)
    b.output(q3(b.op("QuantizedRelu_8", q3(p), (1, 4, 4, 4), name="relu")) if with_relu else q3(p))
    return b


def after(b: QBuilder) -> QBuilder:
    out = copy.deepcopy(b)
    run_pipeline(out.g, [MoveRelus(), RemoveDeadNodes()])
    return out


def close_within(before: QBuilder, after_: QBuilder, extra: float = 0.0) -> None:
    (r0, s0), (r1, s1) = real_outputs(run_outputs(before.g, [X])), real_outputs(run_outputs(after_.g, [X]))
    assert np.max(np.abs(r0 - r1)) <= max(s0, s1) * (1 + 1e-6) + extra


def supernode_steps(b: QBuilder) -> list[float]:
    """Output steps of every Supernode of a graph, run on X."""
    _, every = Engine(b.g).run([X], mark_all=True)
    return [(every[Ref(n.node_id, 2)].item() - every[Ref(n.node_id, 1)].item()) / 255
            for n in b.g.nodes if n.op == "Supernode_8x8p32to8"]


def test_relu_after_max_pool_moves_into_the_supernode() -> None:
    b = graph(-math.inf, True)
    got = after(b)
    assert canonical(got.g) == canonical(graph(0.0, False).g)
    outs = run_outputs(got.g, [X])
    assert outs[1].item() == 0.0
    close_within(b, got)


def test_relu_after_concat_moves_into_every_input() -> None:
    def build(lo: float, with_relu: bool) -> QBuilder:
        b = QBuilder()
        x = b.input((1, 4, 4, 3))
        s1, s2 = supernode(b, x, lo, 1), supernode(b, x, lo, 2, dout=2)
        cat = b.op("QuantizedConcat_8", [b.c(3, np.int32), Ref(s1.node_id, 0), Ref(s2.node_id, 0),
                                         Ref(s1.node_id, 1), Ref(s2.node_id, 1), Ref(s1.node_id, 2),
                                         Ref(s2.node_id, 2)], (1, 4, 4, 6), name="cat")
        b.output(q3(b.op("QuantizedRelu_8", q3(cat), (1, 4, 4, 6), name="relu")) if with_relu else q3(cat))
        return b
    b = build(-math.inf, True)
    got = after(b)
    assert canonical(got.g) == canonical(build(0.0, False).g)
    # both graphs round twice (supernode, then the concat's requantization): one step of each stage
    close_within(b, got, extra=max(supernode_steps(b) + supernode_steps(got)))


def test_average_pool_is_not_crossed() -> None:
    b = graph(-math.inf, True, "QuantizedAvgPool_8")  # mean(relu(x)) != relu(mean(x))
    assert canonical(after(b).g) == canonical(b.g)


def test_a_supernode_with_other_readers_is_left_alone() -> None:
    b = QBuilder()
    x = b.input((1, 4, 4, 3))
    sn = supernode(b, x, -math.inf, 1)
    relu = b.op("QuantizedRelu_8", q3(sn), (1, 4, 4, 4), name="relu")
    b.output([*q3(relu), Ref(sn.node_id, 0)])
    assert canonical(after(b).g) == canonical(b.g)
