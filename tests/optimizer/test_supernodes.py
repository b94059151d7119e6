"""mark_biasadd_nodes, make_reluX_nodes, make_supernodes: input graph -> expected graph, and engine
results before/after.

Where a fusion changes rounding (the supernode rounds once, SEMANTICS §5,
where conv -> bias add -> requantize rounds at each stage) the real output
values must agree within one step of the coarser of the two output ranges;
the 8-bit-bias form also drops the intermediate quint8 tensor, so half of
its step is added to that bound. mark_biasadd_nodes and make_reluX_nodes
change no arithmetic and must agree exactly.

The filter (and added operand) ranges hold 0 on a code, as every converter-made
range does (TFLite int8 ``[-128 s, 127 s]``, ONNX zero points): on a range like
``[-0.5, 0.5]`` (zero at 127.5) hexagon_nn's two graphs compute different functions
on the device too - the fused supernode takes the weight zero from
``get_qu8_level_size_zero`` (127: ``flt_div_255`` rounds the level up, so
``-min / level`` falls just below 127.5) while QuantizedConv2d_8x8to32 /
QuantizedMatMul_8x8to32 take ``quantize_int`` / ``quantize_uint8`` of 0 (128), one
filter code apart on every tap.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from hexnn_import.engine import Engine
from hexnn_import.graph import NNPad, Ref
from hexnn_import.optimizer import run_pipeline
from hexnn_import.optimizer.cleanup import RemoveDeadNodes
from hexnn_import.optimizer.supernodes import MakeReluXNodes, MakeSupernodes, MarkBiasaddNodes
from hexnn_import.testing.prepare_graphs import QBuilder, canonical, q3, real_outputs, run_outputs

RNG = np.random.default_rng(11)
MAX_1 = float(np.float32(-1.0 + 255.0 / 127.0))
X = RNG.integers(0, 256, (1, 5, 5, 3)).astype(np.uint8)
W = (128 + RNG.integers(-20, 21, (3, 3, 3, 4))).astype(np.uint8)
W_RANGE = (-0.5, 0.5 * 127 / 128)         # step 1/256, zero code 128 exactly (module doc)
ONE = (2.0 / 255.0 * 1.0 / 127.0)          # in_step * w_step of the conv below (approximately)
BIAS_RANGE = (-2.0 ** 31 * ONE, 2.0 ** 31 * ONE)
BIAS = np.array([[[[1500, -800, 0, 3000]]]], np.int32)


def after(b: QBuilder, *passes) -> QBuilder:
    out = copy.deepcopy(b)
    run_pipeline(out.g, [*passes, RemoveDeadNodes()])
    return out


def close_within(before: QBuilder, after_: QBuilder, feeds: list, extra: float = 0.0) -> None:
    (r0, s0), (r1, s1) = real_outputs(run_outputs(before.g, feeds)), real_outputs(run_outputs(after_.g, feeds))
    assert np.max(np.abs(r0 - r1)) <= max(s0, s1) * (1 + 1e-6) + extra


def conv_head(b: QBuilder, scale=None, op="QuantizedConv2d_8x8to32", w=W):
    x = b.input((1, 5, 5, 3), lo=-1.0, hi=MAX_1)
    conv = b.conv(x, w, W_RANGE, op=op)
    dout = conv.output_defs[0].shape[3]
    src = conv
    if scale is not None:
        src = b.op("QuantizedChannelScale_32xf", [Ref(conv.node_id, 0), b.c(scale), Ref(conv.node_id, 1),
                                                  Ref(conv.node_id, 2)], (1, 5, 5, dout), "qint32")
    bias = b.op("QuantizedBiasAdd_32p32to32", [Ref(src.node_id, 0), b.c(BIAS[..., :dout], np.int32),
                                               Ref(src.node_id, 1), Ref(src.node_id, 2), b.c(BIAS_RANGE[0]),
                                               b.c(BIAS_RANGE[1])], (1, 5, 5, dout), "qint32")
    return x, conv, bias


def expected_supernode(op: str, lo, hi, scale=None, w=W, conv_op="QuantizedConv2d_8x8to32", name="relu"):
    """The graph make_supernodes should leave: INPUT -> supernode -> OUTPUT."""
    b = QBuilder()
    x = b.input((1, 5, 5, 3), lo=-1.0, hi=MAX_1)
    conv = b.conv(x, w, W_RANGE, op=conv_op)
    dout = conv.output_defs[0].shape[3]
    ins = [*conv.inputs, b.c(BIAS[..., :dout], np.int32), b.c(BIAS_RANGE[0]), b.c(BIAS_RANGE[1]), b.c(lo), b.c(hi)]
    if scale is not None:
        ins.append(b.c(np.float32(scale).reshape(1, 1, 1, -1)))
    b.g.remove(conv)
    b.output(q3(b.op(op, ins, (1, 5, 5, dout), padding=NNPad.SAME, name=name)))
    return b


def test_conv_bias_requantize_relu_becomes_a_supernode() -> None:
    """Requantize_32to8 to [-3, 5] then Relu: the supernode's range is [0, 5] (Relu sets min 0)."""
    b = QBuilder()
    _, _, bias = conv_head(b)
    rq = b.op("Requantize_32to8", [*q3(bias), b.c(-3.0), b.c(5.0)], (1, 5, 5, 4), name="rq")
    b.output(q3(b.op("QuantizedRelu_8", q3(rq), (1, 5, 5, 4), name="relu")))
    got = after(b, MakeSupernodes())
    assert canonical(got.g) == canonical(expected_supernode("Supernode_8x8p32to8", 0.0, 5.0).g)
    outs = run_outputs(got.g, [X])
    assert (outs[1].item(), outs[2].item()) == (0.0, 5.0)
    close_within(b, got, [X])


