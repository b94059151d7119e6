"""fold_scalar_mpys (prepare.c try_fold_scalar_mpy), cases worked by hand from the C.

The whole-model check against prepare.c itself is tests/data/golden/prepare/keras_mobilenet_v3_small_float.json
(9 multiplies folded there); these cases pin the rules one at a time: the scale read from B's code
(``read_float_from_qu8``), the float32 products ``s * v`` of the six range ends, in place or through a
new Const, and the cases the C leaves alone.
"""
from __future__ import annotations

import copy

import numpy as np

from hexnn_import.graph import Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.scalar_mpys import FoldScalarMpys, read_float_from_qu8
from hexnn_import.testing.prepare_graphs import QBuilder, q3

W = np.full((1, 1, 4, 4), 140, np.uint8)


def chain(code: int, b_lo: float, b_hi: float, extra_reader: bool = False) -> tuple[QBuilder, object, object]:
    """INPUT -> Supernode (ranges: w [-0.5, 0.5], bias [-1, 1], out [-2, 6]) -> Mul by a scalar code -> QDSR."""
    b = QBuilder()
    x = b.input((1, 3, 3, 4))
    sn = b.supernode(x, W, -2.0, 6.0)
    mul = b.op("QuantizedMul_8x8to32", [Ref(sn.node_id, 0), b.c(np.uint8(code), np.uint8, (1, 1, 1, 1)),
                                        Ref(sn.node_id, 1), Ref(sn.node_id, 2), b.c(b_lo), b.c(b_hi)],
               (1, 3, 3, 4), "qint32")
    q = b.op("QuantizeDownAndShrinkRange_32to8", q3(mul), (1, 3, 3, 4))
    refs = q3(q) + ([Ref(sn.node_id, 0)] if extra_reader else [])
    b.output(refs)
    return b, sn, q


def fold(b: QBuilder) -> QBuilder:
    out = copy.deepcopy(b)
    run_pipeline(out.g, [FoldScalarMpys()])
    return out


def ends(b: QBuilder, sn_id: int) -> list[float]:
    sn = b.g.node(sn_id)
    return [float(b.g.node(sn.inputs[i].src_id).data.reshape(-1)[0]) for i in (4, 5, 8, 9, 10, 11)]


def test_read_float_from_qu8_is_the_c_formula() -> None:
    lo, hi = np.float32(-1.0), np.float32(3.0)
    assert read_float_from_qu8(255, lo, hi) == hi and read_float_from_qu8(0, lo, hi) == lo
    # lo + (hi - lo) * 51 / 255 in float32: 4 * 51 = 204, 204 / 255 = 0.8, -1 + 0.8
    assert read_float_from_qu8(51, lo, hi) == np.float32(np.float32(204.0) / np.float32(255.0)) + lo


def test_scale_multiplies_the_six_range_ends_and_readers_read_the_supernode() -> None:
    b, sn, q = chain(255, 0.0, 0.25)           # B = 0.25 (code 255 = max)
    got = fold(b)
    out = got.g.nodes[-1]
    assert out.inputs == q3(got.g.node(sn.node_id))
    # each end was read by the supernode alone: changed in place to 0.25 * v
    assert ends(got, sn.node_id) == [-0.125, 0.125, -0.25, 0.25, -0.5, 1.5]


def test_a_shared_range_const_gets_a_new_const_instead() -> None:
    b, sn, _ = chain(255, 0.0, 0.5)
    shared = b.g.node(b.g.node(sn.node_id).inputs[10].src_id)
    out = b.g.nodes[-1]
    b.g.set_inputs(out, [*out.inputs, Ref(shared.node_id, 0)])  # a second reader of out_min (-2.0)
    got = fold(b)
    assert float(got.g.node(shared.node_id).data.reshape(-1)[0]) == -2.0      # untouched
    assert ends(got, sn.node_id)[4] == -1.0                                     # a new Const 0.5 * -2


def test_scale_one_rewires_even_with_other_readers() -> None:
    b, sn, _ = chain(255, 0.0, 1.0, extra_reader=True)
    got = fold(b)
    assert got.g.nodes[-1].inputs[:3] == q3(got.g.node(sn.node_id))
    assert ends(got, sn.node_id) == [-0.5, 0.5, -1.0, 1.0, -2.0, 6.0]


def test_left_alone_negative_scale_or_other_readers() -> None:
    neg, _, q = chain(0, -0.5, 0.5)             # B = -0.5
    assert fold(neg).g.nodes[-1].inputs == q3(q)
    shared, sn, q2 = chain(255, 0.0, 0.25, extra_reader=True)  # s != 1 and the supernode feeds another node
    got = fold(shared)
    assert got.g.nodes[-1].inputs[:3] == q3(q2)
    assert ends(got, sn.node_id) == [-0.5, 0.5, -1.0, 1.0, -2.0, 6.0]
