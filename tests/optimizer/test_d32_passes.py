"""convert_to_depth32, remove_unnecessary_d32_converts, remove_concats_with_placement.

The _d32 kernels compute what their flat twins do, so convert_to_depth32 and
remove_unnecessary_d32_converts must leave every result bit-identical.
remove_concats_with_placement moves the concat's requantization into the
supernodes (one rounding instead of two): each code within 1 of before.
"""
from __future__ import annotations

import dataclasses

import copy
import math

import numpy as np

from hexnn_import.graph import NNPad, Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.cleanup import RemoveDeadNodes
from hexnn_import.optimizer.d32_passes import (ConvertToDepth32, RemoveConcatsWithPlacement,
                                               RemoveUnnecessaryD32Converts)
from hexnn_import.testing.prepare_graphs import QBuilder, canonical, q3, run_outputs

RNG = np.random.default_rng(3)
W8 = (128 + RNG.integers(-25, 26, (3, 3, 8, 8))).astype(np.uint8)
W3 = (128 + RNG.integers(-25, 26, (3, 3, 3, 8))).astype(np.uint8)
X8 = RNG.integers(0, 256, (1, 6, 6, 8)).astype(np.uint8)
X3 = RNG.integers(0, 256, (1, 6, 6, 3)).astype(np.uint8)
D32 = [ConvertToDepth32(), RemoveUnnecessaryD32Converts(), RemoveDeadNodes()]


def after(b: QBuilder, passes=D32) -> QBuilder:
    out = copy.deepcopy(b)
    run_pipeline(out.g, list(passes))
    return out


def assert_same(before: QBuilder, after_: QBuilder, feeds: list) -> None:
    for a, c in zip(run_outputs(before.g, feeds, runs=2), run_outputs(after_.g, feeds, runs=2)):
        np.testing.assert_array_equal(a, c)


def ops(b: QBuilder) -> list[str]:
    return [n[0] for n in canonical(b.g)]


def pool_args(b: QBuilder) -> list[Ref]:
    return [b.g.shape_ref((1, 2, 2, 1)), b.g.shape_ref((1, 2, 2, 1))]


def test_supernode_and_pool_go_d32_between_one_pair_of_converts() -> None:
    b = QBuilder()
    x = b.input((1, 6, 6, 8))
    sn = b.supernode(x, W8, -math.inf, math.inf)
    b.output(q3(b.op("QuantizedMaxPool_8", [*q3(sn), *pool_args(b)], (1, 3, 3, 8), padding=NNPad.VALID, name="pool")))
    want = QBuilder()
    y = want.input((1, 6, 6, 8))
    to = want.op("Convert_to_d32", y[:1], (1, 6, 6, 8), "quint8_d32", n_out=1)
    wsn = want.supernode([Ref(to.node_id, 0), *y[1:]], W8, -math.inf, math.inf)
    wsn.op, wsn.output_defs[0] = "Supernode_8x8p32to8_d32", dataclasses.replace(wsn.output_defs[0], dtype="quint8_d32")
    wp = want.op("QuantizedMaxPool_8_d32", [*q3(wsn), *pool_args(want)], (1, 3, 3, 8), "quint8_d32",
                 padding=NNPad.VALID, name="pool")
    back = want.op("Convert_from_d32", [Ref(wp.node_id, 0)], (1, 3, 3, 8), n_out=1, name="pool/from_d32")
    want.output([Ref(back.node_id, 0), Ref(wp.node_id, 1), Ref(wp.node_id, 2)])
    got = after(b)
    assert canonical(got.g) == canonical(want.g)
    assert_same(b, got, [X8])


def test_shallow_input_uses_input_supernode_unless_channel_scales_or_odd_stride() -> None:
    def build(scale=None, stride: int = 1) -> QBuilder:
        b = QBuilder()
        x = b.input((1, 6, 6, 3))
        b.output(q3(b.supernode(x, W3, -1.0, 1.0, stride=stride, scale=scale)))
        return b
    plain = build()
    got = after(plain)
    assert ops(got) == ["INPUT", "InputSupernode_8x8p32to8_outd32", "Convert_from_d32", "OUTPUT"]
    assert_same(plain, got, [X3])
    scaled = build(scale=np.linspace(0.25, 1.0, 8))
    got = after(scaled)
    assert ops(got) == ["INPUT", "Convert_to_d32", "Supernode_8x8p32to8_d32", "Convert_from_d32", "OUTPUT"]
    assert_same(scaled, got, [X3])
    odd = build(stride=3)
    assert ops(after(odd)) == ops(odd)