def test_shrink_range_and_relu6() -> None:
    """QuantizeDownAndShrinkRange (auto range) then ReluX(6): range [0, 6]."""
    b = QBuilder()
    _, _, bias = conv_head(b)
    sh = b.op("QuantizeDownAndShrinkRange_32to8", q3(bias), (1, 5, 5, 4))
    b.output(q3(b.op("QuantizedReluX_8", [*q3(sh), b.c(6.0)], (1, 5, 5, 4), name="relu")))
    got = after(b, MakeSupernodes())
    assert canonical(got.g) == canonical(expected_supernode("Supernode_8x8p32to8", 0.0, 6.0).g)
    close_within(b, got, [X])


def test_channel_scale_and_auto_range_without_relu() -> None:
    """Conv -> ChannelScale -> BiasAdd -> QuantizeDownAndShrinkRange: auto range (-inf, +inf) and input 12."""
    k = [1.0, 0.5, 0.25, 0.75]
    b = QBuilder()
    _, _, bias = conv_head(b, scale=np.float32(k).reshape(1, 1, 1, 4))
    b.output(q3(b.op("QuantizeDownAndShrinkRange_32to8", q3(bias), (1, 5, 5, 4), name="shrink")))
    got = after(b, MakeSupernodes())
    want = expected_supernode("Supernode_8x8p32to8", -math.inf, math.inf, scale=k, name="shrink")
    assert canonical(got.g) == canonical(want.g)
    close_within(b, got, [X])


def test_scalar_channel_scale_is_taken_as_is() -> None:
    """prepare.c try_make_supernode_flavored appends the ChannelScale's scale ref unchanged (a [1,1,1,1]
    scale stays one value: the op's check, not the pass, decides about it)."""
    b = QBuilder()
    _, _, bias = conv_head(b, scale=np.float32(0.5))
    b.output(q3(b.op("QuantizeDownAndShrinkRange_32to8", q3(bias), (1, 5, 5, 4), name="shrink")))
    got = after(b, MakeSupernodes())
    want = expected_supernode("Supernode_8x8p32to8", -math.inf, math.inf, scale=[0.5], name="shrink")
    assert canonical(got.g) == canonical(want.g)


def test_bias8_chain_with_clamp() -> None:
    """Conv -> shrink -> BiasAdd_8p8to32 -> Requantize [-2, 2] -> Clamp [-1, 1.5] -> Supernode_8x8p8to8 [-1, 1.5]."""
    b = QBuilder()
    x = b.input((1, 5, 5, 3), lo=-1.0, hi=MAX_1)
    conv = b.conv(x, W, W_RANGE)
    q0 = b.op("QuantizeDownAndShrinkRange_32to8", q3(conv), (1, 5, 5, 4), name="q0")
    bias = b.c(np.uint8([[[[100, 200, 128, 0]]]]), np.uint8)
    ba = b.op("QuantizedBiasAdd_8p8to32", [Ref(q0.node_id, 0), bias, Ref(q0.node_id, 1), Ref(q0.node_id, 2),
                                           b.c(-1.0), b.c(1.0)], (1, 5, 5, 4), "qint32")
    rq = b.op("Requantize_32to8", [*q3(ba), b.c(-2.0), b.c(2.0)], (1, 5, 5, 4))
    b.output(q3(b.op("QuantizedClamp_8", [*q3(rq), b.c(-1.0), b.c(1.5)], (1, 5, 5, 4), name="clamp")))
    got = after(b, MakeSupernodes())
    ops = [n[0] for n in canonical(got.g)]
    assert ops == ["INPUT", "Supernode_8x8p8to8", "OUTPUT"]
    sn = canonical(got.g)[1]
    assert sn[1] == "clamp" and sn[3][10:] == (("const", "<f4", (-1.0,), (1, 1, 1, 1)),
                                               ("const", "<f4", (1.5,), (1, 1, 1, 1)))
    _, every = Engine(b.g).run([X], mark_all=True)
    s_q0 = (every[Ref(q0.node_id, 2)].item() - every[Ref(q0.node_id, 1)].item()) / 255
    close_within(b, got, [X], extra=0.5 * s_q0)


def dwise_chain(shape: tuple[int, int, int, int], scale=None) -> QBuilder:
    """INPUT -> depthwise conv with a ``shape`` filter [-> ChannelScale] -> BiasAdd -> shrink -> OUTPUT."""
    b = QBuilder()
    _, _, bias = conv_head(b, scale=scale, op="QuantizedDepthwiseConv2d_8x8to32",
                           w=(128 + RNG.integers(-20, 21, shape)).astype(np.uint8))
    dout = bias.output_defs[0].shape[3]
    b.output(q3(b.op("QuantizeDownAndShrinkRange_32to8", q3(bias), (1, 5, 5, dout), name="shrink")))
    return b


def test_depthwise_under_the_device_conditions() -> None:
    w = (128 + RNG.integers(-20, 21, (3, 3, 3, 1))).astype(np.uint8)  # 3x3, multiplier 1
    b = QBuilder()
    _, _, bias = conv_head(b, op="QuantizedDepthwiseConv2d_8x8to32", w=w)
    b.output(q3(b.op("QuantizeDownAndShrinkRange_32to8", q3(bias), (1, 5, 5, 3), name="shrink")))
    got = after(b, MakeSupernodes())
    want = expected_supernode("DepthwiseSupernode_8x8p32to8", -math.inf, math.inf, w=w,
                              conv_op="QuantizedDepthwiseConv2d_8x8to32", name="shrink")
    assert canonical(got.g) == canonical(want.g)
    close_within(b, got, [X])


@pytest.mark.parametrize("shape, fused", [((5, 5, 3, 1), True), ((7, 7, 3, 1), True), ((2, 3, 3, 1), True),
                                          ((3, 4, 3, 1), False), ((1, 3, 3, 1), False), ((3, 3, 3, 2), False)])
def test_depthwise_filter_shapes(shape: tuple[int, int, int, int], fused: bool) -> None:
    """prepare.c dwconv_extrachecks: filter height >= 2, width 3, 5 or 7, depth multiplier 1."""
    b = dwise_chain(shape)
    ops = [n[0] for n in canonical(after(b, MakeSupernodes()).g)]
    assert ("DepthwiseSupernode_8x8p32to8" in ops) == fused
    assert ("QuantizedDepthwiseConv2d_8x8to32" in ops) == (not fused)