def test_add_converts_only_with_a_d32_input_or_a_supported_broadcast() -> None:
    def build(b_shape: tuple, from_supernode: bool, values: np.ndarray | None = None) -> QBuilder:
        b = QBuilder()
        x = b.input((1, 6, 6, 8))
        a = q3(b.supernode(x, W8, -1.0, 1.0)) if from_supernode else x
        vals = RNG.integers(0, 256, b_shape) if values is None else values
        other = b.c(vals, np.uint8, vals.shape)
        b.output(q3(b.op("QuantizedAdd_8p8to8", [a[0], other, a[1], a[2], b.c(-1.0), b.c(1.0)], (1, 6, 6, 8),
                         name="add")))
        return b
    flat = build((1, 6, 6, 8), False)
    assert ops(after(flat)) == ops(flat)  # same shapes, no d32 input: stays flat
    b = build((1, 6, 6, 8), True)
    got = after(b)
    assert "QuantizedAdd_8p8to8_d32" in ops(got) and "QuantizedAdd_8p8to8" not in ops(got)
    assert_same(b, got, [X8])
    # a broadcast B: the d32 add (nnlib's op_add_d32.c broadcasts inside its loop) computes what the flat
    # same-shape add computes on B expanded - not the flat op's own broadcast path (qadd_888_hvx), which
    # the d32 node never runs (ops/kernels/d32_arith.py)
    vals = RNG.integers(0, 256, (1, 1, 1, 8))
    b = build((1, 1, 1, 8), False, vals)
    got = after(b)
    assert "QuantizedAdd_8p8to8_d32" in ops(got) and "QuantizedAdd_8p8to8" not in ops(got)
    assert_same(build((1, 6, 6, 8), False, np.broadcast_to(vals, (1, 6, 6, 8)).copy()), got, [X8])


def test_concat_converts_each_input_but_not_1x1() -> None:
    def build(hw: int) -> QBuilder:
        b = QBuilder()
        x = b.input((1, hw, hw, 8))
        s1 = b.supernode(x, W8, -1.0, 2.0, name="s1")
        s2 = b.supernode(x, W8[..., :4], -2.0, 1.0, name="s2")
        b.output(q3(b.op("QuantizedConcat_8", [b.c(3, np.int32), Ref(s1.node_id, 0), Ref(s2.node_id, 0),
                                               Ref(s1.node_id, 1), Ref(s2.node_id, 1), Ref(s1.node_id, 2),
                                               Ref(s2.node_id, 2)], (1, hw, hw, 12), name="cat")))
        return b
    b = build(6)
    got = after(b)
    assert ops(got) == ["INPUT", "Convert_to_d32", "Supernode_8x8p32to8_d32", "Supernode_8x8p32to8_d32",
                        "QuantizedConcat_8_d32", "Convert_from_d32", "OUTPUT"]  # one shared to_d32
    # the device's d32 concat (op_concat_d32.c) zero-fixes the merged range [-2, 2] (z = 127.5: max -> -2 + 510 / 127
    # = 2.0157) where op_concat.c keeps it, and truncates its gains: the codes move by up to 2 steps of 4 / 255
    for a, c in zip(run_outputs(b.g, [X8], runs=2), run_outputs(got.g, [X8], runs=2)):
        assert np.abs(a.astype(int) - c.astype(int)).max() <= 2
    one = build(1)
    assert "QuantizedConcat_8" in ops(after(one))


def test_tanh_converts_only_after_d32() -> None:
    b = QBuilder()
    x = b.input((1, 6, 6, 8))
    t1 = b.op("QuantizedTanh_8", x, (1, 6, 6, 8), name="flat_tanh")
    sn = b.supernode(q3(t1), W8, -1.0, 1.0)
    b.output(q3(b.op("QuantizedTanh_8", q3(sn), (1, 6, 6, 8), name="tanh")))
    got = after(b)
    assert ops(got) == ["INPUT", "QuantizedTanh_8", "Convert_to_d32", "Supernode_8x8p32to8_d32",
                        "QuantizedTanh_8_d32", "Convert_from_d32", "OUTPUT"]
    assert_same(b, got, [X8])