def test_depthwise_channel_scale_becomes_input_12() -> None:
    """ReplaceConv_DwiseSuperNode has allow_channelscale = 1: the scales become the 13th input."""
    k = [1.0, 0.5, 0.25]
    b = dwise_chain((3, 3, 3, 1), scale=np.float32(k).reshape(1, 1, 1, 3))
    got = after(b, MakeSupernodes())
    (_, (op, name, _, ins, _), _) = canonical(got.g)
    assert (op, name, len(ins)) == ("DepthwiseSupernode_8x8p32to8", "shrink", 13)
    assert ins[12] == ("const", "<f4", tuple(k), (1, 1, 1, 3))


def test_matmul_becomes_a_1x1_supernode() -> None:
    a = RNG.integers(0, 256, (1, 1, 4, 8)).astype(np.uint8)
    wb = (128 + RNG.integers(-30, 31, (1, 1, 8, 6))).astype(np.uint8)
    b = QBuilder()
    x = b.input((1, 1, 4, 8), lo=-1.0, hi=MAX_1)
    mm = b.op("QuantizedMatMul_8x8to32", [x[0], b.c(wb, np.uint8), x[1], x[2], b.c(W_RANGE[0]), b.c(W_RANGE[1])],
              (1, 1, 4, 6), "qint32")
    ba = b.op("QuantizedBiasAdd_32p32to32", [Ref(mm.node_id, 0), b.c(np.arange(6) * 500 - 1000, np.int32),
                                             Ref(mm.node_id, 1), Ref(mm.node_id, 2), b.c(-1.0), b.c(1.0)],
              (1, 1, 4, 6), "qint32")
    rq = b.op("Requantize_32to8", [*q3(ba), b.c(-4.0), b.c(4.0)], (1, 1, 4, 6), name="fc")
    b.output(q3(rq))
    got = after(b, MakeSupernodes())
    ((_, _, _, _, _), (op, name, pad, ins, _), _) = canonical(got.g)
    assert (op, name, pad) == ("Supernode_8x8p32to8", "fc", int(NNPad.VALID))
    assert ins[6] == ("const", "|u1", (0,), (1, 1, 1, 1))  # stride 1x1 (a shape tensor)
    close_within(b, got, [a])


def test_quantized_add_requantize_relu_becomes_add_8p8to8() -> None:
    b = QBuilder()
    x = b.input((1, 2, 3, 4), lo=-1.0, hi=MAX_1)
    y = b.c(RNG.integers(0, 256, (1, 2, 3, 4)), np.uint8)
    add = b.op("QuantizedAdd_8p8to32", [x[0], y, x[1], x[2], b.c(-2.0), b.c(2.0 * 127 / 128)], (1, 2, 3, 4), "qint32")
    rq = b.op("Requantize_32to8", [*q3(add), b.c(-2.0), b.c(2.0)], (1, 2, 3, 4))
    b.output(q3(b.op("QuantizedRelu_8", q3(rq), (1, 2, 3, 4), name="relu")))
    got = after(b, MakeSupernodes())
    (_, (op, name, _, ins, _), _) = canonical(got.g)
    assert (op, name) == ("QuantizedAdd_8p8to8", "relu")
    assert ins[6:] == (("const", "<f4", (0.0,), (1, 1, 1, 1)), ("const", "<f4", (2.0,), (1, 1, 1, 1)))
    close_within(b, got, [RNG.integers(0, 256, (1, 2, 3, 4)).astype(np.uint8)])


def test_no_fusion_when_an_intermediate_has_other_readers() -> None:
    b = QBuilder()
    _, conv, bias = conv_head(b)
    rq = b.op("Requantize_32to8", [*q3(bias), b.c(-3.0), b.c(5.0)], (1, 5, 5, 4))
    b.output([*q3(rq), Ref(conv.node_id, 0)])  # the conv result is also a graph output
    assert canonical(after(b, MakeSupernodes()).g) == canonical(b.g)


@pytest.mark.parametrize("clamp", [(0.5, 2.0), (-1.0, -0.5)])
def test_a_clamp_that_excludes_zero_stays_outside(clamp: tuple[float, float]) -> None:
    b = QBuilder()
    _, _, bias = conv_head(b)
    rq = b.op("Requantize_32to8", [*q3(bias), b.c(-3.0), b.c(5.0)], (1, 5, 5, 4), name="rq")
    b.output(q3(b.op("QuantizedClamp_8", [*q3(rq), b.c(clamp[0]), b.c(clamp[1])], (1, 5, 5, 4), name="clamp")))
    ops = [(n[0], n[1]) for n in canonical(after(b, MakeSupernodes()).g)]
    assert ops == [("INPUT", "in"), ("Supernode_8x8p32to8", "rq"), ("QuantizedClamp_8", "clamp"), ("OUTPUT", "out")]


def test_mark_biasadd_nodes() -> None:
    def graph(op: str, bias_shape: tuple) -> QBuilder:
        b = QBuilder()
        x = b.input((1, 2, 2, 3))
        bias = b.c(np.arange(3 if bias_shape[-1] == 3 else 1) * 60 + 10, np.uint8, bias_shape)
        b.output(q3(b.op(op, [x[0], bias, x[1], x[2], b.c(-1.0), b.c(1.0)], (1, 2, 2, 3), "qint32", name="add")))
        return b
    got = after(graph("QuantizedAdd_8p8to32", (1, 1, 1, 3)), MarkBiasaddNodes())
    assert canonical(got.g) == canonical(graph("QuantizedBiasAdd_8p8to32", (1, 1, 1, 3)).g)
    # prepare.c makes the same rewrite although, in nnlib, the two ops compute differently: Add_8p8to32
    # (op_addsubmul_8to32.c: gains 0x7F80 in the ratio of the steps, zero codes from get_qu8_level_size_zero,
    # 127 on [-1, 1]) and BiasAdd_8p8to32 (op_biasadd.c: quantize_uint of 0, 128). Input and bias are both on
    # [-1, 1] here, so their real results differ by up to one step of each (2/255 + 2/255: the zero codes),
    # plus each result's own rounding (one qint32 code of each)
    feeds = [RNG.integers(0, 256, (1, 2, 2, 3)).astype(np.uint8)]
    (qa, mna, mxa), (qc, mnc, mxc) = (run_outputs(g, feeds) for g in (graph("QuantizedAdd_8p8to32", (1, 1, 1, 3)).g,
                                                                       got.g))
    real_a = qa.astype(np.float64) * (float(mxa.ravel()[0]) - float(mna.ravel()[0])) / 2.0 ** 32
    real_c = qc.astype(np.float64) * (float(mxc.ravel()[0]) - float(mnc.ravel()[0])) / 2.0 ** 32
    codes = sum((float(mx.ravel()[0]) - float(mn.ravel()[0])) / 2.0 ** 32 for mn, mx in ((mna, mxa), (mnc, mxc)))
    assert np.max(np.abs(real_a - real_c)) <= 4.0 / 255 + codes
    scalar = graph("QuantizedAdd_8p8to32", (1, 1, 1, 1))  # a scalar B stays an add
    assert canonical(after(scalar, MarkBiasaddNodes()).g) == canonical(scalar.g)


def relu_after_requantize(lo: float, hi: float) -> QBuilder:
    b = QBuilder()
    x = b.input((1, 2, 2, 3), "qint32", -4.0, 4.0)
    rq = b.op("Requantize_32to8", [*x, b.c(lo), b.c(hi)], (1, 2, 2, 3), name="rq")
    b.output(q3(b.op("QuantizedRelu_8", q3(rq), (1, 2, 2, 3), name="relu")))
    return b