def test_remove_unnecessary_d32_converts() -> None:
    b = QBuilder()
    x = b.input((1, 6, 6, 8))
    to = b.op("Convert_to_d32", x[:1], (1, 6, 6, 8), "quint8_d32", n_out=1)
    back = b.op("Convert_from_d32", [Ref(to.node_id, 0)], (1, 6, 6, 8), n_out=1)
    again = b.op("Convert_to_d32", [Ref(back.node_id, 0)], (1, 6, 6, 8), "quint8_d32", n_out=1)
    p = b.op("QuantizedMaxPool_8_d32", [Ref(again.node_id, 0), x[1], x[2], *pool_args(b)], (1, 3, 3, 8),
             "quint8_d32", padding=NNPad.VALID)
    out = b.op("Convert_from_d32", [Ref(p.node_id, 0)], (1, 3, 3, 8), n_out=1)
    b.output([Ref(out.node_id, 0), Ref(p.node_id, 1), Ref(p.node_id, 2)])
    got = after(b, [RemoveUnnecessaryD32Converts(), RemoveDeadNodes()])
    assert ops(got) == ["INPUT", "Convert_to_d32", "QuantizedMaxPool_8_d32", "Convert_from_d32", "OUTPUT"]
    assert_same(b, got, [X8])


def test_concat_inputs_get_one_common_range() -> None:
    """Supernode_d32 ranges [-1, 2] and [-2, 1] -> both [-2, 2] (the widest ends), so the concat copies."""
    b = QBuilder()
    x = b.input((1, 6, 6, 8))
    s1 = b.supernode(x, W8, -1.0, 2.0, name="s1")
    s2 = b.supernode(x, W8[..., :4], -2.0, 1.0, name="s2")
    b.output(q3(b.op("QuantizedConcat_8", [b.c(3, np.int32), Ref(s1.node_id, 0), Ref(s2.node_id, 0),
                                           Ref(s1.node_id, 1), Ref(s2.node_id, 1), Ref(s1.node_id, 2),
                                           Ref(s2.node_id, 2)], (1, 6, 6, 12), name="cat")))
    d32 = after(b)
    got = after(d32, [RemoveConcatsWithPlacement(), RemoveDeadNodes()])
    sns = [n for n in canonical(got.g) if n[0] == "Supernode_8x8p32to8_d32"]
    assert [s[3][10:12] for s in sns] == [(("const", "<f4", (-2.0,), (1, 1, 1, 1)),
                                           ("const", "<f4", (2.0,), (1, 1, 1, 1)))] * 2
    q0, q1 = run_outputs(d32.g, [X8])[0], run_outputs(got.g, [X8])[0]
    # the d32 concat's output is on the zero-fixed [-2, 2.0157] (op_concat_d32.c), the placed supernodes' on [-2, 2]
    assert np.max(np.abs(q0.astype(int) - q1.astype(int))) <= 2
    assert canonical(after(got, [RemoveConcatsWithPlacement()]).g) == canonical(got.g)  # nothing left to do


def test_resize_bilinear_goes_d32_for_depth_above_2_or_a_width_not_a_power_of_2() -> None:
    # prepare.c depth32_replacement_op: output depth > 2, or an output width the flat op's fast path cannot take
    for depth, width, d32 in ((3, 8, True), (2, 8, False), (1, 6, True), (2, 12, True), (1, 16, False)):
        b = QBuilder()
        x = b.input((1, 4, width // 2, depth))
        size = b.c([8, width], np.int32, (1, 1, 1, 2))
        rz = b.op("QuantizedResizeBilinear_8", [x[0], size, *x[1:], b.c(0, np.int32)], (1, 8, width, depth),
                  name="resize")
        b.output(q3(rz))
        got = after(b)
        assert ("QuantizedResizeBilinear_8_d32" in ops(got)) == d32, (depth, width)
        feeds = [RNG.integers(0, 256, (1, 4, width // 2, depth)).astype(np.uint8)]
        # the d32 op follows its device code (op_resizebilinear_d32.c: the 2x asm's truncating averages), within
        # one code of the flat op's portable C (tests/ops/test_hvx_resize_d32.py)
        for a, c in zip(run_outputs(b.g, feeds, runs=2), run_outputs(got.g, feeds, runs=2)):
            assert np.abs(np.asarray(a, np.int64) - np.asarray(c, np.int64)).max() <= (1 if d32 else 0)