def test_make_relux_nodes_only_where_exact() -> None:
    """[0, 6]: no zero fix, quantize(6) = 255 -> ReluX(6). [-1, 1]: max grows to 1.0078740 (step 1/127),
    quantize(1) = round_away(2 * 127) = 254 < 255 -> left alone (ReluX would clip code 255)."""
    b = relu_after_requantize(0.0, 6.0)
    got = after(b, MakeReluXNodes())
    ops = [(n[0], n[1], n[3][3:]) for n in canonical(got.g)]
    assert ops[2] == ("QuantizedReluX_8", "relu", (("const", "<f4", (6.0,), (1, 1, 1, 1)),))
    feeds = [np.int32([[[[-2 ** 31, -5, 0], [7, 2 ** 30, 2 ** 31 - 1]], [[1, 2, 3], [-4, 5, -6]]]])]
    for a, c in zip(run_outputs(b.g, feeds), run_outputs(got.g, feeds)):
        np.testing.assert_array_equal(a, c)
    b2 = relu_after_requantize(-1.0, 1.0)
    assert canonical(after(b2, MakeReluXNodes()).g) == canonical(b2.g)


def test_a_requantize_range_without_zero_is_zero_fixed_first() -> None:
    """Requantize_32to8 to [1, 5] works on adjust_range(1, 5) = [0, 5]; a supernode needs a range
    holding 0, so the fused node gets [0.0, 5.0] (Consts), not the refs to 1 and 5."""
    b = QBuilder()
    _, _, bias = conv_head(b)
    b.output(q3(b.op("Requantize_32to8", [*q3(bias), b.c(1.0), b.c(5.0)], (1, 5, 5, 4), name="relu")))
    got = after(b, MakeSupernodes())
    assert canonical(got.g) == canonical(expected_supernode("Supernode_8x8p32to8", 0.0, 5.0).g)
    close_within(b, got, [X])


# ---- the importers' declared chains (fuse_declared: the same fusion, called at the end of an import) ----
def declared(b: QBuilder, convs: list) -> QBuilder:
    from hexnn_import.optimizer.supernodes import fuse_declared

    out = copy.deepcopy(b)
    fuse_declared(out.g, [out.g.node(c.node_id) for c in convs])
    out.g.verify()
    return out


def test_declared_chain_fuses_any_depthwise_window_and_leaves_the_relu() -> None:
    """A 1x3 depthwise window fails prepare.c's dwconv_extrachecks (make_supernodes leaves it, above), but a
    quantized source fixes the layer as one rounding: the importer's declared chain becomes a
    DepthwiseSupernode all the same, computing what the chain computes to within one output step, and the
    Relu after it stays (the layer's own range decides that)."""
    w = (128 + RNG.integers(-20, 21, (1, 3, 3, 1))).astype(np.uint8)
    b = QBuilder()
    _, conv, bias = conv_head(b, op="QuantizedDepthwiseConv2d_8x8to32", w=w)
    rq = b.op("Requantize_32to8", [*q3(bias), b.c(-3.0), b.c(5.0)], (1, 5, 5, 3), name="layer")
    b.output(q3(b.op("QuantizedRelu_8", q3(rq), (1, 5, 5, 3), name="relu")))
    got = declared(b, [conv])
    ops = [(n[0], n[1]) for n in canonical(got.g)]
    assert ("DepthwiseSupernode_8x8p32to8", "layer") in ops and ("QuantizedRelu_8", "relu") in ops
    assert not any(op in ("QuantizedDepthwiseConv2d_8x8to32", "Requantize_32to8") for op, _ in ops)
    close_within(b, got, [X])
    assert "DepthwiseSupernode_8x8p32to8" not in [n[0] for n in canonical(after(b, MakeSupernodes()).g)]


def test_a_declared_chain_that_does_not_match_names_the_node() -> None:
    """An importer that declares a product whose chain is not one (here the conv has a second reader) gets
    the project's GraphError naming the node, not a silently unfused layer."""
    from hexnn_import.errors import GraphError

    b = QBuilder()
    _, conv, bias = conv_head(b)
    rq = b.op("Requantize_32to8", [*q3(bias), b.c(-3.0), b.c(5.0)], (1, 5, 5, 4), name="layer")
    b.output([*q3(rq), Ref(conv.node_id, 0)])
    with pytest.raises(GraphError, match=f"node {conv.label} .*declared"):
        declared(b, [conv])
